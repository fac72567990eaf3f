package faults

import (
	"fmt"
	"time"
)

// Duration is a time.Duration written in profiles as a Go duration string
// such as "250ms" or "1m30s". The zero value is no time at all.
type Duration time.Duration

// UnmarshalText parses a duration string; a bare number is refused, so no
// unit is ever implied.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration: %w", b, ErrType)
	}
	*d = Duration(v)
	return nil
}
