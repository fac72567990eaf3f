package mcp

// The protocol revisions whose rules differ for fray. Revisions are dates,
// so they compare as strings.
const (
	// RevLegacy is the HTTP+SSE transport's revision: two endpoints, no
	// resumption.
	RevLegacy = "2024-11-05"
	// RevStreamable introduced Streamable HTTP with optional
	// resumability: SSE ids and Last-Event-ID.
	RevStreamable = "2025-03-26"
	// RevPolling added priming events, retry and server-side disconnects
	// (SEP-1699).
	RevPolling = "2025-11-25"
	// RevStateless removed resumability and sessions (SEP-2575, SEP-2567).
	RevStateless = "2026-07-28"
)

// Resumable reports whether rev has SSE resumability (event ids,
// Last-Event-ID, replay). An unknown revision ("") has none fray can rely
// on.
func Resumable(rev string) bool { return rev >= RevStreamable && rev < RevStateless }

// Primes reports whether rev asks servers for priming events and a retry
// before they close a stream.
func Primes(rev string) bool { return rev >= RevPolling && rev < RevStateless }

// Sessions reports whether rev keeps the Mcp-Session-Id rules; an unknown
// revision is given the benefit of the doubt, since a client that sends
// the header speaks Streamable HTTP.
func Sessions(rev string) bool { return rev == "" || rev >= RevStreamable && rev < RevStateless }
