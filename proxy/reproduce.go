package proxy

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/trace"
)

// ErrNoProfileText is wrapped by Reproduce when a trace names a profile
// but does not hold its text.
var ErrNoProfileText = errors.New("the trace names a profile but does not hold its text")

// Reproduce reads what a trace recorded of the faults in force: the
// profile it started with (nil for none, its seed set to the one
// recorded) and every change made while it ran, as Changes an Engine makes
// again at the same times. Running the same client and server with them
// meets the same faults.
func Reproduce(rd *trace.Reader) (*profiles.Profile, []Change, error) {
	h := rd.Header()
	start, err := recordedProfile(h.Profile, h.ProfileText, h.Seed)
	if err != nil {
		return nil, nil, err
	}
	var changes []Change
	for {
		o, err := rd.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, trace.ErrTruncated) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if o.Kind != observe.KindProfile || o.Profile == nil {
			continue
		}
		pc := o.Profile
		c := Change{At: o.At, Fault: pc.Fault, On: pc.Action == observe.ProfileEnable}
		if pc.Action == observe.ProfileSwap {
			if c.Profile, err = recordedProfile(pc.Name, pc.Text, pc.Seed); err != nil {
				return nil, nil, err
			}
			if c.Profile == nil {
				c.Profile = &profiles.Profile{Name: pc.Name, Seed: pc.Seed}
			}
		}
		changes = append(changes, c)
	}
	return start, changes, nil
}

// recordedProfile parses a profile a trace recorded, seeded as it was.
func recordedProfile(name, text string, seed uint64) (*profiles.Profile, error) {
	if text == "" {
		if name != "" && name != "none" {
			return nil, fmt.Errorf("profile %q: %w", name, ErrNoProfileText)
		}
		return nil, nil
	}
	p, err := profiles.Parse(name+".toml", strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("%w:\n%v", ErrProfileText, err)
	}
	p.Seed = seed
	return p, nil
}
