// Package interop holds end-to-end tests that run real MCP peers through
// fray: the official TypeScript SDK and the MCP conformance suite from
// examples/node (Node.js subprocesses), and the official Go SDK peers from
// examples/gosdk (in-process). Every peer listens on 127.0.0.1 with an
// OS-chosen port; fray runs in-process via httptest.
//
// The Node-based tests skip, with a message saying so, when node or npm is
// not on PATH. When node is there but examples/node/node_modules is not,
// they run "npm ci" there first.
package interop
