//go:build !unix

package cluster

import (
	"errors"
	"os"
)

// freeze: there is no SIGSTOP here.
func freeze(*os.Process) error { return errors.New("no SIGSTOP on this system") }
