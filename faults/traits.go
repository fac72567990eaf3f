package faults

import (
	"math/bits"
	"slices"
	"strings"
)

// Traits say what a fault does to traffic, as a set of bits. Every kind
// declares its traits and every Firing carries them, so that what reads
// firings (the verifier, reports, the timeline) can tell which end a
// consequence belongs to without knowing kinds by name: a kind added
// later is attributed correctly as long as it declares what it does.
type Traits uint32

// The traits. A kind has every one that describes something it can do.
const (
	// EndsStream: the client's side of a stream ends (cleanly or with a
	// reset) before the server ended it: close, lose, reset, a timed close.
	EndsStream Traits = 1 << iota
	// HoldsStream: the stream stops for good and stays open, as if the
	// connection hung: a stall for ever.
	HoldsStream
	// Delays: traffic is only moved in time: delay, latency, throttle,
	// fragment, a stall for a while.
	Delays
	// WithholdsEvents: events the server sent never reach the client while
	// the stream goes on: drop, drop-priming, and lose's swallowed events.
	WithholdsEvents
	// HidesIDs: the ids the client gets are removed or changed, so it
	// holds another id than the server sent: strip-id, rewrite-id,
	// drop-priming.
	HidesIDs
	// ChangesRetry: the retry the client gets is set or removed: set-retry,
	// strip-retry.
	ChangesRetry
	// Duplicates: the client gets an event more than once: duplicate.
	Duplicates
	// Corrupts: an event's data is broken: corrupt.
	Corrupts
	// InsertsBytes: the client gets bytes the server never sent (between
	// whole events): keepalive-noise.
	InsertsBytes
	// AnswersRequests: fray answers the client itself and the server never
	// sees the request: status, drop-request.
	AnswersRequests
	// ChangesLastEventID: the Last-Event-ID the server gets differs from
	// the client's: strip-last-event-id, rewrite-last-event-id.
	ChangesLastEventID
	// StripsHeaders: headers are removed from (or set on) the request or
	// the response: strip-header, rewrite-header.
	StripsHeaders
	// Armed: the fault is armed as the stream starts and acts only if its
	// condition comes later (idle-close, a timed close). Its firing at the
	// start says it was armed, not that it acted: the stream's end by a
	// fault shows that it did.
	Armed

	numTraits = iota
)

var traitNames = [numTraits]string{
	"ends-stream", "holds-stream", "delays", "withholds-events", "hides-ids", "changes-retry",
	"duplicates", "corrupts", "inserts-bytes", "answers-requests", "changes-last-event-id", "strips-headers", "armed",
}

// Has reports whether t has every trait of u.
func (t Traits) Has(u Traits) bool { return t&u == u }

// Any reports whether t has at least one trait of u.
func (t Traits) Any(u Traits) bool { return t&u != 0 }

// Names lists t's traits by name, in declaration order.
func (t Traits) Names() []string {
	var out []string
	for t != 0 {
		i := bits.TrailingZeros32(uint32(t))
		t &^= 1 << i
		if i < numTraits {
			out = append(out, traitNames[i])
		}
	}
	return out
}

// String returns the names joined with "|", "" for none.
func (t Traits) String() string { return strings.Join(t.Names(), "|") }

// ParseTraits is the inverse of Names; unknown names are reported with
// ok false and left out.
func ParseTraits(names []string) (t Traits, ok bool) {
	ok = true
	for _, n := range names {
		if i := slices.Index(traitNames[:], n); i >= 0 {
			t |= 1 << i
		} else {
			ok = false
		}
	}
	return t, ok
}
