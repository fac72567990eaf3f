package faults

import (
	"fmt"
	"slices"

	"github.com/frayproxy/fray/proxy/mcp"
)

// Target says what a kind acts on, and so how its probability is drawn.
type Target uint8

const (
	// OnExchange kinds act on an HTTP exchange before it is forwarded;
	// probability is drawn per exchange.
	OnExchange Target = iota + 1
	// OnStream kinds act on a whole SSE stream; probability is drawn once
	// per stream and `times` counts streams.
	OnStream
	// OnEvent kinds act on single SSE events; probability is drawn per
	// event and `times` counts events.
	OnEvent
)

var targetNames = [...]string{OnExchange: "exchange", OnStream: "stream", OnEvent: "event"}

// String returns "exchange", "stream" or "event".
func (t Target) String() string {
	if int(t) < len(targetNames) && targetNames[t] != "" {
		return targetNames[t]
	}
	return "unknown"
}

// Kind defines a fault kind: its name in profiles, what it acts on, its
// own parameters, what it does to traffic, and how a fault of the kind is
// built from its parameters. The built-in kinds are one file each,
// listed in registry.go; Register adds others. A Kind is read-only once
// registered.
type Kind struct {
	// Name is the profile's `kind` value, e.g. "drop".
	Name string
	// On is what the kind acts on.
	On Target
	// Params are the kind's own keys (the selectors are every kind's).
	Params []string
	// Summary says in one sentence what the kind does.
	Summary string
	// Traits say what the kind does to traffic; each firing carries them,
	// with those the built Effect adds.
	Traits Traits
	// Once: the kind fires at most once per stream (it ends or stops it).
	Once bool
	// OwnsAfter: "after" is the kind's parameter, not the schedule's.
	OwnsAfter bool
	// Build reads the fault's parameters from a and returns its effect.
	// On a bad parameter it records the problem with a.Fail (the readers
	// of Args do so themselves) and may return the zero Effect.
	Build func(a *Args) Effect
}

// Effect is what a fault does, built from its parameters: at most one of
// Exchange (for OnExchange kinds), Start or Event (for OnStream and OnEvent
// kinds) is set. Traits are added to the kind's own, for effects whose
// nature depends on their parameters (a stall for ever holds the stream; a
// stall for a while only delays it).
type Effect struct {
	Exchange ExchangeEffect
	Start    StartEffect
	Event    EventEffect
	Traits   Traits
}

func (e Effect) empty() bool { return e.Exchange == nil && e.Start == nil && e.Event == nil }

// ExchangeEffect changes an HTTP exchange before it is forwarded. Its
// methods are called concurrently for different exchanges, so it must not
// change its own fields.
type ExchangeEffect interface {
	// Applies reports whether the effect has anything to do with ex,
	// which matched the fault's selector.
	Applies(ex *mcp.Exchange) bool
	// Exchange writes the effect's part of the decision into act.
	Exchange(ex *mcp.Exchange, r *Rand, act *ExchangeAction)
}

// StreamKeeper is implemented by an EventEffect that may rule out a
// stream by how the upstream answered: Keeps reports whether the fault
// acts on the stream opened in answer to ex, whose Response is set. It is
// called concurrently for different streams.
type StreamKeeper interface {
	Keeps(ex *mcp.Exchange) bool
}

// StartEffect decides once, when a stream starts. It is called
// concurrently for different streams.
type StartEffect interface {
	Start(act *StreamAction)
}

// StreamState is what an event effect may remember about its stream. The
// zero value is a stream on which nothing matched yet.
type StreamState struct {
	// Seen counts the events that matched the fault's selector before
	// this one; effects that count events advance it in Applies.
	Seen int
	// Primed is set by effects that wait for a priming event to pass.
	Primed bool
	// Held counts the bytes an effect holds back (buffer).
	Held int
}

// EventEffect changes SSE events. One stream's calls come in order from
// one goroutine; different streams call concurrently, each with its own
// StreamState.
type EventEffect interface {
	// Applies reports whether the effect has anything to do with ev,
	// which matched the selector; it is called once per such event, in
	// order, and may update st.
	Applies(ev *mcp.Event, st *StreamState) bool
	// Event writes the effect's part of the decision into act.
	Event(ev *mcp.Event, r *Rand, act *EventAction)
}

// KindInfo describes a registered kind, for help texts and references.
type KindInfo struct {
	// Name is the profile's `kind` value.
	Name string
	// On is "exchange", "stream" or "event".
	On string
	// Params are the kind's own keys.
	Params []string
	// Summary is one sentence on what the kind does.
	Summary string
	// Traits are the kind's declared traits.
	Traits Traits
}

// Kinds lists the registered kinds in registry order.
func Kinds() []KindInfo {
	out := make([]KindInfo, 0, len(registry))
	for _, k := range registry {
		out = append(out, k.info())
	}
	return out
}

func (k *Kind) info() KindInfo {
	return KindInfo{Name: k.Name, On: k.On.String(), Params: slices.Clone(k.Params), Summary: k.Summary, Traits: k.Traits}
}

// kindNames are the registered kinds' names, for a did-you-mean.
func kindNames() []string {
	out := make([]string, 0, len(registry))
	for _, k := range registry {
		out = append(out, k.Name)
	}
	return out
}

// LookupKind returns the registered kind called name, and whether there
// is one.
func LookupKind(name string) (KindInfo, bool) {
	if k := lookupKind(name); k != nil {
		return k.info(), true
	}
	return KindInfo{}, false
}

// SelectorKeys lists the keys any fault may use to select its traffic.
func SelectorKeys() []string { return append([]string(nil), selectorKeys...) }

func lookupKind(name string) *Kind {
	for _, k := range registry {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Register adds a kind, so that profiles may name it. It is meant for
// init functions and tests: it must not run concurrently with Compile or
// another Register. It fails on a kind with no name, a name already
// registered, no target, no Build, or a parameter that is a selector key.
func Register(k *Kind) error {
	switch {
	case k == nil || k.Name == "":
		return fmt.Errorf("faults: register: a kind needs a name")
	case lookupKind(k.Name) != nil:
		return fmt.Errorf("faults: register %q: a kind of that name exists", k.Name)
	case k.On < OnExchange || k.On > OnEvent:
		return fmt.Errorf("faults: register %q: On must be OnExchange, OnStream or OnEvent", k.Name)
	case k.Build == nil:
		return fmt.Errorf("faults: register %q: no Build", k.Name)
	}
	for _, p := range k.Params {
		if slices.Contains(selectorKeys, p) {
			return fmt.Errorf("faults: register %q: parameter %q is a selector key", k.Name, p)
		}
	}
	registry = append(registry, k)
	return nil
}

// checkEffect reports a Build that returned effects that do not fit the
// kind's target: a programming error in the kind.
func checkEffect(k *Kind, e Effect) error {
	switch {
	case e.Exchange != nil && (e.Start != nil || e.Event != nil), e.Start != nil && e.Event != nil:
		return fmt.Errorf("kind %q built more than one effect", k.Name)
	case k.On == OnExchange && (e.Start != nil || e.Event != nil):
		return fmt.Errorf("kind %q acts on exchanges but built a stream or event effect", k.Name)
	case k.On != OnExchange && e.Exchange != nil:
		return fmt.Errorf("kind %q acts on %ss but built an exchange effect", k.Name, k.On)
	}
	return nil
}
