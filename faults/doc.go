// Package faults decides which faults hit which MCP traffic. It never does
// I/O: the proxy's stream pump asks a Plan what to do with each exchange,
// stream and SSE event, and carries the answer out.
//
//	client <-> pump (carries out) <-> upstream
//	             |
//	             v  Exchange / Stream / Start / Event
//	           Plan (decides, from the event, the stream's state,
//	                 the times in the inputs and a seeded source)
//
// A fault is a kind (one file per kind, registered by name in registry.go),
// a selector (which traffic) and the kind's parameters. Faults are written
// as Specs, the generic form a profile decodes to, and compiled with
// Compile into a Set, which implements Plan.
//
// Decisions are deterministic: each fault draws from its own PCG source,
// seeded from the Set's seed, the fault's index and the identity of the
// exchange or stream (session number, stream type, JSON-RPC method and id,
// and the stream number only for exchanges without an id), so concurrent
// requests are decided alike whatever order they arrive in. Only the
// `times` counters are shared between streams.
package faults
