// Command client is the MCP client the official conformance suite drives
// (`conformance client --command <this binary>`): built on package client
// and client/auth, it plays the scenario the suite names in
// MCP_CONFORMANCE_SCENARIO against the server URL given as its last
// argument, with MCP_CONFORMANCE_CONTEXT (JSON) for what a scenario hands
// over (pre-registered credentials, the tool calls to make). It exits 1
// when the scenario's own steps fail; the suite scores what the server saw.
//
// See test/conformance/README.md and run-client.sh.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// scenario plays one conformance scenario against the server at url.
type scenario func(ctx context.Context, url string, sc scenarioContext) error

// scenarioContext is MCP_CONFORMANCE_CONTEXT: what the suite hands the
// client for a scenario (all optional).
type scenarioContext struct {
	Name         string `json:"name"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// PrivateKeyPEM is the client's key for private_key_jwt.
	PrivateKeyPEM string `json:"private_key_pem"`
	// ValidJWT is a workload identity token (auth/wif-jwt-bearer).
	ValidJWT string `json:"valid_jwt"`
	// The enterprise's identity provider (auth/enterprise-managed-authorization).
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	ToolCalls        []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
	Raw map[string]any `json:"-"`
}

var scenarios = map[string]scenario{
	"initialize":                          listTools,
	"request-metadata":                    connectOnly,
	"tools_call":                          toolsCall,
	"elicitation-sep1034-client-defaults": elicitationDefaults,
	"sse-retry":                           sseRetry,
	"json-schema-ref-no-deref":            listTools,
	"sep-2322-client-request-state":       requestState,
	"http-standard-headers":               standardHeaders,
	"http-custom-headers":                 customHeaders,
	"http-invalid-tool-headers":           invalidToolHeaders,
	"json-schema-2020-12-preservation":    schemaPreservation,
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformance client: ")
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if len(os.Args) < 2 || name == "" {
		log.Fatalf("usage: MCP_CONFORMANCE_SCENARIO=<scenario> %s <server-url>\nscenarios: %s", os.Args[0], strings.Join(names(), ", "))
	}
	run, ok := scenarios[name]
	if !ok && strings.HasPrefix(name, "auth/") {
		run, ok = authScenario, true
	}
	if !ok {
		log.Fatalf("unknown scenario %q (known: %s)", name, strings.Join(names(), ", "))
	}
	var sc scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
		_ = json.Unmarshal([]byte(raw), &sc.Raw)
	}
	sc.Name = name // the context is there only for some scenarios
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[len(os.Args)-1], sc); err != nil {
		log.Fatalf("%s: %v", name, err)
	}
}

func names() []string {
	var n []string
	for k := range scenarios {
		n = append(n, k)
	}
	n = append(n, "auth/*")
	sort.Strings(n)
	return n
}

// options are the client's options of every scenario.
func options() client.Options {
	return client.Options{ClientInfo: domain.Implementation{Name: "hexmcp-conformance-client", Version: "1.0.0"}}
}

// connect opens a session over Streamable HTTP.
func connect(ctx context.Context, url string, opts client.Options, hopts client.HTTPOptions) (*client.Session, error) {
	s, err := client.New(opts).Connect(ctx, client.HTTPTransport(url, hopts))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return s, nil
}

// withSession connects to url with the scenario's usual options, runs fn
// on the session and closes it.
func withSession(ctx context.Context, url string, fn func(s *client.Session) error) error {
	s, err := connect(ctx, url, options(), client.HTTPOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

func connectOnly(ctx context.Context, url string, _ scenarioContext) error {
	s, err := connect(ctx, url, options(), client.HTTPOptions{})
	if err != nil {
		return err
	}
	return s.Close()
}

func listTools(ctx context.Context, url string, _ scenarioContext) error {
	return withSession(ctx, url, func(s *client.Session) error {
		_, err := client.Collect(s.ListTools(ctx))
		return err
	})
}

// callListed lists the tools and calls name with args when it is listed.
func callListed(ctx context.Context, s *client.Session, name string, args any) error {
	tools, err := client.Collect(s.ListTools(ctx))
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name == name {
			_, err := s.CallTool(ctx, name, args)
			return err
		}
	}
	return fmt.Errorf("the server lists no tool %q", name)
}

func toolsCall(ctx context.Context, url string, _ scenarioContext) error {
	return withSession(ctx, url, func(s *client.Session) error {
		return callListed(ctx, s, "add_numbers", map[string]any{"a": 5, "b": 3})
	})
}

// elicitationDefaults accepts every form as a user who changes nothing:
// with the defaults of its schema (SEP-1034).
func elicitationDefaults(ctx context.Context, url string, _ scenarioContext) error {
	opts := options()
	opts.Elicitation = func(ctx context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
		return client.Accept(formDefaults(p.RequestedSchema))
	}
	s, err := connect(ctx, url, opts, client.HTTPOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	return callListed(ctx, s, "test_client_elicitation_defaults", map[string]any{})
}

// formDefaults is the content of a form left as it was shown: each
// property's default.
func formDefaults(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	content := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return content
	}
	for name, p := range s.Properties {
		if len(p.Default) > 0 {
			content[name] = p.Default
		}
	}
	return content
}

func sseRetry(ctx context.Context, url string, _ scenarioContext) error {
	return withSession(ctx, url, func(s *client.Session) error {
		return callListed(ctx, s, "test_reconnection", map[string]any{})
	})
}

// requestState answers the input requests of the SEP-2322 tools; some are
// refused on purpose, so their errors are logged, not returned.
func requestState(ctx context.Context, url string, _ scenarioContext) error {
	opts := options()
	opts.Elicitation = func(ctx context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
		return client.Accept(map[string]any{"confirmed": true})
	}
	s, err := connect(ctx, url, opts, client.HTTPOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		if _, err := s.CallTool(ctx, name, map[string]any{}); err != nil {
			log.Printf("%s: %v", name, err)
		}
	}
	return nil
}

// standardHeaders makes one call of each kind the headers name.
func standardHeaders(ctx context.Context, url string, _ scenarioContext) error {
	return withSession(ctx, url, func(s *client.Session) error {
		if tools, err := client.Collect(s.ListTools(ctx)); err == nil && len(tools) > 0 {
			logErr(s.CallTool(ctx, tools[0].Name, map[string]any{}))
		}
		if res, err := client.Collect(s.ListResources(ctx)); err == nil && len(res) > 0 {
			logErr(s.ReadResource(ctx, res[0].URI))
		}
		if prompts, err := client.Collect(s.ListPrompts(ctx)); err == nil && len(prompts) > 0 {
			logErr(s.GetPrompt(ctx, prompts[0].Name, map[string]string{}))
		}
		return nil
	})
}

// customHeaders lists the tools (their x-mcp-header parameters), then
// makes the calls the suite asks for.
func customHeaders(ctx context.Context, url string, sc scenarioContext) error {
	return withSession(ctx, url, func(s *client.Session) error {
		if _, err := client.Collect(s.ListTools(ctx)); err != nil {
			return err
		}
		for _, c := range sc.ToolCalls {
			args := c.Arguments
			if args == nil {
				args = map[string]any{}
			}
			logErr(s.CallTool(ctx, c.Name, args))
		}
		return nil
	})
}

// invalidToolHeaders calls every tool the client kept from the list (a
// tool whose x-mcp-header annotations are invalid is left out of it).
func invalidToolHeaders(ctx context.Context, url string, _ scenarioContext) error {
	return withSession(ctx, url, func(s *client.Session) error {
		tools, err := client.Collect(s.ListTools(ctx))
		if err != nil {
			return err
		}
		for _, t := range tools {
			logErr(s.CallTool(ctx, t.Name, map[string]any{"region": "us-west1"}))
		}
		return nil
	})
}

// schemaPreservation hands the input schema of json_schema_2020_12_tool,
// as the client listed it, back to the server's json_schema_echo.
func schemaPreservation(ctx context.Context, url string, _ scenarioContext) error {
	return withSession(ctx, url, func(s *client.Session) error {
		tools, err := client.Collect(s.ListTools(ctx))
		if err != nil {
			return err
		}
		for _, t := range tools {
			if t.Name == "json_schema_2020_12_tool" {
				_, err := s.CallTool(ctx, "json_schema_echo", map[string]any{"schema": t.InputSchema})
				return err
			}
		}
		return errors.New("the server lists no json_schema_2020_12_tool")
	})
}

func logErr[T any](_ T, err error) {
	if err != nil {
		log.Print(err)
	}
}
