package verify

// Protocol revisions are dates, so they compare as strings.
const (
	revStreamable = "2025-03-26" // Streamable HTTP, optional resumability
	revPriming    = "2025-11-25" // SEP-1699: priming events, retry, server disconnects
	revNoResume   = "2026-07-28" // SEP-2575: no event ids, no Last-Event-ID
)

// resumable reports whether rev has SSE resumability (ids, Last-Event-ID,
// replay). An unknown revision ("") has none that fray can rely on.
func resumable(rev string) bool { return rev >= revStreamable && rev < revNoResume }

// primes reports whether rev owes priming events and makes retry before
// a server-side close a rule.
func primes(rev string) bool { return rev >= revPriming && rev < revNoResume }

// sessionRule reports whether rev keeps the Mcp-Session-Id rules the
// checks read; an unknown revision is given the benefit of the doubt,
// since a client that sends the header speaks Streamable HTTP.
func sessionRule(rev string) bool { return rev == "" || rev >= revStreamable && rev < revNoResume }
