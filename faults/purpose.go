package faults

import (
	"slices"

	"github.com/frayproxy/fray/proxy/mcp"
)

// The recoveries a profile can exist to exercise. A profile names them in
// its exercises key, or they are derived from its faults (Set.Needs).
const (
	// ExercisesCut: a stream cut by a fault while an answer was pending
	// on it, which a correct pair recovers by resuming it (2025-11-25) or
	// by re-issuing the call (2026-07-28).
	ExercisesCut = "cut"
	// ExercisesReconnect: a standalone GET stream cut by a fault, which a
	// correct client opens again.
	ExercisesReconnect = "reconnect"
	// ExercisesNewSession: a request of a session answered 404, after
	// which a correct client starts a new session.
	ExercisesNewSession = "new-session"
	// ExercisesRetry: a resumption or reconnection answered with an
	// error, which a correct client retries after the wait it was given.
	ExercisesRetry = "retry"
)

// Purposes lists the names a profile's exercises key may hold.
func Purposes() []string {
	return []string{ExercisesCut, ExercisesReconnect, ExercisesNewSession, ExercisesRetry}
}

// Need is one recovery a run must exercise before its verdict may pass:
// any of Any. Fault is the index of the fault it is derived from, -1 for
// one a profile names.
type Need struct {
	Fault int
	Kind  string
	Any   []string
}

// Needs derives what each fault exists to exercise from its traits and
// selectors: a fault that ends streams the POST answers or resumptions
// exercises cut recovery (a standalone GET stream: its reconnection, any
// stream: either), a 404 a new session, an error answer to a resumption
// or a standalone GET the retry. Faults that only delay, add noise or
// change what passes (latency, fragment, keepalive-noise, ...) exercise
// nothing: they are decorative, and alone never earn a pass for a
// recovery. A fault's need is listed once, in index order.
func (s *Set) Needs() []Need {
	var out []Need
	for _, f := range s.faults {
		if any := f.purposes(); len(any) > 0 {
			out = append(out, Need{Fault: f.index, Kind: f.def.Name, Any: any})
		}
	}
	return out
}

// purposes is what f exists to exercise, nil when it is decorative.
func (f *fault) purposes() []string {
	st := f.sel.streams
	has := func(t mcp.StreamType) bool { return st == 0 || st&(1<<t) != 0 }
	switch {
	case f.traits.Has(EndsStream):
		var out []string
		if has(mcp.StreamPost) || has(mcp.StreamResume) {
			out = append(out, ExercisesCut)
		}
		if has(mcp.StreamGet) {
			out = append(out, ExercisesReconnect)
		}
		return out
	case f.traits.Has(AnswersRequests) && f.status == 404:
		return []string{ExercisesNewSession}
	case f.traits.Has(AnswersRequests) && f.status >= 400 && st != 0 && !has(mcp.StreamPost) && !has(mcp.StreamLegacy) && !has(mcp.StreamOther):
		return []string{ExercisesRetry}
	}
	return nil
}

// statusOf is the status a fault spec answers with, 0 for none.
func statusOf(sp Spec) int {
	switch v := sp.Params["status"].(type) {
	case int64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// ValidPurpose reports whether name is one of Purposes.
func ValidPurpose(name string) bool { return slices.Contains(Purposes(), name) }
