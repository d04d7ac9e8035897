// Package tools holds the showcase server's tools: the examples of the MCP
// PHP SDK's tools page, written with this SDK under the same names. The
// class-style tools (the Calculator, in calculator.go) are declared with
// //mcp:tool doc comments and registered by calculator_mcp.go, which
// cmd/mcpgen generates: go generate ./examples/showcase/...
//
// Beyond the PHP SDK's examples, a few tools show the protocol's other
// features: countDown reports progress, logWork logs to the client, and
// bookTable asks the user for input by elicitation (a form derived from a
// Go struct with [hexmcp.ElicitSchemaFor]); the same handler code serves the
// handshake era (an elicitation/create request to the client) and the
// stateless one (an input_required result and the client's retry), and
// buildReport runs long enough to be run as a task (the tasks extension,
// see Tasks).
package tools

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"

	"github.com/hexmcp/hexmcp"
)

// WeatherInput names a city.
type WeatherInput struct {
	City string `json:"city" description:"City name" minLength:"1"`
}

// weatherSchema is the seed's outputSchema for get_weather.
const weatherSchema = `{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},"required":["temperature","conditions"]}`

func getWeather(_ context.Context, in WeatherInput) (map[string]any, error) {
	return map[string]any{"temperature": 22.5, "conditions": "sunny"}, nil
}

// User is one user of the listing tools.
type User struct {
	ID int `json:"id"`
}

func listUsersFlat() []User { return []User{{ID: 1}, {ID: 2}} }

const listUsersSchema = `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object"}}},"required":["items"]}`

func listUsers() map[string]any { return map[string]any{"items": listUsersFlat()} }

func getString() string           { return "Hello" }
func getNumber() int              { return 42 }
func getBool() bool               { return true }
func getArray() map[string]any    { return map[string]any{"key": "value"} }
func getNull() *string            { return nil }
func returnVoid() error           { return nil }
func getMarkdown() hexmcp.Content { return hexmcp.Text("# Title\n\nMarkdown content") }

func getFormattedCode() *hexmcp.TextContent {
	return hexmcp.Code("fmt.Println(\"Hello\")", "go")
}

func getImage() *hexmcp.ImageContent { return hexmcp.Image(PNG(), "image/png") }

func getAudio() *hexmcp.AudioContent { return hexmcp.Audio(WAV(), "audio/wav") }

func getEmbeddedResource() *hexmcp.EmbeddedResource {
	return hexmcp.EmbeddedText("file://data.json", "File content")
}

func getResourceLink() *hexmcp.ResourceLink {
	return &hexmcp.ResourceLink{URI: "file://data.json", Name: "data.json", MimeType: "application/json"}
}

func getMultipleContent() []hexmcp.Content {
	return []hexmcp.Content{
		hexmcp.Text("Here is the analysis:"),
		hexmcp.Code("x := 40 + 2", "go"),
		hexmcp.Text("And here is the summary."),
	}
}

// ErrSecret is what failInternally fails with; its text must never reach a
// client.
var ErrSecret = errors.New("connecting to db.internal:5432 as admin failed: password rejected")

func failInternally(context.Context) (string, error) { return "", ErrSecret }

// PNG returns a 2×2 PNG image, made in code so the example needs no files.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 1, color.RGBA{B: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// WAV returns a short silent WAV file.
func WAV() []byte {
	const samples, rate = 8, 8000
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))    // PCM
	w(uint16(1))    // mono
	w(uint32(rate)) // sample rate
	w(uint32(rate)) // byte rate
	w(uint16(1))    // block align
	w(uint16(8))    // bits per sample
	b.WriteString("data")
	w(uint32(samples))
	b.Write(bytes.Repeat([]byte{128}, samples))
	return b.Bytes()
}

// All returns every showcase tool.
func All() []hexmcp.Tool {
	calc := &Calculator{}
	return append(calc.MCPTools(),
		hexmcp.NewTool(getWeather, hexmcp.WithName("get_weather"), hexmcp.WithDescription("Returns the current weather of a city."),
			hexmcp.WithOutputSchema(json.RawMessage(weatherSchema))),
		hexmcp.NewTool(listUsersFlat, hexmcp.WithDescription("Lists users as a bare list: structured only from 2026-07-28 on.")),
		hexmcp.NewTool(listUsers, hexmcp.WithDescription("Lists users wrapped in items: structured on every revision that has structured content."),
			hexmcp.WithOutputSchema(json.RawMessage(listUsersSchema))),
		hexmcp.NewTool(getString),
		hexmcp.NewTool(getNumber),
		hexmcp.NewTool(getBool),
		hexmcp.NewTool(getArray),
		hexmcp.NewTool(getNull),
		hexmcp.NewTool(returnVoid),
		hexmcp.NewTool(getFormattedCode),
		hexmcp.NewTool(getMarkdown),
		hexmcp.NewTool(getImage),
		hexmcp.NewTool(getAudio),
		hexmcp.NewTool(getEmbeddedResource),
		hexmcp.NewTool(getResourceLink),
		hexmcp.NewTool(getMultipleContent),
		hexmcp.NewTool(failInternally, hexmcp.WithDescription("Always fails with an internal error whose details stay in the server log.")),
		hexmcp.Func(countDown, hexmcp.WithDescription("Counts down, reporting progress after every step when the request asks for it.")),
		hexmcp.NewTool(logWork, hexmcp.WithDescription("Logs to the client at debug, info and warning.")),
		hexmcp.NewTool(bookTable, hexmcp.WithTitle("Book a table"),
			hexmcp.WithDescription("Books a table, asking the user who it is for, where to sit and whether to sit quietly (elicitation).")),
		reportTool(),
		counterTool(),
		resetCounterTool(),
	)
}
