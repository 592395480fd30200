// Package duration is a length of time as task files write it ("10s",
// "1m30s"): setup steps, services, checks and time limits share it. It
// depends on nothing of the module.
package duration

import (
	"fmt"
	"time"
)

// Duration is a time.Duration written as "10s" or "1m30s" in task files.
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q: use a number with a unit, such as 10s or 2m", b)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }
