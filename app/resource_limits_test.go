package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// rpcReply is a JSON-RPC response as the limit tests look at it.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func decodeReply(t *testing.T, raw string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return r
}

// request encodes a JSON-RPC request with params.
func request(id int, method string, params map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

func itemTemplate() hexmcp.Resource {
	return hexmcp.NewResourceTemplate("x://items/{id}", "item", func(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
		return []domain.ResourceContents{{Text: vars["id"]}}, nil
	})
}

// subscribeTo subscribes c to uri and returns the reply.
func subscribeTo(t *testing.T, c *client, id int, uri string) rpcReply {
	t.Helper()
	return decodeReply(t, c.roundTrip(request(id, "resources/subscribe", map[string]any{"uri": uri})))
}

func wantOK(t *testing.T, r rpcReply, what string) {
	t.Helper()
	if r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("%s: %+v %s", what, r.Error, r.Result)
	}
}

func wantError(t *testing.T, r rpcReply, code int, what string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("%s: got %+v %s, want error %d", what, r.Error, r.Result, code)
	}
}

// TestSubscribeOnlyResolvableURIs: resources/subscribe takes a registered
// resource or a URI a template matches; anything else is answered like
// resources/read of it (resource not found, -32002 at 2025-11-25) and is
// not kept; unsubscribing needs no lookup.
func TestSubscribeOnlyResolvableURIs(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, hexmcp.TextResource("x://a", "a", "one"), itemTemplate())
	c := serve(t, e)
	c.initialize("2025-11-25")
	wantOK(t, subscribeTo(t, c, 1, "x://a"), "registered resource")
	wantOK(t, subscribeTo(t, c, 2, "x://items/7"), "template match")
	for i, uri := range []string{"x://unknown", "hostile://unknown/1", "x://items/", "x://items/a/b", "x://items/..%2Fa"} {
		r := subscribeTo(t, c, 10+i, uri)
		wantError(t, r, domain.CodeResourceNotFound, uri)
		if r.Error.Data["uri"] != uri {
			t.Fatalf("%s: data %v", uri, r.Error.Data)
		}
	}
	if n := e.NotifyResourceUpdated("x://unknown"); n != 0 {
		t.Fatalf("a refused subscription was kept: %d told", n)
	}
	if n := e.NotifyResourceUpdated("x://items/7"); n != 1 {
		t.Fatalf("template subscription: %d told", n)
	}
	c.recv()
	wantOK(t, decodeReply(t, c.roundTrip(request(20, "resources/unsubscribe", map[string]any{"uri": "x://never-subscribed"}))), "unsubscribe unknown")
	// A resource removed after the subscription can still be unsubscribed.
	e.RemoveResource("x://a")
	c.recv() // list_changed
	wantOK(t, decodeReply(t, c.roundTrip(request(21, "resources/unsubscribe", map[string]any{"uri": "x://a"}))), "unsubscribe removed")
	if n := e.NotifyResourceUpdated("x://a"); n != 0 {
		t.Fatalf("after unsubscribe: %d told", n)
	}
}

// TestSubscribeCountLimit: past MaxSubscriptions a subscription is -32602
// naming the limit; a URI already subscribed to counts once and
// re-subscribing to it succeeds at the limit; unsubscribing frees a place.
func TestSubscribeCountLimit(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New(), MaxSubscriptions: 3}, itemTemplate())
	c := serve(t, e)
	c.initialize("2025-11-25")
	for i := range 3 {
		wantOK(t, subscribeTo(t, c, i+1, fmt.Sprintf("x://items/%d", i)), "under the limit")
	}
	wantOK(t, subscribeTo(t, c, 4, "x://items/1"), "again, at the limit")
	r := subscribeTo(t, c, 5, "x://items/3")
	wantError(t, r, domain.CodeInvalidParams, "past the limit")
	if r.Error.Data["limit"] != "maxSubscriptions" || r.Error.Data["max"] != 3.0 || !strings.Contains(r.Error.Message, "3") || !strings.Contains(r.Error.Message, "subscriptions") {
		t.Fatalf("error does not name the limit: %+v", r.Error)
	}
	if n := e.NotifyResourceUpdated("x://items/3"); n != 0 {
		t.Fatal("the refused subscription was kept")
	}
	wantOK(t, decodeReply(t, c.roundTrip(request(6, "resources/unsubscribe", map[string]any{"uri": "x://items/0"}))), "unsubscribe")
	wantOK(t, subscribeTo(t, c, 7, "x://items/3"), "after unsubscribing")
	// The session keeps serving.
	equalJSON(t, c.roundTrip(ping), pingResp)
	// Another session has its own count.
	other := serve(t, e)
	other.initialize("2025-11-25")
	wantOK(t, subscribeTo(t, other, 1, "x://items/9"), "other session")
}

