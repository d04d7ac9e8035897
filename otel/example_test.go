package mcpotel_test

import (
	"context"
	"fmt"
	"log"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/hexmcptest"
	mcpotel "github.com/hexmcp/hexmcp/otel"
)

// A server traced and measured with OpenTelemetry: one Telemetry gives the
// middleware (spans, mcp.server.operation.duration) and the session hook
// (mcp.server.session.duration). Here the spans and the metrics stay in
// memory so that the example can print them; a real server gives
// providers with exporters (sdktrace.WithBatcher(an OTLP exporter),
// sdkmetric.WithReader(a periodic reader)), or sets the otel globals and
// leaves Options empty.
func ExampleNew() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()

	greet := hexmcp.Func(func(_ context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "Hello, " + in.Name, nil
	}, hexmcp.WithName("greet"))
	t := mcpotel.New(mcpotel.Options{TracerProvider: tp, MeterProvider: mp})
	srv, err := hexmcp.New(hexmcp.Options{
		Tools:        []hexmcp.Tool{greet},
		Middleware:   []app.Middleware{t.Middleware()},
		OnSessionEnd: t.OnSessionEnd,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// A client that traces its own call sends its span in params._meta.
	ctx := context.Background()
	c, err := hexmcptest.NewClient(ctx, srv, hexmcptest.ClientOptions{Revision: "2025-11-25"})
	if err != nil {
		log.Fatal(err)
	}
	err = c.Call(ctx, "tools/call", map[string]any{
		"name": "greet", "arguments": map[string]any{"name": "Ada"},
		"_meta": map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	_ = c.Close() // the session ends: its duration is recorded

	for _, s := range spans.Ended() {
		if s.Name() == "tools/call greet" {
			fmt.Println(s.Name(), s.SpanKind(), "trace", s.SpanContext().TraceID(), "parent", s.Parent().SpanID())
			for _, kv := range s.Attributes() {
				if kv.Key != mcpotel.KeyRequestID {
					fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
				}
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Printf("%s (%s): %d series\n", m.Name, m.Unit, len(m.Data.(metricdata.Histogram[float64]).DataPoints))
		}
	}
	// Output:
	// tools/call greet server trace 4bf92f3577b34da6a3ce929d0e0e4736 parent 00f067aa0ba902b7
	//   mcp.method.name=tools/call
	//   gen_ai.operation.name=execute_tool
	//   mcp.protocol.version=2025-11-25
	//   network.transport=pipe
	//   gen_ai.tool.name=greet
	// mcp.server.operation.duration (s): 3 series
	// mcp.server.session.duration (s): 1 series
}
