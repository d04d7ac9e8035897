package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// The tools below are the ones the official conformance suite calls, with
// the names, arguments and results its scenarios assert (read from the
// scenario sources of @modelcontextprotocol/conformance 0.1.16 and
// 0.2.0-alpha.12). Nothing else is registered: every tool in tools/list is
// one a scenario looks for.

// conformanceTools returns every tool the server registers. e is the
// engine they are registered on (test_trigger_tool_change changes its tool
// list).
func conformanceTools(e *app.Engine) []hexmcp.Tool {
	tools := []hexmcp.Tool{
		// tools-call-simple-text
		hexmcp.NewTool(func() string { return "This is a simple text response for testing." },
			hexmcp.WithName("test_simple_text"),
			hexmcp.WithDescription("Returns one text block.")),

		// tools-call-image
		hexmcp.NewTool(func() domain.Content { return hexmcp.Image(redPixelPNG(), "image/png") },
			hexmcp.WithName("test_image_content"),
			hexmcp.WithDescription("Returns one image block: a 1x1 red PNG.")),

		// tools-call-audio (the scenario requires mimeType audio/wav)
		hexmcp.NewTool(func() domain.Content { return hexmcp.Audio(silentWAV(), "audio/wav") },
			hexmcp.WithName("test_audio_content"),
			hexmcp.WithDescription("Returns one audio block: a short silent WAV.")),

		// tools-call-embedded-resource (uri, mimeType and text are checked)
		hexmcp.NewTool(func() domain.Content {
			return hexmcp.EmbeddedText("test://embedded-resource", "This is an embedded resource content.", "text/plain")
		},
			hexmcp.WithName("test_embedded_resource"),
			hexmcp.WithDescription("Returns one embedded text resource.")),

		// tools-call-mixed-content: text, image and resource blocks
		hexmcp.NewTool(func() []domain.Content {
			return []domain.Content{
				hexmcp.Text("Multiple content types test:"),
				hexmcp.Image(redPixelPNG(), "image/png"),
				hexmcp.EmbeddedText("test://mixed-content-resource", `{"test":"data","value":123}`, "application/json"),
			}
		},
			hexmcp.WithName("test_multiple_content_types"),
			hexmcp.WithDescription("Returns a text, an image and an embedded resource block.")),

		// tools-call-error: a tool error is a result with isError:true
		hexmcp.NewTool(func() error {
			return hexmcp.NewToolError("This tool intentionally returns an error for testing")
		},
			hexmcp.WithName("test_error_handling"),
			hexmcp.WithDescription("Always fails with a tool error (isError: true).")),

		// tools-call-with-progress: 0, 50, 100 of 100, about 50 ms apart
		hexmcp.NewTool(toolWithProgress,
			hexmcp.WithName("test_tool_with_progress"),
			hexmcp.WithDescription("Reports progress 0, 50 and 100 of 100 when the call carries a progressToken.")),

		// json-schema-2020-12: the input schema must be listed verbatim
		hexmcp.NewRawTool("json_schema_2020_12_tool", json.RawMessage(jsonSchema202012),
			func(_ context.Context, args json.RawMessage) (any, error) {
				return "JSON Schema 2020-12 tool called with: " + string(args), nil
			},
			hexmcp.WithDescription("Tool with JSON Schema 2020-12 features ($schema, $defs, $anchor, allOf/anyOf, if/then/else).")),

		// http-custom-header-server-validation (2026-07-28): a string
		// argument mirrored into the Mcp-Param-Region header (x-mcp-header),
		// which the transport checks against the body.
		hexmcp.NewRawTool("test_custom_header", json.RawMessage(customHeaderSchema),
			func(_ context.Context, args json.RawMessage) (any, error) {
				return "Called with " + string(args), nil
			},
			hexmcp.WithDescription("Takes a region that clients mirror into the Mcp-Param-Region header.")),

		// server-stateless: no notifications/message without _meta logLevel
		// (the engine filters; the tool logs regardless).
		hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
			if err := rc.Log(ctx, domain.LogInfo, "conformance", "a log message only a client that set a level receives"); err != nil {
				return "", err
			}
			return "Logged one info message; it is sent only when the request set a log level.", nil
		},
			hexmcp.WithName("test_logging_tool"),
			hexmcp.WithDescription("Used to check that no log notification is sent when the request set no log level.")),

		// server-stateless calls it once server/discover advertises
		// tools.listChanged (delivered on subscriptions/listen streams).
		hexmcp.NewTool(triggerToolChange(e),
			hexmcp.WithName("test_trigger_tool_change"),
			hexmcp.WithDescription("Adds or removes a transient tool, so that the tool list changes.")),
		// server-stateless calls it once server/discover advertises
		// prompts.listChanged.
		hexmcp.NewTool(triggerPromptChange(e),
			hexmcp.WithName("test_trigger_prompt_change"),
			hexmcp.WithDescription("Adds and removes a transient prompt, so that the prompt list changes (twice) and ends as it was.")),

		// tools-call-with-logging
		hexmcp.NewTool(toolWithLogging,
			hexmcp.WithName("test_tool_with_logging"),
			hexmcp.WithDescription("Sends three info log messages while it runs.")),
	}
	// The tools that ask the client for input (input.go).
	return append(tools, inputTools()...)
}

