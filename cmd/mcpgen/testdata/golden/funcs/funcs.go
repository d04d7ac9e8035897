// Package funcs declares tools as plain functions, one per supported shape.
package funcs

import (
	"context"
	"errors"
	"time"

	"github.com/hexmcp/hexmcp/app"
)

// Level is a log level; its constants are its enum.
type Level int

// The levels.
const (
	Debug Level = iota - 1
	Info
	Warn
)

// Unit is a temperature unit.
type Unit string

// The units, declared out of alphabetical order.
const (
	Metric   Unit = "metric"
	Imperial Unit = "imperial"
	Kelvin   Unit = "kelvin"
)

// Celsius is the old name of Metric: a duplicate value, listed once.
const Celsius = Metric

// Point is a struct parameter, described by reference to its type.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Report is a structured output.
type Report struct {
	Total int `json:"total"`
}

// GetWeather returns the current weather of a city.
//
// The weather comes from a made-up source and never changes.
// It is sunny.
//
// Parameters:
//   - city: City name
//   - units: Units of the temperature
//   - days: How many days to forecast, a description that is long enough
//     to go on over a second line
//
//mcp:tool name=get_weather title="Weather report" readOnly openWorld
//mcp:tool default.units=metric default.days=1
func GetWeather(ctx context.Context, city string, units Unit, days int) (string, error) {
	return city + " " + string(units), ctx.Err()
}

//mcp:tool
func noDoc(x, y float64) float64 { return x + y }

// Ping answers. It has no parameters and returns nothing but an error.
//
//mcp:tool destructive=false idempotent
func Ping(ctx context.Context) error { return ctx.Err() }

// Reset returns nothing at all.
//
//mcp:tool name=reset.all
func Reset() {}

// WhoAmI reads the request.
//
//mcp:tool description="Tells the caller who it is."
func WhoAmI(rc *app.RequestContext, verbose *bool) string { return rc.ToolName() }

// Plot takes every kind of parameter.
//
// Parameters:
//   - points: The points to plot
//   - labels: A label per point name
//   - origin: Where the axes cross
//   - from: Start time
//   - level: Log level
//   - scale: Scale factor
//   - every: Sampling interval (a time.Duration: its constants are units,
//     not an enum)
//   - tags: Extra tags
//
//mcp:tool outputSchema=Report meta.example.com/kind=chart meta.version="1.0" meta.weight=2.5 meta.beta=true
//mcp:tool icon=https://example.com/plot.png icon=plotIcon default.scale=1 default.level=0
func Plot(ctx context.Context, rc *app.RequestContext, points []Point, labels map[string]string, origin *Point, from time.Time,
	level Level, scale float64, raw []byte, anything any, every time.Duration, tags ...string) (Report, error) {
	if len(points) == 0 {
		return Report{}, errors.New("no points")
	}
	return Report{Total: len(points)}, nil
}

// plotIcon is the URL of Plot's second icon.
const plotIcon = "https://example.com/plot-dark.png"
