// Package apps serves MCP Apps: the io.modelcontextprotocol/ui extension
// (SEP-1865, stable 2026-01-26), interactive user interfaces that a host
// renders for a tool, in a sandboxed iframe, from an HTML resource of the
// server.
//
// A View is an HTML document served as a resource at a ui:// URI with the
// MIME type text/html;profile=mcp-app; a tool points at it with
// [WithView], which sets the tool's _meta.ui.resourceUri:
//
//	ext, err := apps.New(apps.Options{Views: []apps.View{{
//		URI:  "ui://weather/dashboard.html",
//		Name: "Weather dashboard",
//		HTML: dashboardHTML, // or FS and Path: an embed.FS file
//		CSP:  &apps.CSP{ConnectDomains: []string{"https://api.example.com"}},
//	}}})
//	weather := hexmcp.NewTool(getWeather, apps.WithView("ui://weather/dashboard.html"))
//	srv, err := hexmcp.New(hexmcp.Options{..., Tools: ..., Extensions: []hexmcp.Extension{ext}})
//
// The server then advertises capabilities.extensions
// ["io.modelcontextprotocol/ui"] = {"mimeTypes": ["text/html;profile=mcp-app"]}
// in both eras (the initialize result and server/discover; with the
// resources capability, which the views need: Options.ResourceRegistry must
// be set), lists every view with resources/list and serves it with
// resources/read. The view's security and rendering settings (CSP,
// permissions, domain, prefersBorder) are sent as _meta.ui both on the
// listed resource and on the read contents, where the host looks first.
//
// A View talks to the host, not to the server: JSON-RPC over postMessage,
// through the ext-apps App API (@modelcontextprotocol/ext-apps). When it
// calls a tool, the host proxies tools/call to the server; for the server
// it is an ordinary call. The host receives the tool's result too: a tool
// with a view still returns text content, which is what a client that does
// not render views (or did not declare the extension: [ClientSupports])
// shows, and structured content for the view to render.
//
// Everything is built once by New and immutable afterwards.
package apps

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// ID is the extension's identifier.
const ID = "io.modelcontextprotocol/ui"

// MimeType is the MIME type of a View's HTML (the spec's
// RESOURCE_MIME_TYPE), the one type the extension's settings list.
const MimeType = "text/html;profile=mcp-app"

// scheme is the URI scheme of a View.
const scheme = "ui"

// LegacyResourceURIKey is the flat _meta key of the first drafts
// (_meta["ui/resourceUri"]), deprecated by the spec for _meta.ui.resourceUri
// but still read by older hosts: [WithView] sets both, as the reference
// server helpers do.
const LegacyResourceURIKey = "ui/resourceUri"

// MaxViewBytes bounds the HTML of one View (4 MiB): a host reads it whole
// into an iframe, and a view needing more should load it from a declared
// resource domain ([CSP.ResourceDomains]). New refuses a larger one.
const MaxViewBytes = 4 << 20

// Visibility says who may call a tool that has a View (the _meta.ui
// visibility array). The host enforces it: it keeps a tool whose visibility
// lacks [VisibilityModel] out of the model's tool list, and refuses a
// view's tools/call of a tool whose visibility lacks [VisibilityApp].
type Visibility string

const (
	// VisibilityModel: the model may see and call the tool.
	VisibilityModel Visibility = "model"
	// VisibilityApp: the views of this server may call the tool.
	VisibilityApp Visibility = "app"
)

// CSP lists the origins a View needs beyond its own document; the host
// builds the iframe's Content Security Policy from them and allows nothing
// else (no lists: no network, no external scripts, no nested frames).
// Each entry is an origin, scheme://host[:port] (http, https, ws or wss),
// whose host may start with a "*." wildcard label: "https://*.example.com".
type CSP struct {
	// ConnectDomains are the origins of fetch, XHR and WebSocket
	// (connect-src).
	ConnectDomains []string
	// ResourceDomains are the origins of scripts, styles, images, fonts
	// and media (script-src, style-src, img-src, font-src, media-src).
	ResourceDomains []string
	// FrameDomains are the origins of nested iframes (frame-src).
	FrameDomains []string
	// BaseURIDomains are the origins allowed as the document's base URI
	// (base-uri).
	BaseURIDomains []string
}

// Permissions are the browser capabilities a View asks for (the iframe's
// allow attribute). A host may refuse them; a view should detect features
// rather than assume them.
type Permissions struct {
	Camera, Microphone, Geolocation, ClipboardWrite bool
}

