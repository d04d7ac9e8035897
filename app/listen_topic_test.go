package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// An extension's listen topic: the engine reads its ids, asks the
// extension which to keep, acknowledges those and delivers what
// NotifyTopic publishes for them, each stream's copy with its
// subscription id.
func TestListenExtensionTopic(t *testing.T) {
	var attached *app.Engine
	ext := app.Extension{ID: "com.example/jobs",
		Attach: func(e *app.Engine) { attached = e },
		Listen: []app.ListenTopic{{Name: "jobIds", Accept: func(_ context.Context, req *app.Request, ids []string) ([]string, error) {
			if req.Method != "subscriptions/listen" {
				t.Errorf("Accept got a %s request", req.Method)
			}
			var keep []string
			for _, id := range ids {
				if id == "refuse" {
					return nil, &domain.ProtocolError{Code: domain.CodeMissingClientCapability, Message: "Missing required client capability: extensions.com.example/jobs"}
				}
				if strings.HasPrefix(id, "ok") {
					keep = append(keep, id)
				}
			}
			return keep, nil
		}}}}
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Extensions: []app.Extension{ext}}, addTool())
	if attached != e {
		t.Fatal("Attach was not called with the engine")
	}
	c := serve(t, e)
	c.send(listenReq("5", `{"jobIds":["ok1","no2","ok1"],"toolsListChanged":true}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"toolsListChanged":true,"jobIds":["ok1"]}}}`)

	if n, err := e.NotifyTopic("jobIds", "no2", "notifications/jobs", []byte(`{"state":"done"}`)); err != nil || n != 0 {
		t.Fatalf("NotifyTopic of an id not acknowledged: %d, %v", n, err)
	}
	c.expectNothing()
	if n, err := e.NotifyTopic("jobIds", "ok1", "notifications/jobs", []byte(`{"jobId":"ok1","state":"done","_meta":{"x":1}}`)); err != nil || n != 1 {
		t.Fatalf("NotifyTopic: %d, %v", n, err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/jobs","params":{"jobId":"ok1","state":"done","_meta":{"x":1,"io.modelcontextprotocol/subscriptionId":5}}}`)

	if _, err := e.NotifyTopic("other", "ok1", "notifications/jobs", []byte(`{}`)); err == nil {
		t.Fatal("NotifyTopic of a topic no extension serves: no error")
	}
	if _, err := e.NotifyTopic("jobIds", "ok1", "notifications/jobs", []byte(`[1]`)); err == nil {
		t.Fatal("NotifyTopic with params that are not an object: no error")
	}
	// The extension refuses: its error answers the listen request.
	if resp := c.roundTrip(listenReq("6", `{"jobIds":["refuse"]}`)); !strings.Contains(resp, `"code":-32021`) || !strings.Contains(resp, `"id":6`) {
		t.Fatal(resp)
	}
	// The ids are bounded like resource subscriptions.
	if resp := c.roundTrip(listenReq("7", `{"jobIds":"ok1"}`)); !strings.Contains(resp, `"code":-32602`) || !strings.Contains(resp, "notifications.jobIds must be an array of strings") {
		t.Fatal(resp)
	}
}

func TestListenTopicNamesChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		exts []app.Extension
	}{
		{"an engine member", []app.Extension{{ID: "com.example/a", Listen: []app.ListenTopic{{Name: "resourceSubscriptions"}}}}},
		{"empty", []app.Extension{{ID: "com.example/a", Listen: []app.ListenTopic{{}}}}},
		{"twice", []app.Extension{{ID: "com.example/a", Listen: []app.ListenTopic{{Name: "ids"}}}, {ID: "com.example/b", Listen: []app.ListenTopic{{Name: "ids"}}}}},
	} {
		if _, err := app.NewEngine(app.Options{Extensions: tc.exts}); err == nil {
			t.Errorf("%s: NewEngine accepted the topic", tc.name)
		}
	}
}

// A topic notice raised on one instance reaches the listen streams of
// another (Options.Bus).
func TestListenTopicAcrossInstances(t *testing.T) {
	bus := &fakeBus{}
	ext := func() app.Extension {
		return app.Extension{ID: "com.example/jobs", Listen: []app.ListenTopic{{Name: "jobIds"}}}
	}
	a := newEngine(t, app.Options{Validator: jsonschema.New(), Bus: bus, Extensions: []app.Extension{ext()}}, addTool())
	b := newEngine(t, app.Options{Validator: jsonschema.New(), Bus: bus, Extensions: []app.Extension{ext()}}, addTool())
	c := serve(t, b)
	c.send(listenReq("9", `{"jobIds":["j1"]}`))
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9},"notifications":{"jobIds":["j1"]}}}`)
	if n, err := a.NotifyTopic("jobIds", "j1", "notifications/jobs", []byte(`{"state":"done"}`)); err != nil || n != 0 {
		t.Fatalf("NotifyTopic at a: %d, %v (a holds no stream)", n, err)
	}
	equalJSON(t, c.recv(), `{"jsonrpc":"2.0","method":"notifications/jobs","params":{"state":"done","_meta":{"io.modelcontextprotocol/subscriptionId":9}}}`)
}
