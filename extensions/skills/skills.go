// Package skills serves Agent Skills over MCP: the Skills extension,
// io.modelcontextprotocol/skills (SEP-2640).
//
// A skill is a SKILL.md (YAML frontmatter, then Markdown instructions) and
// the files beside it, declared in Go:
//
//	ext, err := skills.New(skills.Options{Skills: []skills.Skill{{
//		Name:        "release-notes",
//		Description: "Write release notes from a list of merged changes",
//		Body:        "# Release notes\n\nGroup the changes by ...\n",
//		Files:       []skills.File{{Path: "references/STYLE.md", Text: "..."}},
//	}}})
//	srv, err := hexmcp.New(hexmcp.Options{..., Extensions: []hexmcp.Extension{ext}})
//
// The server then advertises capabilities.extensions
// ["io.modelcontextprotocol/skills"] = {"directoryRead": true} (with the
// resources capability, which the extension needs: Options.ResourceRegistry
// must be set) and serves:
//
//   - every file as a resource at skill://<name>/<path>: SKILL.md as
//     text/markdown, named and described from its frontmatter, the others
//     with their MIME type (read with resources/read, listed by
//     resources/list);
//   - skills/list: one entry per skill, {uri, frontmatter, resources}, where
//     resources lists every file of the skill with its sha256 digest and
//     size in bytes, SKILL.md included (paginated, an entry never split);
//   - skills/get {uri}: the entry of the skill whose SKILL.md is uri, and
//     -32602 for any other URI;
//   - resources/directory/read {uri}: the direct children of a skill
//     directory (skill://<name>, skill://<name>/references, …), the
//     subdirectories with mimeType inode/directory; -32602 for a URI that
//     is not a served directory.
//
// Results carry ttlMs and cacheScope in 2026-07-28 (Options.ListTTL of the
// engine). Everything is built once by New and immutable afterwards.
package skills

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/decl"
)

// ID is the extension's identifier.
const ID = "io.modelcontextprotocol/skills"

// Bounds of a skill and of the pages. New refuses a skill beyond them (the
// first two are the SHOULD NOT limits of SEP-2640; the lengths those of the
// Agent Skills specification).
const (
	// MaxFilesPerSkill bounds the files of one skill, SKILL.md included.
	MaxFilesPerSkill = 512
	// MaxSkillBytes bounds the summed size of the files of one skill
	// (16 MiB).
	MaxSkillBytes = 16 << 20
	// MaxDescriptionLength bounds Skill.Description, in characters.
	maxDescriptionLength = 1024
	// maxCompatibilityLength bounds Skill.Compatibility, in characters.
	maxCompatibilityLength = 500
	// defaultPageSize is the default of Options.PageSize.
	defaultPageSize = 50
)

// directoryMimeType is the MIME type of a directory in the results of
// resources/directory/read.
const directoryMimeType = "inode/directory"

// Skill is one skill: its SKILL.md is the frontmatter made from the fields
// below, then Body.
type Skill struct {
	// Name is the skill's name: 1-64 characters of lowercase letters,
	// digits and hyphens, no leading, trailing or doubled hyphen. It is
	// the skill's directory: skill://<Name>/SKILL.md.
	Name string
	// Description says what the skill does and when to use it (required,
	// at most MaxDescriptionLength characters).
	Description string
	// License, Compatibility and AllowedTools are the optional
	// frontmatter fields license, compatibility (at most 500 characters)
	// and allowed-tools.
	License, Compatibility, AllowedTools string
	// Metadata is the optional frontmatter metadata map. Keys prefixed
	// io.modelcontextprotocol/ are reserved for MCP extensions and
	// refused.
	Metadata map[string]string
	// Body is the Markdown after the frontmatter.
	Body string
	// Files are the skill's other files.
	Files []File
}

// File is a file of a skill other than its SKILL.md.
type File struct {
	// Path is the file's path inside the skill directory, with '/'
	// separators ("references/FORMS.md"): segments of letters, digits, '.',
	// '_' and '-', none of them "." or "..", and not SKILL.md itself.
	Path string
	// Text is the file's content, UTF-8; Data, when not nil, is binary
	// content instead (sent base64-encoded).
	Text string
	Data []byte
	// MimeType is the file's type (default: from the extension of Path,
	// text/markdown for .md, text/plain for other text and
	// application/octet-stream for other data).
	MimeType string
}