// View is one UI resource: an HTML5 document a host renders in a sandboxed
// iframe.
type View struct {
	// URI is the view's resource URI, ui://… ("ui://weather/dashboard.html").
	URI string
	// Name is the resource's name (required); Title and Description are
	// optional.
	Name, Title, Description string
	// HTML is the document, UTF-8. When FS is set, the document is the
	// file Path of FS instead (an embed.FS, os.DirFS), read once by New.
	HTML string
	FS   fs.FS
	Path string
	// CSP lists the origins the view needs (nil: none, the host's
	// restrictive default).
	CSP *CSP
	// Permissions are the browser capabilities the view asks for.
	Permissions Permissions
	// Domain asks the host for a dedicated sandbox origin; its format is
	// the host's ("" lets the host choose).
	Domain string
	// PrefersBorder asks for a visible border and background (true) or
	// none (false); nil leaves it to the host.
	PrefersBorder *bool
}

// Options configure [New].
type Options struct {
	// Views are the views served, listed in this order.
	Views []View
}

// New builds the extension that serves opts.Views. A view that breaks a
// rule of [View] or [CSP], or [MaxViewBytes], is an error naming it.
func New(opts Options) (app.Extension, error) {
	seen := make(map[string]bool, len(opts.Views))
	resources := make([]hexmcp.Resource, 0, len(opts.Views))
	for _, v := range opts.Views {
		if seen[v.URI] {
			return app.Extension{}, fmt.Errorf("hexmcp: apps: view %q is declared twice", v.URI)
		}
		seen[v.URI] = true
		r, err := resource(v)
		if err != nil {
			return app.Extension{}, err
		}
		resources = append(resources, r)
	}
	return app.Extension{
		ID:        ID,
		Settings:  map[string]any{"mimeTypes": []string{MimeType}},
		Resources: resources,
	}, nil
}

// resource checks a view and declares its resource.
func resource(v View) (hexmcp.Resource, error) {
	if err := checkURI(v.URI); err != nil {
		return hexmcp.Resource{}, fmt.Errorf("hexmcp: apps: view %q: %w", v.URI, err)
	}
	if strings.TrimSpace(v.Name) == "" {
		return hexmcp.Resource{}, fmt.Errorf("hexmcp: apps: view %q has no name", v.URI)
	}
	html, err := document(v)
	if err != nil {
		return hexmcp.Resource{}, fmt.Errorf("hexmcp: apps: view %q: %w", v.URI, err)
	}
	meta, err := uiMeta(v)
	if err != nil {
		return hexmcp.Resource{}, fmt.Errorf("hexmcp: apps: view %q: %w", v.URI, err)
	}
	opts := []hexmcp.ResourceOption{hexmcp.WithMimeType(MimeType)}
	if v.Title != "" {
		opts = append(opts, hexmcp.WithTitle(v.Title))
	}
	if v.Description != "" {
		opts = append(opts, hexmcp.WithDescription(v.Description))
	}
	var contentMeta map[string]any
	if len(meta) > 0 {
		opts = append(opts, hexmcp.WithMeta(map[string]any{"ui": meta}))
		contentMeta = map[string]any{"ui": meta}
	}
	uri := v.URI
	read := func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) {
		return []domain.ResourceContents{{URI: uri, MimeType: MimeType, Text: html, Meta: contentMeta}}, nil
	}
	return hexmcp.NewResource(uri, v.Name, read, opts...), nil
}

// checkURI applies the rule of [View.URI].
func checkURI(uri string) error {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return fmt.Errorf("the URI does not parse: %w", err)
	case u.Scheme != scheme || !strings.HasPrefix(uri, scheme+"://"):
		return fmt.Errorf("the URI must use the %s:// scheme", scheme)
	case u.Host == "" && strings.Trim(u.Path, "/") == "":
		return fmt.Errorf("the URI names nothing after %s://", scheme)
	}
	return nil
}

