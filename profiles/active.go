package profiles

import (
	"sync/atomic"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// Active is the profile in force, which an admin may swap while the proxy
// runs. It implements faults.Plan and is safe for concurrent use. A stream
// keeps the faults it started with when the profile is swapped (but sees
// faults switched off); the counters start again from zero with each swap.
type Active struct {
	seed *uint64
	cur  atomic.Pointer[activeState]
	skip atomic.Pointer[func(faults.Skip)]
}

type activeState struct {
	profile *Profile
	set     *faults.Set
}

var _ faults.Plan = (*Active)(nil)

// NewActive compiles p with its own seed, or with *seed when seed is not
// nil (a --seed flag); the override then holds for every Swap too.
func NewActive(p *Profile, seed *uint64) (*Active, error) {
	a := &Active{}
	if seed != nil {
		s := *seed
		a.seed = &s
	}
	if err := a.Swap(p); err != nil {
		return nil, err
	}
	return a, nil
}

// Swap compiles p and makes it the active profile, atomically; on error
// the active profile is unchanged.
func (a *Active) Swap(p *Profile) error {
	seed := p.Seed
	if a.seed != nil {
		seed = *a.seed
	}
	set, err := p.Plan(seed)
	if err != nil {
		return err
	}
	if fn := a.skip.Load(); fn != nil {
		set.OnSkip(*fn)
	}
	a.cur.Store(&activeState{profile: p, set: set})
	return nil
}

// InForce returns the active profile and the seed it was compiled with,
// read together; the profile must not be modified.
func (a *Active) InForce() (*Profile, uint64) {
	st := a.cur.Load()
	return st.profile, st.set.Seed()
}

// Profile returns the active profile; it must not be modified.
func (a *Active) Profile() *Profile { return a.cur.Load().profile }

// Seed returns the seed the active profile was compiled with.
func (a *Active) Seed() uint64 { return a.cur.Load().set.Seed() }

// SetEnabled switches fault index of the active profile on or off and
// returns its counters, from that same profile; it wraps
// faults.ErrNoFault for a bad index.
func (a *Active) SetEnabled(index int, on bool) (faults.FaultStats, error) {
	set := a.cur.Load().set
	if err := set.SetEnabled(index, on); err != nil {
		return faults.FaultStats{}, err
	}
	return set.Stats()[index], nil
}

// Snapshot returns the active profile, its seed and its per-fault
// counters, read together; the profile must not be modified.
func (a *Active) Snapshot() (*Profile, uint64, []faults.FaultStats) {
	st := a.cur.Load()
	return st.profile, st.set.Seed(), st.set.Stats()
}

// Stats returns the active profile's per-fault counters.
func (a *Active) Stats() []faults.FaultStats { return a.cur.Load().set.Stats() }

// Exchange implements faults.Plan with the active profile.
func (a *Active) Exchange(ex *mcp.Exchange) faults.ExchangeAction {
	return a.cur.Load().set.Exchange(ex)
}

// Stream implements faults.Plan with the active profile.
func (a *Active) Stream(ex *mcp.Exchange) faults.StreamPlan {
	return a.cur.Load().set.Stream(ex)
}

// OnSkip has fn told of every draw that skips a fault of the profile in
// force, and of every profile swapped in later (faults.Set.OnSkip).
func (a *Active) OnSkip(fn func(faults.Skip)) {
	a.skip.Store(&fn)
	a.cur.Load().set.OnSkip(fn)
}

// FiringSeed is faults.Set.FiringSeed of the profile in force.
func (a *Active) FiringSeed(index int) (seed uint64, fired, skipped int, ok bool) {
	return a.cur.Load().set.FiringSeed(index)
}
