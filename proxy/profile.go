package proxy

import (
	"errors"
	"fmt"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/observe"
)

// ErrNoProfile is returned by Swap and SetEnabled on an engine built with
// no profile and not Mutable: nothing can be changed.
var ErrNoProfile = errors.New("proxy: no profile in force (start with a profile, or Mutable)")

// InForce returns the profile in force and the seed it was compiled with,
// read together; nil when none can be.
func (e *Engine) InForce() (*profiles.Profile, uint64) {
	if e.active == nil {
		return nil, 0
	}
	return e.active.InForce()
}

// Stats returns the per-fault counters of the profile in force.
func (e *Engine) Stats() []faults.FaultStats {
	if e.active == nil {
		return nil
	}
	return e.active.Stats()
}

// Snapshot returns the profile in force, its seed and its per-fault
// counters, read together; nil when none can be.
func (e *Engine) Snapshot() (*profiles.Profile, uint64, []faults.FaultStats) {
	if e.active == nil {
		return nil, 0, nil
	}
	return e.active.Snapshot()
}

// Swap puts p in force, atomically, and records the change: streams
// already running keep the faults they started with. On error nothing
// changes.
func (e *Engine) Swap(p *profiles.Profile) error {
	if e.active == nil {
		return ErrNoProfile
	}
	e.changeMu.Lock()
	defer e.changeMu.Unlock()
	if err := e.active.Swap(p); err != nil {
		return err
	}
	e.observeChange(observe.ProfileSwap, 0)
	return nil
}

// SetEnabled switches fault index of the profile in force on or off,
// records the change, and returns the fault's counters from that profile.
// It wraps faults.ErrNoFault for a bad index.
func (e *Engine) SetEnabled(index int, on bool) (faults.FaultStats, error) {
	if e.active == nil {
		return faults.FaultStats{}, ErrNoProfile
	}
	e.changeMu.Lock()
	defer e.changeMu.Unlock()
	st, err := e.active.SetEnabled(index, on)
	if err != nil {
		return st, err
	}
	action := observe.ProfileDisable
	if on {
		action = observe.ProfileEnable
	}
	e.observeChange(action, index)
	return st, nil
}

// observeChange records a change of the profile in force, with changeMu
// held.
func (e *Engine) observeChange(action string, fault int) {
	p, seed := e.active.InForce()
	o := observe.Observation{
		Kind: observe.KindProfile,
		At:   e.Elapsed(),
		Profile: &observe.ProfileChange{
			Action: action, Name: p.Name, Seed: seed, Text: string(p.Text),
			Checks: severities(p, e.opts.Checks), Faults: len(p.Faults), Fault: fault,
		},
	}
	e.queue.Observe(&o)
}

// schedule arms a change at its time of the run.
func (e *Engine) schedule(c Change) {
	stop := e.clock.AfterFunc(c.At-e.Elapsed(), func() {
		var err error
		if c.Profile != nil {
			err = e.Swap(c.Profile)
		} else {
			_, err = e.SetEnabled(c.Fault, c.On)
		}
		if err != nil && e.opts.Logger != nil {
			e.opts.Logger.Warn("a recorded profile change could not be made again", "at", c.At, "error", fmt.Sprint(err))
		}
	})
	e.timers = append(e.timers, stop)
}
