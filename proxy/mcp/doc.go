// Package mcp is the vocabulary of MCP over HTTP that every layer of fray
// shares: what kind of exchange or stream a request opens, what kind of
// JSON-RPC message a payload holds, the header names of the transports, the
// protocol revisions and what each of them promises, and the one classifier
// that turns an HTTP request into those terms.
//
// It is a leaf: it imports nothing of fray, so that the fault decisions,
// the proxy, the verifier, traces and replay all speak of the same things
// in the same words.
package mcp
