// Package deflog is the SDK's logger when none is given: slog's text
// format on standard error (never standard output, which may be the MCP
// channel of a stdio server).
package deflog

import (
	"log/slog"
	"os"
)

// New returns the default logger.
func New() *slog.Logger { return slog.New(slog.NewTextHandler(os.Stderr, nil)) }
