package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
)

// BenchmarkFloor is the lower bound: a hand-written loop over the same pipes
// that reads one line, decodes it with encoding/json, calls calculate and
// encodes the response with encoding/json. No schema validation, no method
// dispatch, no session state: whatever an SDK costs above this line is its
// own overhead (routing, validation, generic result types, goroutine
// hand-offs, ...).
func BenchmarkFloor(b *testing.B) {
	runBench(b, startFloor)
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
	} `json:"params"`
}

type floorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  floorResult     `json:"result"`
}

type floorResult struct {
	Content []floorContent `json:"content"`
	IsError bool           `json:"isError,omitempty"`
}

type floorContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// floorInitResult is the fixed result of the (untimed) initialize request.
var floorInitResult = json.RawMessage(`{"protocolVersion":"` + benchProtocolVersion +
	`","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1"}}`)

func startFloor(_ context.Context, in *io.PipeReader, out *io.PipeWriter) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Closing the reader unblocks the client's pending write, if any,
		// should the server stop early.
		defer in.Close()
		_ = serveFloor(in, out)
	}()
	return done
}

func serveFloor(in io.Reader, out io.Writer) error {
	br := bufio.NewReader(in)
	enc := json.NewEncoder(out) // Encode = one Write of value + '\n'

	// Handshake, outside the hot loop: answer initialize, then wait for
	// notifications/initialized.
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		var req floorRequest
		if err := json.Unmarshal(line, &req); err != nil {
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
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		var req floorRequest
		if err := json.Unmarshal(line, &req); err != nil {
			return err
		}
		if len(req.ID) == 0 {
			continue // notification: no response
		}
		args := &req.Params.Arguments
		resp := floorResponse{JSONRPC: "2.0", ID: req.ID}
		if v, err := calculate(args.A, args.B, args.Operation); err != nil {
			resp.Result = floorResult{Content: []floorContent{{Type: "text", Text: err.Error()}}, IsError: true}
		} else {
			resp.Result = floorResult{Content: []floorContent{{Type: "text", Text: formatResult(v)}}}
		}
		if err := enc.Encode(&resp); err != nil {
			return err
		}
	}
}