// TestSubscribeByteLimit: the subscribed URIs of a session total at most
// MaxSubscriptionBytes.
func TestSubscribeByteLimit(t *testing.T) {
	e := resourceEngine(t, app.Options{Validator: jsonschema.New(), MaxSubscriptionBytes: 100}, itemTemplate())
	c := serve(t, e)
	c.initialize("2025-11-25")
	long := func(n int, fill string) string { // a URI of n bytes
		return "x://items/" + strings.Repeat(fill, n-len("x://items/"))
	}
	wantOK(t, subscribeTo(t, c, 1, long(60, "a")), "60 bytes")
	wantOK(t, subscribeTo(t, c, 2, long(40, "b")), "100 bytes in all")
	r := subscribeTo(t, c, 3, long(11, "c"))
	wantError(t, r, domain.CodeInvalidParams, "past the byte limit")
	if r.Error.Data["limit"] != "maxSubscriptionBytes" || r.Error.Data["max"] != 100.0 {
		t.Fatalf("error does not name the limit: %+v", r.Error)
	}
	wantOK(t, subscribeTo(t, c, 4, long(60, "a")), "again, at the limit")
	wantOK(t, decodeReply(t, c.roundTrip(request(5, "resources/unsubscribe", map[string]any{"uri": long(40, "b")}))), "unsubscribe")
	wantOK(t, subscribeTo(t, c, 6, long(11, "c")), "after unsubscribing")
}

