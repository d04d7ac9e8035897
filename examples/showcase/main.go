// Command showcase is an MCP server exposing the examples of the tools page
// of the MCP PHP SDK, written with this SDK, plus tools that show progress
// (countDown), logging to the client (logWork) and asking the user by
// elicitation (bookTable; the client must declare the elicitation
// capability), and counter, a tool with an MCP Apps view (a counter page a
// host renders in a sandboxed iframe; extensions/apps). It serves stdio by
// default:
//
//	go run ./examples/showcase
//
// or Streamable HTTP (at http://ADDR/mcp, with the HTTP+SSE transport of
// 2024-11-05 beside it at http://ADDR/sse and /message, for the clients
// that speak only that one) or WebSocket (at ws://ADDR/ws):
//
//	go run ./examples/showcase -transport http -addr 127.0.0.1:8080
//	go run ./examples/showcase -transport ws -addr 127.0.0.1:8080
//
// It logs to standard error, where it also prints the URL it serves. With
// -redis redis://HOST:PORT/DB, instances share their sessions, SSE events,
// requestState keys and notifications through that Redis (see
// adapters/redis), and the tool toggleGreeting shows a tool list change
// reaching the sessions of every instance. With -redis-cluster
// HOST:PORT,HOST:PORT,... (seed nodes) they share them through a Redis
// Cluster instead.
//
// With -auth-issuer URL -auth-audience URL (and -auth-scopes a,b) it is an
// OAuth 2.1 protected resource (adapters/oauth): /mcp, /sse, /message and
// /ws take only JWT
// access tokens of that authorization server issued for the audience (the
// server's own /mcp URL) with the scopes, and the Protected Resource
// Metadata is served at /.well-known/oauth-protected-resource. An http
// issuer is accepted only on a loopback address:
//
//	go run ./examples/showcase -transport http -auth-issuer https://auth.example.com \
//		-auth-audience https://mcp.example.com/mcp -auth-scopes mcp:tools
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/examples/showcase/tools"
	"github.com/hexmcp/hexmcp/wiring"
)