// toolWithLogging sends three info log messages, 50 ms apart, as the
// tools-call-with-logging scenario asks.
func toolWithLogging(ctx context.Context, rc *app.RequestContext) (string, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if err := rc.Log(ctx, domain.LogInfo, "test_tool_with_logging", msg); err != nil {
			return "", err
		}
	}
	return "Tool with logging executed successfully", nil
}

func toolWithProgress(ctx context.Context, rc *app.RequestContext) (string, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return "", err
			}
		}
		if err := rc.ReportProgress(ctx, p, 100, fmt.Sprintf("step %d of 3", i+1)); err != nil {
			return "", err
		}
	}
	if !rc.CanReportProgress() {
		return "Done (no progressToken, so no progress was reported).", nil
	}
	return "Done: progress 0, 50 and 100 of 100 reported.", nil
}

// transientTool is the tool test_trigger_tool_change adds and removes.
const transientTool = "conformance_transient_tool"

func triggerToolChange(e *app.Engine) func() (string, error) {
	var mu sync.Mutex
	return func() (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if e.RemoveTool(transientTool) {
			return "removed " + transientTool, nil
		}
		err := e.AddTool(hexmcp.NewTool(func() string { return "transient" },
			hexmcp.WithName(transientTool),
			hexmcp.WithDescription("Added by test_trigger_tool_change.")))
		if err != nil {
			return "", err
		}
		return "added " + transientTool, nil
	}
}

// transientPrompt is the prompt test_trigger_prompt_change adds and
// removes.
const transientPrompt = "conformance_transient_prompt"

func triggerPromptChange(e *app.Engine) func() (string, error) {
	var mu sync.Mutex
	return func() (string, error) {
		mu.Lock()
		defer mu.Unlock()
		err := e.AddPrompt(hexmcp.NewPrompt(transientPrompt, func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
			return &domain.GetPromptResult{}, nil
		}))
		if err != nil {
			return "", err
		}
		e.RemovePrompt(transientPrompt)
		return "added and removed " + transientPrompt, nil
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jsonSchema202012 is the input schema the json-schema-2020-12 scenario
// expects back from tools/list, keyword for keyword.
const jsonSchema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// customHeaderSchema marks region with x-mcp-header (2026-07-28 Streamable
// HTTP, "Custom Headers from Tool Parameters").
const customHeaderSchema = `{
	"type": "object",
	"properties": {
		"region": {"type": "string", "description": "Any text; sent in the Mcp-Param-Region header too.", "x-mcp-header": "Region"}
	},
	"required": ["region"]
}`

var (
	pngOnce sync.Once
	pngData []byte
)

// redPixelPNG is a valid 1x1 red PNG, encoded once.
func redPixelPNG() []byte {
	pngOnce.Do(func() {
		img := image.NewRGBA(image.Rect(0, 0, 1, 1))
		img.Set(0, 0, color.RGBA{R: 255, A: 255})
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			panic(err) // cannot happen for an in-memory image
		}
		pngData = b.Bytes()
	})
	return pngData
}

// silentWAV is a valid RIFF/WAVE file: 8 kHz, mono, 16-bit PCM, 10 ms of
// silence.
func silentWAV() []byte {
	const (
		rate     = 8000
		channels = 1
		bits     = 16
		samples  = rate / 100
	)
	dataLen := samples * channels * bits / 8
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + dataLen))
	b.WriteString("WAVEfmt ")
	w(uint32(16))                         // fmt chunk size
	w(uint16(1))                          // PCM
	w(uint16(channels))                   // channels
	w(uint32(rate))                       // sample rate
	w(uint32(rate * channels * bits / 8)) // byte rate
	w(uint16(channels * bits / 8))        // block align
	w(uint16(bits))                       // bits per sample
	b.WriteString("data")
	w(uint32(dataLen))
	b.Write(make([]byte, dataLen))
	return b.Bytes()
}