// TestURILengthLimit: by default a URI over 2048 bytes is -32602 naming the
// limit, for resources/read, subscribe and unsubscribe alike; a negative
// MaxURILength lifts the bound; AddResource refuses a URI no client could
// send.
func TestURILengthLimit(t *testing.T) {
	var got []string
	tmpl := hexmcp.NewResourceTemplate("x://items/{id}", "item", func(_ context.Context, uri string, vars map[string]string) ([]domain.ResourceContents, error) {
		got = append(got, uri)
		return []domain.ResourceContents{{Text: "ok"}}, nil
	})
	uriOf := func(n int) string { return "x://items/" + strings.Repeat("y", n-len("x://items/")) }
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, tmpl)
	c := serve(t, e)
	c.initialize("2025-11-25")
	if r := decodeReply(t, c.roundTrip(request(1, "resources/read", map[string]any{"uri": uriOf(app.DefaultMaxURILength)}))); r.Error != nil {
		t.Fatalf("read at the limit: %+v", r.Error)
	}
	wantOK(t, subscribeTo(t, c, 2, uriOf(app.DefaultMaxURILength)), "subscribe at the limit")
	for i, method := range []string{"resources/read", "resources/subscribe", "resources/unsubscribe"} {
		for _, n := range []int{app.DefaultMaxURILength + 1, 4 << 20} {
			r := decodeReply(t, c.roundTrip(request(10+i, method, map[string]any{"uri": uriOf(n)})))
			wantError(t, r, domain.CodeInvalidParams, fmt.Sprintf("%s of %d bytes", method, n))
			if r.Error.Data["limit"] != "maxURILength" || r.Error.Data["max"] != float64(app.DefaultMaxURILength) || !strings.Contains(r.Error.Message, "2048") {
				t.Fatalf("error does not name the limit: %+v", r.Error)
			}
			if len(r.Error.Message) > 200 || r.Error.Data["uri"] != nil {
				t.Fatalf("the error echoes the URI: %.200s", r.Error.Message)
			}
		}
	}
	if len(got) != 1 {
		t.Fatalf("handler ran %d times, want once (only within the limit)", len(got))
	}
	// The stateless era too.
	r := decodeReply(t, c.roundTrip(`{"jsonrpc":"2.0","id":30,"method":"resources/read","params":{"uri":"`+uriOf(3000)+`",`+meta2026+`}}`))
	wantError(t, r, domain.CodeInvalidParams, "stateless read")
	if r.Error.Data["limit"] != "maxURILength" {
		t.Fatalf("stateless: %+v", r.Error)
	}

	// completion/complete's ref.uri (a URI template) too.
	withCompleter := serve(t, resourceEngine(t, app.Options{Validator: jsonschema.New()}, hexmcp.NewResourceTemplate("x://c/{id}", "c",
		func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil },
		hexmcp.WithTemplateCompleter("id", func(context.Context, string, map[string]string) ([]string, error) { return []string{"1"}, nil }))))
	withCompleter.initialize("2025-11-25")
	complete := func(uri string) rpcReply {
		return decodeReply(t, withCompleter.roundTrip(request(40, "completion/complete", map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": uri}, "argument": map[string]any{"name": "id", "value": ""}})))
	}
	if r := complete("x://c/{id}"); r.Error != nil {
		t.Fatalf("completion: %+v", r.Error)
	}
	if r := complete("x://c/{id}" + strings.Repeat("z", 3000)); r.Error == nil || r.Error.Code != domain.CodeInvalidParams || r.Error.Data["limit"] != "maxURILength" {
		t.Fatalf("completion of a long ref.uri: %+v", r.Error)
	}

	unbounded := serve(t, resourceEngine(t, app.Options{Validator: jsonschema.New(), MaxURILength: -1, MaxSubscriptionBytes: -1}, tmpl))
	unbounded.initialize("2025-11-25")
	if r := decodeReply(t, unbounded.roundTrip(request(1, "resources/read", map[string]any{"uri": uriOf(100_000)}))); r.Error != nil {
		t.Fatalf("MaxURILength -1: %+v", r.Error)
	}
	wantOK(t, subscribeTo(t, unbounded, 2, uriOf(100_000)), "MaxURILength -1 subscribe")

	small := resourceEngine(t, app.Options{Validator: jsonschema.New(), MaxURILength: 20})
	read := func(context.Context, string, map[string]string) ([]domain.ResourceContents, error) { return nil, nil }
	for name, r := range map[string]hexmcp.Resource{
		"resource": hexmcp.TextResource(uriOf(21), "long", "t"),
		"template": hexmcp.NewResourceTemplate("x://items/{id}/and/more", "long", read),
	} {
		var de *domain.DefinitionError
		if err := small.AddResource(r); !errors.As(err, &de) || de.Kind != "resource" || !strings.Contains(err.Error(), "MaxURILength") {
			t.Errorf("AddResource of a long %s = %v", name, err)
		}
	}
	if err := small.AddResource(hexmcp.TextResource(uriOf(20), "fits", "t")); err != nil {
		t.Fatal(err)
	}
}

// fileTemplate is the template of the SDK's own example, file:///{path},
// read by a handler that trusts the value enough to join it to a root:
// the engine must not hand it a value that leaves the root.
func fileTemplate(root string, seen *[]string, opts ...hexmcp.ResourceOption) hexmcp.Resource {
	return hexmcp.NewResourceTemplate("file:///{path}", "file", func(_ context.Context, _ string, vars map[string]string) ([]domain.ResourceContents, error) {
		*seen = append(*seen, vars["path"])
		b, err := os.ReadFile(filepath.Join(root, vars["path"]))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", domain.ErrResourceNotFound, err)
		}
		return []domain.ResourceContents{{Text: string(b)}}, nil
	}, opts...)
}

// TestTemplateValuesCannotTraverse drives resources/read on the wire with
// encoded path tricks against file:///{path}: none reaches the handler,
// each is answered resource not found; legitimate encodings still read.
func TestTemplateValuesCannotTraverse(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{filepath.Join(dir, "secret.txt"): "SECRET", filepath.Join(root, "a b.txt"): "spaced", filepath.Join(root, "inside.txt"): "inside"} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, fileTemplate(root, &seen))
	c := serve(t, e)
	c.initialize("2025-11-25")
	read := func(id int, uri string) rpcReply {
		return decodeReply(t, c.roundTrip(request(id, "resources/read", map[string]any{"uri": uri})))
	}
	for i, uri := range []string{
		"file:///..%2Fsecret.txt", "file:///%2E%2E%2Fsecret.txt", "file:///..%2froot%2finside.txt", "file:///..%5Csecret.txt",
		"file:///root%2Finside.txt", "file:///inside.txt%00", "file:///%00", "file:///..", "file:///%2E%2E", "file:///.",
		"file:///../secret.txt", "file:///a%0Ab",
	} {
		r := read(i+1, uri)
		wantError(t, r, domain.CodeResourceNotFound, uri)
		if strings.Contains(string(r.Result), "SECRET") {
			t.Fatalf("%s read the secret", uri)
		}
	}
	if len(seen) != 0 {
		t.Fatalf("the handler was handed %q", seen)
	}
	for uri, want := range map[string]string{"file:///a%20b.txt": "spaced", "file:///inside.txt": "inside", "file:///%69nside.txt": "inside"} {
		r := read(50, uri)
		if r.Error != nil || !strings.Contains(string(r.Result), `"text":"`+want+`"`) {
			t.Fatalf("%s: %+v %s", uri, r.Error, r.Result)
		}
	}
	// 2026-07-28 answers not found with -32602, as for any unknown URI.
	r := decodeReply(t, c.roundTrip(`{"jsonrpc":"2.0","id":60,"method":"resources/read","params":{"uri":"file:///..%2Fsecret.txt",`+meta2026+`}}`))
	wantError(t, r, domain.CodeInvalidParams, "stateless traversal")
	if r.Error.Data["uri"] != "file:///..%2Fsecret.txt" {
		t.Fatalf("stateless: %+v", r.Error)
	}
	// Subscribing to such a URI is refused the same way.
	wantError(t, subscribeTo(t, c, 61, "file:///..%2Fsecret.txt"), domain.CodeResourceNotFound, "subscribe traversal")
}