func main() {
	transport := flag.String("transport", "stdio", "transport to serve: stdio, http (Streamable HTTP at /mcp, and the 2024-11-05 HTTP+SSE transport at /sse) or ws (WebSocket at /ws)")
	addr := flag.String("addr", wiring.DefaultHTTPAddr, "address to listen on for http and ws (port 0 picks a free port)")
	verbose := flag.Bool("v", false, "log fx events and debug records to standard error")
	redisURL := flag.String("redis", "", "share sessions and requestState keys with other instances through this Redis (redis://127.0.0.1:6379/0; http and ws only)")
	redisCluster := flag.String("redis-cluster", "", "share them through this Redis Cluster instead: seed nodes HOST:PORT,HOST:PORT,... (http and ws only)")
	trusted := flag.String("trusted-proxy", "", "comma-separated CIDR prefixes of the reverse proxies in front of the server (127.0.0.1/32): their clients are counted by X-Forwarded-For, their connections are not bounded per address (http and ws only)")
	authIssuer := flag.String("auth-issuer", "", "accept only OAuth 2.1 JWT access tokens of this authorization server on /mcp and /ws (https; http only on a loopback host); needs -auth-audience (http and ws only)")
	authAudience := flag.String("auth-audience", "", "this server's resource URL, which tokens must name in aud and the metadata names as resource (https://mcp.example.com/mcp)")
	authScopes := flag.String("auth-scopes", "", "comma-separated scopes every token must grant (mcp:tools,mcp:admin)")
	flag.Parse()
	auth, protected, err := parseAuthFlags(*authIssuer, *authAudience, *authScopes)
	if err == nil && protected && *transport == "stdio" {
		err = fmt.Errorf("-auth-issuer needs -transport http or ws")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "showcase: %v\n", err)
		os.Exit(2)
	}
	var proxies []netip.Prefix
	for _, p := range strings.Split(*trusted, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "showcase: -trusted-proxy: %v\n", err)
			os.Exit(2)
		}
		proxies = append(proxies, pfx)
	}

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	var serverMiddleware func(http.Handler) http.Handler
	if protected {
		mw, metaURL, err := protect(context.Background(), auth, logger)
		if err != nil {
			fmt.Fprintf(os.Stderr, "showcase: %v\n", err)
			os.Exit(1)
		}
		serverMiddleware = mw
		fmt.Fprintf(os.Stderr, "showcase: a protected resource of %s; metadata at %s\n", auth.issuer, metaURL)
	}

	var serve fx.Option
	switch *transport {
	case "stdio":
		serve = wiring.Stdio
	case "http", "ws":
		serve = fx.Options(
			wiring.HTTP,
			wiring.WebSocket,
			wiring.HTTPServer,
			fx.Supply(&wiring.HTTPConfig{Addr: *addr, Server: mcphttp.ServerOptions{TrustedProxies: proxies},
				Middleware: func(h http.Handler) http.Handler {
					if len(proxies) == 0 {
						return h
					}
					return mcphttp.TrustProxies(h, proxies...)
				},
				ServerMiddleware: serverMiddleware}),
			fx.Invoke(func(lc fx.Lifecycle, srv *mcphttp.Server) {
				lc.Append(fx.Hook{OnStart: func(context.Context) error {
					if *transport == "ws" {
						fmt.Fprintf(os.Stderr, "showcase: serving MCP over WebSocket at ws://%s/ws\n", srv.Addr())
					} else {
						fmt.Fprintf(os.Stderr, "showcase: serving MCP over Streamable HTTP at http://%s/mcp\n", srv.Addr())
						fmt.Fprintf(os.Stderr, "showcase: and over the 2024-11-05 HTTP+SSE transport at http://%s/sse\n", srv.Addr())
					}
					return nil
				}})
			}),
		)
	default:
		fmt.Fprintf(os.Stderr, "showcase: unknown transport %q (stdio, http or ws)\n", *transport)
		os.Exit(2)
	}

	shared := fx.Options()
	if *redisURL != "" || *redisCluster != "" {
		var rdb redis.UniversalClient
		switch {
		case *transport == "stdio" || *redisURL != "" && *redisCluster != "":
			fmt.Fprintln(os.Stderr, "showcase: -redis or -redis-cluster (one of them) needs -transport http or ws")
			os.Exit(2)
		case *redisCluster != "":
			rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(*redisCluster, ",")})
		default:
			ro, err := redis.ParseURL(*redisURL)
			if err != nil {
				fmt.Fprintf(os.Stderr, "showcase: -redis needs a redis:// URL (%v)\n", err)
				os.Exit(2)
			}
			rdb = redis.NewClient(ro)
		}
		defer rdb.Close()
		shared = fx.Options(wiring.Redis(rdb), fx.Invoke(func(s *hexmcp.Server) error {
			return s.AddTools(tools.ClusterTools(s)...)
		}))
	}

	var fxLog fx.Option = fx.Options() // wiring.New logs fx's failures only
	if *verbose {
		fxLog = fx.WithLogger(func() fxevent.Logger { return &fxevent.SlogLogger{Logger: logger} })
	}
	skillsExt, err := tools.Skills()
	if err != nil {
		logger.Error("showcase skills", "error", err)
		os.Exit(1)
	}
	appsExt, err := tools.Apps()
	if err != nil {
		logger.Error("showcase apps", "error", err)
		os.Exit(1)
	}
	server := wiring.New(
		fx.Supply(logger),
		fx.Supply(wiring.Config{
			Info:         hexmcp.Implementation{Name: "hexmcp-showcase", Title: "hexmcp showcase", Version: "0.1.0"},
			Instructions: "Example tools of every kind: scalars, JSON, content blocks, structured output and errors.",
			Extensions:   []hexmcp.Extension{skillsExt, appsExt, tools.Tasks().Extension()},
			// resetCounter is destructive: the user confirms it first.
			ToolMiddleware: []hexmcp.ToolMiddleware{hexmcp.ConfirmDestructive(hexmcp.ConfirmOptions{})},
		}),
		serve,
		shared,
		wiring.Tools(tools.All()...),
		wiring.Resources(tools.Resources()...),
		wiring.Prompts(tools.Prompts()...),
		fxLog,
	)
	server.Run()
	if err := server.Err(); err != nil {
		logger.Error("showcase failed to start", "error", err)
		os.Exit(1)
	}
}
