// Package trace records what fray observed to a file and reads it back:
// a JSON Lines stream, one header line, one line per observe.Observation
// in the order the proxy reported them, and an end line.
//
//	proxy --Observation--> Writer --JSON Lines (gzip for .gz)--> file
//	file --Reader--> Observation values, in order --> verifier, timeline, replay
//
// The format is versioned by the header's "fray_trace" member (Version);
// it is described member by member in docs/reports.md ("The trace
// format"). A Reader refuses a newer version, a file that is no trace,
// and a truncated trace, each with an *Error that names the file and the
// line; with ReadOptions.Partial it yields the complete part of a
// truncated trace and says what it dropped.
//
// Header values that carry credentials are replaced by Redacted unless
// the writer is told not to: Authorization, Cookie, Set-Cookie,
// Proxy-Authorization, and any name the caller adds.
package trace