// TestRawTemplateValues: WithRawTemplateValues hands the handler the
// undecoded text; a plain resource with it is a declaration error.
func TestRawTemplateValues(t *testing.T) {
	var seen []string
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, fileTemplate(t.TempDir(), &seen, hexmcp.WithRawTemplateValues()))
	c := serve(t, e)
	c.initialize("2025-11-25")
	for i, uri := range []string{"file:///..%2Fsecret.txt", "file:///a%00b", "file:///a%20b"} {
		c.roundTrip(request(i+1, "resources/read", map[string]any{"uri": uri}))
	}
	if want := []string{"..%2Fsecret.txt", "a%00b", "a%20b"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("raw values = %q, want %q", seen, want)
	}
	tmpls := decodeReply(t, c.roundTrip(request(9, "resources/templates/list", nil)))
	if strings.Contains(strings.ToLower(string(tmpls.Result)), "raw") {
		t.Fatalf("the option shows on the wire: %s", tmpls.Result)
	}
	r := hexmcp.TextResource("x://a", "a", "t", hexmcp.WithRawTemplateValues())
	var de *domain.DefinitionError
	if err := e.AddResource(r); !errors.As(err, &de) || de.Kind != "resource" {
		t.Fatalf("plain resource with WithRawTemplateValues: %v", err)
	}
}

// TestStateSubscriptionsNotRebuiltPerCall: State hands out the same sorted
// slice until the subscriptions change (no sort per request), and a State
// taken earlier is not altered by a later change.
func TestStateSubscriptionsNotRebuiltPerCall(t *testing.T) {
	ctx := context.Background()
	e := resourceEngine(t, app.Options{Validator: jsonschema.New()}, itemTemplate())
	sess := e.NewSession(ctx, "s", nil)
	defer sess.Close()
	e.HandleMessage(ctx, sess, []byte(stateInit), nil)
	for _, id := range []string{"c", "a", "b", "a"} {
		e.HandleMessage(ctx, sess, []byte(request(2, "resources/subscribe", map[string]any{"uri": "x://items/" + id})), nil)
	}
	st1, st2 := sess.State(), sess.State()
	want := []string{"x://items/a", "x://items/b", "x://items/c"}
	if fmt.Sprint(st1.Subscriptions) != fmt.Sprint(want) {
		t.Fatalf("Subscriptions = %q, want %q", st1.Subscriptions, want)
	}
	if &st1.Subscriptions[0] != &st2.Subscriptions[0] {
		t.Fatal("State rebuilt the subscriptions without a change")
	}
	e.HandleMessage(ctx, sess, []byte(request(3, "resources/subscribe", map[string]any{"uri": "x://items/0"})), nil)
	e.HandleMessage(ctx, sess, []byte(request(4, "resources/unsubscribe", map[string]any{"uri": "x://items/b"})), nil)
	if fmt.Sprint(st1.Subscriptions) != fmt.Sprint(want) {
		t.Fatalf("an earlier State changed: %q", st1.Subscriptions)
	}
	if got := sess.State().Subscriptions; fmt.Sprint(got) != fmt.Sprint([]string{"x://items/0", "x://items/a", "x://items/c"}) {
		t.Fatalf("after changes: %q", got)
	}
}
