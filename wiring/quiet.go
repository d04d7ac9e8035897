package wiring

import (
	"os"
	"reflect"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
)

// New returns an fx application of [Core] and opts that logs only fx's
// failures (a constructor's error, a hook that failed), on standard error,
// instead of some 25 lines of fx events on every start, which a stdio
// client would show its user. A logger of fx events among opts
// (fx.WithLogger) replaces it:
//
//	wiring.New(wiring.Stdio, wiring.Tools(tools...)).Run()
func New(opts ...fx.Option) *fx.App {
	return fx.New(append([]fx.Option{Quiet, Core}, opts...)...)
}

// Quiet makes an application built with fx.New log only fx's failures,
// as [New] does.
var Quiet = fx.WithLogger(func() fxevent.Logger {
	return failuresOnly{next: &fxevent.ConsoleLogger{W: os.Stderr}}
})

// failuresOnly passes on the fx events that carry an error.
type failuresOnly struct{ next fxevent.Logger }

// LogEvent logs ev when its Err field holds an error.
func (f failuresOnly) LogEvent(ev fxevent.Event) {
	v := reflect.ValueOf(ev)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	if e := v.FieldByName("Err"); e.IsValid() && e.Kind() == reflect.Interface && !e.IsNil() {
		f.next.LogEvent(ev)
	}
}
