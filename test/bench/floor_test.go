package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
)

// BenchmarkFloor is the lower bound: a hand-written loop over the same pipes
// that reads one line, decodes it with encoding/json (the request and its
// arguments into a fixed struct), calls calculate and encodes the response
// with encoding/json: the text block alone,
// {"jsonrpc":"2.0","id":N,"result":{"content":[{"type":"text","text":"3"}]}}.
// No schema validation, no method dispatch, no session state: whatever an
// SDK costs above this line is its own overhead (routing, validation,
// generic result types, goroutine hand-offs, ...).
//
// It is the fair floor of BenchmarkHexMCP, BenchmarkGoSDK and BenchmarkMcpGo:
// they write byte for byte the same response line (TestFairFloors checks it
// for BenchmarkHexMCP).
func BenchmarkFloor(b *testing.B) {
	runBench(b, startFloor)
}

// BenchmarkFloorStructured is the floor of the structured variants: the
// loop of BenchmarkFloor that also encodes structuredContent {"result":3}
// after the text block (a second struct marshalled in the same Encode),
// {"jsonrpc":"2.0","id":N,"result":{"content":[{"type":"text","text":"3"}],"structuredContent":{"result":3}}},
// byte for byte the line BenchmarkHexMCPStructured, BenchmarkGoSDKStructured
// and BenchmarkMcpGoValidated write (TestFairFloors checks it for
// BenchmarkHexMCPStructured). It validates nothing.
func BenchmarkFloorStructured(b *testing.B) {
	runBench(b, startFloorStructured)
}

type floorRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		Arguments struct {
			A         float64 `json:"a"`
			B         float64 `json:"b"`
			Operation string  `json:"operation"`
		} `json:"arguments"`
		// Meta is read for the revision only (2026-07-28 requests carry it
		// in every request); the floor checks nothing else in it.
		Meta struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

type floorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  floorResult     `json:"result"`
}

// floorResult is the tools/call result as the SDKs write it: resultType
// first (2026-07-28 only), then content, structuredContent, isError and
// _meta (2026-07-28 only: the server's name and version).
type floorResult struct {
	ResultType        string         `json:"resultType,omitempty"`
	Content           []floorContent `json:"content"`
	StructuredContent *calcOutput    `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
	Meta              *floorMeta     `json:"_meta,omitempty"`
}

// floorMeta is the _meta of a 2026-07-28 result.
type floorMeta struct {
	ServerInfo floorServerInfo `json:"io.modelcontextprotocol/serverInfo"`
}

type floorServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// hexServerInfo is what this SDK names itself when app.Options.Info is
// left empty, as it writes it in a 2026-07-28 result's _meta.
var hexServerInfo = floorServerInfo{Name: "hexmcp-server", Version: "0.0.0"}

type floorContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// floorInitResult is the fixed result of the (untimed) initialize request.
var floorInitResult = json.RawMessage(`{"protocolVersion":"` + benchProtocolVersion +
	`","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}`)

func startFloor(_ context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	return startFloorWith(in, out, false)
}

func startFloorStructured(_ context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	return startFloorWith(in, out, true)
}

func startFloorWith(in *io.PipeReader, out *io.PipeWriter, structured bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Closing the reader unblocks the client's pending write, if any,
		// should the server stop early.
		defer in.Close()
		_ = serveFloor(in, out, structured)
	}()
	return done
}

// floorAnswer is the plain answer to a decoded tools/call of calculate:
// the result as text, or the error as an isError result. It returns the
// result too, and whether there was one.
func floorAnswer(req *floorRequest) (resp floorResponse, v float64, ok bool) {
	args := &req.Params.Arguments
	resp = floorResponse{JSONRPC: "2.0", ID: req.ID}
	v, err := calculate(args.A, args.B, args.Operation)
	if err != nil {
		resp.Result = floorResult{Content: []floorContent{{Type: "text", Text: err.Error()}}, IsError: true}
		return resp, 0, false
	}
	resp.Result = floorResult{Content: []floorContent{{Type: "text", Text: formatResult(v)}}}
	return resp, v, true
}

// floorCall computes the result of a decoded tools/call of calculate, with
// structuredContent when structured. A 2026-07-28 request (its _meta names
// that version) gets the envelope fields of that revision.
func floorCall(req *floorRequest, structured bool) floorResponse {
	resp, v, ok := floorAnswer(req)
	if ok && structured {
		resp.Result.StructuredContent = &calcOutput{Result: v}
	}
	if req.Params.Meta.ProtocolVersion == eraStateless {
		resp.Result.ResultType = "complete"
		resp.Result.Meta = &floorMeta{ServerInfo: hexServerInfo}
	}
	return resp
}

// readFloorRequest reads the next line of br and decodes it into req.
func readFloorRequest(br *bufio.Reader, req *floorRequest) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, req)
}

func serveFloor(in io.Reader, out io.Writer, structured bool) error {
	br := bufio.NewReader(in)
	enc := json.NewEncoder(out) // Encode = one Write of value + '\n'

	// Handshake, outside the hot loop: answer initialize, then wait for
	// notifications/initialized.
	for {
		var req floorRequest
		if err := readFloorRequest(br, &req); err != nil {
			return err
		}
		if req.Method == "initialize" {
			init := struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
			}{"2.0", req.ID, floorInitResult}
			if err := enc.Encode(&init); err != nil {
				return err
			}
			continue
		}
		if req.Method == "notifications/initialized" {
			break
		}
	}

	// Hot loop: every request is assumed to be a tools/call of calculate.
	for {
		var req floorRequest
		if err := readFloorRequest(br, &req); err != nil {
			return err
		}
		if len(req.ID) == 0 {
			continue // notification: no response
		}
		resp := floorCall(&req, structured)
		if err := enc.Encode(&resp); err != nil {
			return err
		}
	}
}
