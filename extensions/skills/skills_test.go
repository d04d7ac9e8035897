package skills_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/extensions/skills"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

func pdfSkill() skills.Skill {
	return skills.Skill{
		Name:        "pdf-processing",
		Description: "Extract, fill, and assemble PDF documents",
		Metadata:    map[string]string{"version": "1.0", "note": "a: b"},
		Body:        "# PDF\n\nRead references/FORMS.md for forms.\n",
		Files: []skills.File{
			{Path: "references/FORMS.md", Text: "# Forms\n"},
			{Path: "logo.bin", Data: []byte{0, 1, 2}},
		},
	}
}

const wantSkillMD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  note: \"a: b\"\n  version: \"1.0\"\n---\n# PDF\n\nRead references/FORMS.md for forms.\n"

func server(t *testing.T, opts skills.Options) *hexmcp.Server {
	t.Helper()
	ext, err := skills.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return hexmcptest.NewServer(t, hexmcp.Options{ResourceRegistry: memory.NewResourceRegistry(), Extensions: []app.Extension{ext}})
}

type fileEntry struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

type entry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []fileEntry    `json:"resources"`
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestSkillsEveryRevision(t *testing.T) {
	srv := server(t, skills.Options{Skills: []skills.Skill{pdfSkill()}})
	hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
		ctx := context.Background()
		var list struct {
			Skills     []entry `json:"skills"`
			NextCursor string  `json:"nextCursor"`
			TTLMs      *int    `json:"ttlMs"`
			CacheScope string  `json:"cacheScope"`
		}
		if err := c.Call(ctx, "skills/list", nil, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Skills) != 1 || list.NextCursor != "" {
			t.Fatalf("skills/list = %+v", list)
		}
		if stateless := c.Features().Caching; stateless != (list.TTLMs != nil && list.CacheScope != "") {
			t.Errorf("caching attributes %v/%q in a revision whose Caching is %v", list.TTLMs, list.CacheScope, stateless)
		}
		e := list.Skills[0]
		if e.URI != "skill://pdf-processing/SKILL.md" || e.Frontmatter["name"] != "pdf-processing" ||
			e.Frontmatter["description"] != "Extract, fill, and assemble PDF documents" {
			t.Errorf("entry = %+v", e)
		}
		want := []fileEntry{
			{"skill://pdf-processing/SKILL.md", digest([]byte(wantSkillMD)), len(wantSkillMD)},
			{"skill://pdf-processing/references/FORMS.md", digest([]byte("# Forms\n")), 8},
			{"skill://pdf-processing/logo.bin", digest([]byte{0, 1, 2}), 3},
		}
		if len(e.Resources) != len(want) {
			t.Fatalf("resources = %+v", e.Resources)
		}
		for i := range want {
			if e.Resources[i] != want[i] {
				t.Errorf("resources[%d] = %+v, want %+v", i, e.Resources[i], want[i])
			}
		}

		// The files are resources; SKILL.md is named and described from
		// its frontmatter.
		read, err := c.ReadResource(ctx, "skill://pdf-processing/SKILL.md")
		if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != wantSkillMD || read.Contents[0].MimeType != "text/markdown" {
			t.Fatalf("read SKILL.md = %+v, %v", read, err)
		}
		listed, err := client.Collect(c.ListResources(ctx))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range listed {
			if r.URI == e.URI {
				found = r.Name == "pdf-processing" && r.Description == "Extract, fill, and assemble PDF documents" && r.MimeType == "text/markdown"
			}
		}
		if !found {
			t.Errorf("SKILL.md not listed as wanted: %+v", listed)
		}

		var got struct {
			Skill      entry  `json:"skill"`
			NextCursor string `json:"nextCursor"`
		}
		if err := c.Call(ctx, "skills/get", map[string]any{"uri": e.URI}, &got); err != nil || got.Skill.URI != e.URI || len(got.Skill.Resources) != 3 {
			t.Errorf("skills/get = %+v, %v", got, err)
		}
		expectInvalid(t, c.Call(ctx, "skills/get", map[string]any{"uri": "skill://nope/SKILL.md"}, nil))
		expectInvalid(t, c.Call(ctx, "skills/get", nil, nil))
		expectInvalid(t, c.Call(ctx, "skills/get", map[string]any{"uri": 3}, nil))

		var dir struct {
			Resources []struct {
				URI, Name, MimeType string
			} `json:"resources"`
		}
		if err := c.Call(ctx, "resources/directory/read", map[string]any{"uri": "skill://pdf-processing"}, &dir); err != nil {
			t.Fatal(err)
		}
		var kids []string
		for _, r := range dir.Resources {
			kids = append(kids, r.URI+" "+r.MimeType)
		}
		if strings.Join(kids, "; ") != "skill://pdf-processing/SKILL.md text/markdown; skill://pdf-processing/logo.bin application/octet-stream; skill://pdf-processing/references inode/directory" {
			t.Errorf("directory = %v", kids)
		}
		if err := c.Call(ctx, "resources/directory/read", map[string]any{"uri": "skill://pdf-processing/references"}, &dir); err != nil || len(dir.Resources) != 1 || dir.Resources[0].URI != "skill://pdf-processing/references/FORMS.md" {
			t.Errorf("references = %+v, %v", dir, err)
		}
		expectInvalid(t, c.Call(ctx, "resources/directory/read", map[string]any{"uri": "skill://pdf-processing/SKILL.md"}, nil))
		expectInvalid(t, c.Call(ctx, "resources/directory/read", map[string]any{"uri": "skill://pdf-processing", "cursor": "x"}, nil))
	})
}

