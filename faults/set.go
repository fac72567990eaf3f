package faults

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// Spec is one fault as a profile writes it: a kind and the fault table's
// other keys (selectors and the kind's parameters), with TOML's Go types:
// string, int64, float64, bool, []any and map[string]any.
type Spec struct {
	Kind   string
	Params map[string]any
}

// Set is a compiled list of faults. It implements Plan and is safe for
// concurrent use; faults can be switched on and off while it is in use.
type Set struct {
	seed     uint64
	faults   []*fault
	exchange []*fault // faults with an exchange effect
	stream   []*fault // faults with a start or event effect
	// skipHook, when set, is told of every draw that skipped a fault.
	skipHook atomic.Pointer[func(Skip)]
}

// fault is one compiled fault.
type fault struct {
	index   int
	def     *Kind
	sel     selector
	onEx    ExchangeEffect
	onStart StartEffect
	onEvent EventEffect
	traits  Traits // what its firings carry
	limit   limit
	enabled atomic.Bool
	fired   atomic.Int64
	draws   drawLog
	status  int // the status a status fault answers with, for Needs
}

var _ Plan = (*Set)(nil)

// Compile checks every spec and returns the Set, or a ParamErrors with
// every problem found (nil Set then). An empty list gives a Set that never
// fires. seed seeds every random choice.
func Compile(seed uint64, specs []Spec) (*Set, error) {
	s := &Set{seed: seed}
	var errs ParamErrors
	for i, sp := range specs {
		f, fe := compileOne(i, sp)
		errs = append(errs, fe...)
		if f == nil {
			continue
		}
		s.faults = append(s.faults, f)
		if f.onEx != nil {
			s.exchange = append(s.exchange, f)
		}
		if f.onStart != nil || f.onEvent != nil {
			s.stream = append(s.stream, f)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

func compileOne(i int, sp Spec) (*fault, []*ParamError) {
	def := lookupKind(sp.Kind)
	if def == nil {
		msg := fmt.Sprintf("unknown kind %q", sp.Kind) + DidYouMean(sp.Kind, kindNames())
		if sp.Kind == "" {
			msg = "kind is missing"
		}
		return nil, []*ParamError{{Fault: i, Key: "kind", Msg: msg, Err: ErrUnknownKind}}
	}
	a := newArgs(i, def.Name, sp.Params)
	eff := def.Build(a)
	if err := checkEffect(def, eff); err != nil {
		a.Fail("kind", ErrUnknownKind, "%v", err)
	}
	f := &fault{index: i, def: def, onEx: eff.Exchange, onStart: eff.Start, onEvent: eff.Event, traits: def.Traits, status: statusOf(sp)}
	if eff.Traits != 0 {
		f.traits = eff.Traits
	}
	f.sel = readSelector(a, selectorContext{
		ownsAfter: def.OwnsAfter,
		events:    f.onEvent != nil || (eff.empty() && def.On != OnExchange),
		rpcEvents: def.On == OnEvent,
	})
	f.limit = limit{max: f.sel.times, perSession: f.sel.perSession}
	f.enabled.Store(true)
	checkUnknown(a, def)
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	return f, nil
}

// checkUnknown reports keys that are neither selectors nor the kind's own.
func checkUnknown(a *Args, def *Kind) {
	for _, k := range sortedKeys(a.m) {
		if k == "kind" || slices.Contains(def.Params, k) || slices.Contains(selectorKeys, k) {
			continue
		}
		if owner := paramOwner(k); owner != "" {
			a.Fail(k, ErrUnknownKey, "%s is a parameter of kind %q, not of %q (%s takes %s)",
				k, owner, def.Name, def.Name, paramList(def))
			continue
		}
		if s := suggest(k, def.Params, selectorKeys); s != "" {
			a.Fail(k, ErrUnknownKey, "unknown key %q (did you mean %q?)", k, s)
			continue
		}
		a.Fail(k, ErrUnknownKey, "unknown key %q (kind %q takes %s, and the selectors)", k, def.Name, paramList(def))
	}
}

func paramOwner(key string) string {
	for _, k := range registry {
		if slices.Contains(k.Params, key) {
			return k.Name
		}
	}
	return ""
}

func paramList(def *Kind) string {
	if len(def.Params) == 0 {
		return "no parameters"
	}
	return strings.Join(def.Params, ", ")
}

// Len returns the number of faults.
func (s *Set) Len() int { return len(s.faults) }

// Seed returns the seed the Set was compiled with.
func (s *Set) Seed() uint64 { return s.seed }

// SetEnabled switches fault index on or off. Streams already running see
// the change at their next event. It fails with ErrNoFault for a bad index.
func (s *Set) SetEnabled(index int, on bool) error {
	if index < 0 || index >= len(s.faults) {
		return fmt.Errorf("fault %d of %d: %w", index, len(s.faults), ErrNoFault)
	}
	s.faults[index].enabled.Store(on)
	return nil
}

// FaultStats is one fault's counters.
type FaultStats struct {
	Index   int    `json:"index"`
	Kind    string `json:"kind"`
	Enabled bool   `json:"enabled"`
	// Fired counts the decisions the fault took part in.
	Fired int64 `json:"fired"`
	// Drawn counts the opportunities its probability was drawn for, and
	// Skipped those the draw ruled out (both 0 for a certain fault).
	Drawn   int64 `json:"drawn,omitempty"`
	Skipped int64 `json:"skipped,omitempty"`
	// On is where the fault acts and draws: "exchange", "stream" or
	// "event".
	On string `json:"on"`
	// Probability is the fault's probability.
	Probability float64 `json:"probability"`
}

// Stats returns every fault's counters, by index.
func (s *Set) Stats() []FaultStats {
	out := make([]FaultStats, len(s.faults))
	for i, f := range s.faults {
		out[i] = FaultStats{Index: f.index, Kind: f.def.Name, Enabled: f.enabled.Load(), Fired: f.fired.Load(),
			Drawn: f.draws.drawn.Load(), Skipped: f.draws.skipped.Load(), On: f.def.On.String(), Probability: f.sel.probability}
	}
	return out
}

func (f *fault) firing() Firing { return Firing{Index: f.index, Kind: f.def.Name, Traits: f.traits} }