// Options configure [New].
type Options struct {
	// Skills are the skills served, listed in this order.
	Skills []Skill
	// PageSize is the number of skills per page of skills/list and of
	// entries per page of resources/directory/read (default 50).
	PageSize int
}

// entry is a skill entry of skills/list and skills/get.
type entry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []fileEntry    `json:"resources"`
}

// fileEntry is one file of an entry's resources.
type fileEntry struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// child is one entry of a resources/directory/read result.
type child struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     *int   `json:"size,omitempty"`
}

// catalog is what New builds: the entries, the directories, the pages.
type catalog struct {
	entries  []entry
	byURI    map[string]*entry
	dirs     map[string][]child
	pageSize int
}

var nameRule = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)
var segmentRule = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// New builds the extension that serves opts.Skills. A skill that breaks a
// rule of [Skill] or [File], or a bound of this package, is an error
// naming it.
func New(opts Options) (app.Extension, error) {
	c := &catalog{
		byURI:    make(map[string]*entry, len(opts.Skills)),
		dirs:     make(map[string][]child),
		pageSize: cmp.Or(max(opts.PageSize, 0), defaultPageSize),
	}
	var resources []decl.Resource
	c.entries = make([]entry, 0, len(opts.Skills))
	for _, s := range opts.Skills {
		res, err := c.add(s)
		if err != nil {
			return app.Extension{}, err
		}
		resources = append(resources, res...)
	}
	for i := range c.entries {
		c.byURI[c.entries[i].URI] = &c.entries[i]
	}
	for _, kids := range c.dirs {
		slices.SortFunc(kids, func(a, b child) int { return strings.Compare(a.URI, b.URI) })
	}
	return app.Extension{
		ID:       ID,
		Settings: map[string]any{"directoryRead": true},
		Methods: []app.ExtensionMethod{
			{Name: "skills/list", Cacheable: true, Serve: c.list},
			{Name: "skills/get", Cacheable: true, Serve: c.get},
			{Name: "resources/directory/read", Serve: c.readDir},
		},
		Resources: resources,
	}, nil
}

// add checks one skill and adds its entry, directories and resources.
func (c *catalog) add(s Skill) ([]decl.Resource, error) {
	if err := check(s); err != nil {
		return nil, err
	}
	root := "skill://" + s.Name
	skillURI := root + "/SKILL.md"
	if _, dup := c.dirs[root]; dup {
		return nil, fmt.Errorf("hexmcp: skills: skill %q is declared twice", s.Name)
	}
	c.dirs[root] = []child{}
	fm := frontmatter(s)
	md := renderSkillMD(s)
	e := entry{URI: skillURI, Frontmatter: fm}
	e.Resources = append(e.Resources, digestOf(skillURI, []byte(md)))
	resources := []decl.Resource{decl.TextResource(skillURI, s.Name, md,
		decl.WithMimeType("text/markdown"), decl.WithDescription(s.Description))}
	c.addChild(root, skillURI, "SKILL.md", "text/markdown", len(md))
	total := len(md)
	seen := map[string]bool{"SKILL.md": true}
	for _, f := range s.Files {
		if err := checkPath(f.Path); err != nil {
			return nil, fmt.Errorf("hexmcp: skills: skill %q: file %q: %w", s.Name, f.Path, err)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("hexmcp: skills: skill %q: file %q is declared twice (or clashes with SKILL.md)", s.Name, f.Path)
		}
		seen[f.Path] = true
		uri := root + "/" + f.Path
		data, blob := f.Data, f.Data != nil
		if !blob {
			if !utf8.ValidString(f.Text) {
				return nil, fmt.Errorf("hexmcp: skills: skill %q: file %q: Text is not UTF-8 (use Data for binary content)", s.Name, f.Path)
			}
			data = []byte(f.Text)
		}
		mt := f.MimeType
		if mt == "" {
			mt = guessType(f.Path, blob)
		}
		total += len(data)
		e.Resources = append(e.Resources, digestOf(uri, data))
		if blob {
			resources = append(resources, decl.BlobResource(uri, f.Path, data, decl.WithMimeType(mt)))
		} else {
			resources = append(resources, decl.TextResource(uri, f.Path, f.Text, decl.WithMimeType(mt)))
		}
		// The directories on the way, then the file.
		dir, rel := root, ""
		segs := strings.Split(f.Path, "/")
		for _, seg := range segs[:len(segs)-1] {
			rel = path.Join(rel, seg)
			sub := root + "/" + rel
			if _, ok := c.dirs[sub]; !ok {
				c.dirs[sub] = []child{}
				c.addChild(dir, sub, seg, directoryMimeType, -1)
			}
			dir = sub
		}
		c.addChild(dir, uri, segs[len(segs)-1], mt, len(data))
	}
	if len(e.Resources) > MaxFilesPerSkill {
		return nil, fmt.Errorf("hexmcp: skills: skill %q has %d files, more than MaxFilesPerSkill (%d)", s.Name, len(e.Resources), MaxFilesPerSkill)
	}
	if total > MaxSkillBytes {
		return nil, fmt.Errorf("hexmcp: skills: skill %q has %d bytes of files, more than MaxSkillBytes (%d)", s.Name, total, MaxSkillBytes)
	}
	if clash := seenPaths(seen); clash != "" {
		return nil, fmt.Errorf("hexmcp: skills: skill %q: %s", s.Name, clash)
	}
	c.entries = append(c.entries, e)
	return resources, nil
}