func expectInvalid(t *testing.T, err error) {
	t.Helper()
	var re *client.RPCError
	if !errors.As(err, &re) || re.Code != domain.CodeInvalidParams {
		t.Errorf("error = %v, want -32602", err)
	}
}

func TestSkillsListPages(t *testing.T) {
	var many []skills.Skill
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		many = append(many, skills.Skill{Name: "skill-" + n, Description: "Skill " + n})
	}
	srv := server(t, skills.Options{Skills: many, PageSize: 2})
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{})
	var names []string
	cursor := ""
	for range 10 {
		var page struct {
			Skills     []entry `json:"skills"`
			NextCursor string  `json:"nextCursor"`
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if err := c.Call(context.Background(), "skills/list", params, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Skills) > 2 {
			t.Fatalf("page of %d skills, PageSize 2", len(page.Skills))
		}
		for _, e := range page.Skills {
			names = append(names, e.Frontmatter["name"].(string))
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if got := strings.Join(names, ","); got != "skill-a,skill-b,skill-c,skill-d,skill-e" {
		t.Errorf("skills over the pages = %s", got)
	}
	expectInvalid(t, c.Call(context.Background(), "skills/list", map[string]any{"cursor": "99"}, nil))
}

func TestNewRefuses(t *testing.T) {
	big := make([]skills.File, skills.MaxFilesPerSkill)
	for i := range big {
		big[i] = skills.File{Path: "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + strings.Repeat("y", 1+i/26)}
	}
	for name, s := range map[string]skills.Skill{
		"upper-case name":          {Name: "PDF", Description: "d"},
		"double hyphen":            {Name: "a--b", Description: "d"},
		"leading hyphen":           {Name: "-a", Description: "d"},
		"long name":                {Name: strings.Repeat("a", 65), Description: "d"},
		"no description":           {Name: "a"},
		"long description":         {Name: "a", Description: strings.Repeat("d", skills.MaxDescriptionLength+1)},
		"long compatibility":       {Name: "a", Description: "d", Compatibility: strings.Repeat("c", skills.MaxCompatibilityLength+1)},
		"reserved metadata":        {Name: "a", Description: "d", Metadata: map[string]string{"io.modelcontextprotocol/x": "1"}},
		"empty metadata key":       {Name: "a", Description: "d", Metadata: map[string]string{"": "1"}},
		"metadata key not UTF-8":   {Name: "a", Description: "d", Metadata: map[string]string{"\xff": "1"}},
		"metadata value not UTF-8": {Name: "a", Description: "d", Metadata: map[string]string{"k": "\xff"}},
		"dot-dot path":             {Name: "a", Description: "d", Files: []skills.File{{Path: "../x"}}},
		"absolute path":            {Name: "a", Description: "d", Files: []skills.File{{Path: "/x"}}},
		"SKILL.md file":            {Name: "a", Description: "d", Files: []skills.File{{Path: "SKILL.md"}}},
		"duplicate file":           {Name: "a", Description: "d", Files: []skills.File{{Path: "x"}, {Path: "x"}}},
		"file and dir":             {Name: "a", Description: "d", Files: []skills.File{{Path: "x"}, {Path: "x/y"}}},
		"not UTF-8":                {Name: "a", Description: "d", Files: []skills.File{{Path: "x", Text: "\xff"}}},
		"too many files":           {Name: "a", Description: "d", Files: big},
		"too many bytes":           {Name: "a", Description: "d", Files: []skills.File{{Path: "x", Data: make([]byte, skills.MaxSkillBytes)}}},
	} {
		if _, err := skills.New(skills.Options{Skills: []skills.Skill{s}}); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := skills.New(skills.Options{Skills: []skills.Skill{{Name: "a", Description: "d"}, {Name: "a", Description: "e"}}}); err == nil {
		t.Error("New accepted two skills of one name")
	}
	if _, err := skills.New(skills.Options{Skills: []skills.Skill{{Name: "a", Description: "d", Files: big[:skills.MaxFilesPerSkill-1]}}}); err != nil {
		t.Errorf("New refused a skill at MaxFilesPerSkill: %v", err)
	}
	// The description's bound is in characters: as many two-byte ones
	// as it allows pass.
	if _, err := skills.New(skills.Options{Skills: []skills.Skill{{Name: "a", Description: strings.Repeat("é", skills.MaxDescriptionLength)}}}); err != nil {
		t.Errorf("New refused a description of MaxDescriptionLength characters: %v", err)
	}
	if _, err := skills.New(skills.Options{Skills: []skills.Skill{{Name: "a", Description: "d", Compatibility: strings.Repeat("é", skills.MaxCompatibilityLength)}}}); err != nil {
		t.Errorf("New refused a compatibility of 500 characters (the Agent Skills bound): %v", err)
	}
}

// TestFrontmatterFields: a skill's entry carries compatibility (and its
// other optional fields) when it has one, and not otherwise; a directory
// read without a uri is invalid params.
func TestFrontmatterFields(t *testing.T) {
	with := skills.Skill{Name: "with", Description: "d", Compatibility: "Python 3.12", License: "MIT"}
	srv := server(t, skills.Options{Skills: []skills.Skill{with, {Name: "without", Description: "d"}}})
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{})
	var list struct {
		Skills []entry `json:"skills"`
	}
	if err := c.Call(context.Background(), "skills/list", map[string]any{}, &list); err != nil || len(list.Skills) != 2 {
		t.Fatalf("skills/list: %+v, %v", list, err)
	}

	for _, e := range list.Skills {
		_, has := e.Frontmatter["compatibility"]
		if want := e.Frontmatter["name"] == "with"; has != want || want && e.Frontmatter["compatibility"] != "Python 3.12" {
			t.Errorf("frontmatter of %v: %v", e.Frontmatter["name"], e.Frontmatter)
		}
	}
	expectInvalid(t, c.Call(context.Background(), "resources/directory/read", map[string]any{}, nil))
}

// A directory's entries give each file's size, an empty file's as 0, and
// no size for a subdirectory.
func TestDirectorySizes(t *testing.T) {
	s := skills.Skill{Name: "sizes", Description: "d", Files: []skills.File{{Path: "a.txt", Text: "abc"}, {Path: "empty.txt"}, {Path: "sub/b.txt", Text: "b"}}}
	c := hexmcptest.Connect(t, server(t, skills.Options{Skills: []skills.Skill{s}}), hexmcptest.ClientOptions{})
	var dir struct {
		Resources []struct {
			URI  string `json:"uri"`
			Size *int   `json:"size"`
		} `json:"resources"`
	}
	if err := c.Call(context.Background(), "resources/directory/read", map[string]any{"uri": "skill://sizes"}, &dir); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range dir.Resources {
		size := "none"
		if r.Size != nil {
			size = fmt.Sprint(*r.Size)
		}
		if !strings.HasSuffix(r.URI, "SKILL.md") {
			got = append(got, strings.TrimPrefix(r.URI, "skill://sizes/")+" "+size)
		}
	}
	if want := "a.txt 3; empty.txt 0; sub none"; strings.Join(got, "; ") != want {
		t.Fatalf("entries %q, want %q", strings.Join(got, "; "), want)
	}
}

// A skill of exactly MaxSkillBytes, SKILL.md included, is accepted; one
// byte more is refused.
func TestSkillBytesBoundary(t *testing.T) {
	base := skills.Skill{Name: "a", Description: "d"}
	c := hexmcptest.Connect(t, server(t, skills.Options{Skills: []skills.Skill{base}}), hexmcptest.ClientOptions{})
	var dir struct {
		Resources []struct {
			URI  string `json:"uri"`
			Size int    `json:"size"`
		} `json:"resources"`
	}
	if err := c.Call(context.Background(), "resources/directory/read", map[string]any{"uri": "skill://a"}, &dir); err != nil || len(dir.Resources) != 1 {
		t.Fatalf("directory read: %+v, %v", dir, err)
	}
	md := dir.Resources[0].Size
	at, past := base, base
	at.Files = []skills.File{{Path: "x", Data: make([]byte, skills.MaxSkillBytes-md)}}
	past.Files = []skills.File{{Path: "x", Data: make([]byte, skills.MaxSkillBytes-md+1)}}
	if _, err := skills.New(skills.Options{Skills: []skills.Skill{at}}); err != nil {
		t.Errorf("a skill of MaxSkillBytes was refused: %v", err)
	}
	if _, err := skills.New(skills.Options{Skills: []skills.Skill{past}}); err == nil {
		t.Error("a skill of MaxSkillBytes+1 was accepted")
	}
}

// The bounds of SEP-2640 (files per skill, bytes per skill) are as
// documented.
func TestBoundsAsDocumented(t *testing.T) {
	if skills.MaxFilesPerSkill != 512 || skills.MaxSkillBytes != 16<<20 {
		t.Fatalf("MaxFilesPerSkill %d, MaxSkillBytes %d; the documented bounds are 512 and 16 MiB", skills.MaxFilesPerSkill, skills.MaxSkillBytes)
	}
}

// params are optional for skills/list: a handshake-era request without
// any is served.
func TestListWithoutParams(t *testing.T) {
	srv := server(t, skills.Options{Skills: []skills.Skill{{Name: "a", Description: "d"}}})
	hs := httptest.NewServer(srv.HTTPHandler(mcphttp.Options{}))
	t.Cleanup(hs.Close)
	post := func(body, session string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/skills":{}}},"clientInfo":{"name":"c","version":"1"}}}`, "")
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d, no session", resp.StatusCode)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
	body, _ := io.ReadAll(post(`{"jsonrpc":"2.0","id":2,"method":"skills/list"}`, sid).Body)
	if !strings.Contains(string(body), `"skill://a/SKILL.md"`) || strings.Contains(string(body), `"error"`) {
		t.Fatalf("skills/list without params: %s", body)
	}
}

func TestCapability(t *testing.T) {
	ext, err := skills.New(skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ext.ID != skills.ID || ext.Settings["directoryRead"] != true {
		t.Errorf("extension = %s %v", ext.ID, ext.Settings)
	}
}