// document returns the view's HTML: HTML, or the file Path of FS.
func document(v View) (string, error) {
	html := v.HTML
	if v.FS != nil {
		if v.HTML != "" {
			return "", fmt.Errorf("both HTML and FS are set")
		}
		f, err := v.FS.Open(v.Path)
		if err != nil {
			return "", fmt.Errorf("reading the HTML: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, MaxViewBytes+1))
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", v.Path, err)
		}
		html = string(b)
	} else if v.Path != "" {
		return "", fmt.Errorf("Path %q is set without FS", v.Path)
	}
	switch {
	case len(html) > MaxViewBytes:
		return "", fmt.Errorf("the HTML is larger than MaxViewBytes (%d bytes)", MaxViewBytes)
	case strings.TrimSpace(html) == "":
		return "", fmt.Errorf("the HTML is empty")
	case !utf8.ValidString(html):
		return "", fmt.Errorf("the HTML is not UTF-8")
	}
	return html, nil
}

// uiMeta builds the view's _meta.ui object (empty: nothing to say).
func uiMeta(v View) (map[string]any, error) {
	meta := map[string]any{}
	if v.CSP != nil {
		csp := map[string]any{}
		for _, d := range []struct {
			key     string
			origins []string
		}{
			{"connectDomains", v.CSP.ConnectDomains},
			{"resourceDomains", v.CSP.ResourceDomains},
			{"frameDomains", v.CSP.FrameDomains},
			{"baseUriDomains", v.CSP.BaseURIDomains},
		} {
			if len(d.origins) == 0 {
				continue
			}
			for _, o := range d.origins {
				if err := checkOrigin(o); err != nil {
					return nil, fmt.Errorf("CSP %s: %q: %w", d.key, o, err)
				}
			}
			csp[d.key] = append([]string(nil), d.origins...)
		}
		if len(csp) > 0 {
			meta["csp"] = csp
		}
	}
	perms := map[string]any{}
	for _, p := range []struct {
		key string
		on  bool
	}{
		{"camera", v.Permissions.Camera},
		{"microphone", v.Permissions.Microphone},
		{"geolocation", v.Permissions.Geolocation},
		{"clipboardWrite", v.Permissions.ClipboardWrite},
	} {
		if p.on {
			perms[p.key] = map[string]any{}
		}
	}
	if len(perms) > 0 {
		meta["permissions"] = perms
	}
	if v.Domain != "" {
		if strings.ContainsAny(v.Domain, " \t\r\n;,'\"") {
			return nil, fmt.Errorf("domain %q: no spaces, quotes, commas or semicolons", v.Domain)
		}
		meta["domain"] = v.Domain
	}
	if v.PrefersBorder != nil {
		meta["prefersBorder"] = *v.PrefersBorder
	}
	return meta, nil
}

// checkOrigin applies the rule of a [CSP] entry: an origin the host can
// put in a CSP source list as it is, nothing that could add a directive.
func checkOrigin(o string) error {
	if strings.ContainsAny(o, " \t\r\n;,'\"") {
		return fmt.Errorf("an origin has no spaces, quotes, commas or semicolons")
	}
	scheme, rest, ok := strings.Cut(o, "://")
	switch scheme {
	case "http", "https", "ws", "wss":
	default:
		return fmt.Errorf("the scheme must be http, https, ws or wss")
	}
	host := strings.TrimPrefix(rest, "*.")
	if !ok || host == "" || strings.ContainsAny(host, "/?#@*") {
		return fmt.Errorf("want scheme://host[:port], no path, query or credentials")
	}
	if _, err := url.Parse(scheme + "://" + host); err != nil {
		return fmt.Errorf("the origin does not parse: %w", err)
	}
	return nil
}

// WithView points a tool at the View at uri: it sets the tool's
// _meta.ui.resourceUri, and the deprecated flat _meta["ui/resourceUri"]
// that older hosts read, and _meta.ui.visibility when visibility is given
// (values other than VisibilityModel and VisibilityApp are left out;
// without any, the host's default is both). The URI should be that of a
// view of the extension; the tool and its view are registered separately.
//
// It is an [hexmcp.WithMeta] of the "ui" and "ui/resourceUri" members: a
// later WithMeta of "ui" replaces it. _meta on tools exists from protocol
// revision 2025-06-18; older clients see a plain tool.
func WithView(uri string, visibility ...Visibility) hexmcp.ToolOption {
	ui := map[string]any{"resourceUri": uri}
	var vis []string
	for _, want := range []Visibility{VisibilityModel, VisibilityApp} {
		for _, v := range visibility {
			if v == want {
				vis = append(vis, string(v))
				break
			}
		}
	}
	if len(vis) > 0 {
		ui["visibility"] = vis
	}
	return hexmcp.WithMeta(map[string]any{"ui": ui, LegacyResourceURIKey: uri})
}

// ClientSupports reports whether the client of the request declared the
// extension with the HTML view type: capabilities.extensions
// ["io.modelcontextprotocol/ui"].mimeTypes holds [MimeType] (from
// initialize in the handshake era, from the request's _meta in the
// stateless one). A tool may word its text content for a client without
// views; it is false outside a request.
func ClientSupports(rc *app.RequestContext) bool {
	if rc == nil {
		return false
	}
	var caps struct {
		Extensions map[string]struct {
			MimeTypes []string `json:"mimeTypes"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(rc.ClientCapabilities(), &caps); err != nil {
		return false
	}
	for _, t := range caps.Extensions[ID].MimeTypes {
		if t == MimeType {
			return true
		}
	}
	return false
}