// seenPaths reports a path that is both a file and a directory.
func seenPaths(files map[string]bool) string {
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if files[d] {
				return fmt.Sprintf("%q is both a file and a directory", d)
			}
		}
	}
	return ""
}

func (c *catalog) addChild(dir, uri, name, mimeType string, size int) {
	ch := child{URI: uri, Name: name, MimeType: mimeType}
	if size >= 0 {
		ch.Size = &size
	}
	c.dirs[dir] = append(c.dirs[dir], ch)
}

// check applies the rules of [Skill].
func check(s Skill) error {
	switch {
	case !nameRule.MatchString(s.Name) || strings.Contains(s.Name, "--"):
		return fmt.Errorf("hexmcp: skills: skill name %q: 1-64 lowercase letters, digits and hyphens, no leading, trailing or doubled hyphen", s.Name)
	case strings.TrimSpace(s.Description) == "":
		return fmt.Errorf("hexmcp: skills: skill %q has no description", s.Name)
	case utf8.RuneCountInString(s.Description) > maxDescriptionLength:
		return fmt.Errorf("hexmcp: skills: skill %q: the description is longer than %d characters", s.Name, maxDescriptionLength)
	case utf8.RuneCountInString(s.Compatibility) > maxCompatibilityLength:
		return fmt.Errorf("hexmcp: skills: skill %q: compatibility is longer than %d characters", s.Name, maxCompatibilityLength)
	case !utf8.ValidString(s.Body + s.Description + s.License + s.Compatibility + s.AllowedTools):
		return fmt.Errorf("hexmcp: skills: skill %q: a field is not UTF-8", s.Name)
	}
	for k, v := range s.Metadata {
		switch {
		case k == "" || !utf8.ValidString(k) || !utf8.ValidString(v):
			return fmt.Errorf("hexmcp: skills: skill %q: metadata key %q: empty or not UTF-8", s.Name, k)
		case strings.HasPrefix(k, "io.modelcontextprotocol/"):
			return fmt.Errorf("hexmcp: skills: skill %q: metadata key %q: the io.modelcontextprotocol/ prefix is reserved for MCP extensions", s.Name, k)
		}
	}
	return nil
}

// checkPath applies the rules of [File.Path].
func checkPath(p string) error {
	if p == "" || p == "SKILL.md" {
		return fmt.Errorf("the path must name a file other than SKILL.md")
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." || !segmentRule.MatchString(seg) {
			return fmt.Errorf("segment %q: letters, digits, '.', '_' and '-' only, not . or ..", seg)
		}
	}
	return nil
}

// guessType is a file's default MIME type.
func guessType(p string, blob bool) string {
	ext := path.Ext(p)
	switch ext {
	case ".md", ".markdown":
		return "text/markdown"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	if blob {
		return "application/octet-stream"
	}
	return "text/plain"
}

func digestOf(uri string, data []byte) fileEntry {
	sum := sha256.Sum256(data)
	return fileEntry{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(data)}
}

// frontmatter is the entry's frontmatter: the same fields, with the same
// values, as the YAML of the SKILL.md (renderSkillMD).
func frontmatter(s Skill) map[string]any {
	fm := map[string]any{"name": s.Name, "description": s.Description}
	if s.License != "" {
		fm["license"] = s.License
	}
	if s.Compatibility != "" {
		fm["compatibility"] = s.Compatibility
	}
	if s.AllowedTools != "" {
		fm["allowed-tools"] = s.AllowedTools
	}
	if len(s.Metadata) > 0 {
		md := make(map[string]any, len(s.Metadata))
		for k, v := range s.Metadata {
			md[k] = v
		}
		fm["metadata"] = md
	}
	return fm
}

// renderSkillMD writes the SKILL.md: the frontmatter between --- lines,
// then the body.
func renderSkillMD(s Skill) string {
	var b strings.Builder
	b.WriteString("---\n")
	field := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + yamlString(v) + "\n")
		}
	}
	field("name", s.Name)
	field("description", s.Description)
	field("license", s.License)
	field("compatibility", s.Compatibility)
	field("allowed-tools", s.AllowedTools)
	if len(s.Metadata) > 0 {
		b.WriteString("metadata:\n")
		keys := make([]string, 0, len(s.Metadata))
		for k := range s.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b.WriteString("  " + yamlString(k) + ": " + yamlString(s.Metadata[k]) + "\n")
		}
	}
	b.WriteString("---\n")
	b.WriteString(s.Body)
	return b.String()
}

var plainRule = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 ,.;()'/_+-]*[A-Za-z0-9.)]$|^[A-Za-z]$`)

// yamlString writes v as a YAML scalar that reads back as the string v: a
// plain scalar when that is unambiguous, else a double-quoted one (JSON's
// string escapes are YAML's).
func yamlString(v string) string {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf":
	default:
		if plainRule.MatchString(v) && !strings.Contains(v, "  ") {
			return v
		}
	}
	b, err := json.Marshal(v)
	if err != nil { // a valid UTF-8 string always encodes
		return strconv.Quote(v)
	}
	return string(b)
}

// uriParams are the params of the three methods.
type uriParams struct {
	URI    *string `json:"uri"`
	Cursor *string `json:"cursor"`
}

func decodeParams(req app.ExtensionRequest, needURI bool) (uriParams, error) {
	var p uriParams
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return p, app.InvalidParams("params of " + req.Method + ": uri and cursor must be strings")
		}
	}
	if needURI && (p.URI == nil || *p.URI == "") {
		return p, app.InvalidParams(req.Method + " needs a uri")
	}
	return p, nil
}

// page returns the range of a page of n items from cursor (an offset
// written in decimal, "" for the first page), and the next cursor.
func (c *catalog) page(method string, cursor *string, n int) (from, to int, next string, err error) {
	if cursor != nil {
		from, err = strconv.Atoi(*cursor)
		if err != nil || from < 0 || from > n || strconv.Itoa(from) != *cursor {
			return 0, 0, "", app.InvalidParams(method + ": unknown cursor")
		}
	}
	to = min(from+c.pageSize, n)
	if to < n {
		next = strconv.Itoa(to)
	}
	return from, to, next, nil
}

// list answers skills/list.
func (c *catalog) list(_ context.Context, req app.ExtensionRequest) (any, error) {
	p, err := decodeParams(req, false)
	if err != nil {
		return nil, err
	}
	from, to, next, err := c.page(req.Method, p.Cursor, len(c.entries))
	if err != nil {
		return nil, err
	}
	return struct {
		Skills     []entry `json:"skills"`
		NextCursor string  `json:"nextCursor,omitempty"`
	}{c.entries[from:to], next}, nil
}

// get answers skills/get.
func (c *catalog) get(_ context.Context, req app.ExtensionRequest) (any, error) {
	p, err := decodeParams(req, true)
	if err != nil {
		return nil, err
	}
	e, ok := c.byURI[*p.URI]
	if !ok {
		return nil, app.InvalidParams("no skill is served at " + *p.URI)
	}
	return struct {
		Skill *entry `json:"skill"`
	}{e}, nil
}

// readDir answers resources/directory/read.
func (c *catalog) readDir(_ context.Context, req app.ExtensionRequest) (any, error) {
	p, err := decodeParams(req, true)
	if err != nil {
		return nil, err
	}
	kids, ok := c.dirs[strings.TrimSuffix(*p.URI, "/")]
	if !ok {
		return nil, app.InvalidParams(*p.URI + " is not a served directory")
	}
	from, to, next, err := c.page(req.Method, p.Cursor, len(kids))
	if err != nil {
		return nil, err
	}
	return struct {
		Resources  []child `json:"resources"`
		NextCursor string  `json:"nextCursor,omitempty"`
	}{kids[from:to], next}, nil
}
