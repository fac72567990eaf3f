package scripted

import "errors"

// More client misbehaviours, each one a released client was found to
// have (the probe catalog names them). Their values start at 80, apart
// from the other blocks of ClientFault.
const (
	// TearDownOnGETFailure takes the failure of its standalone GET stream
	// (a 405 to a reconnection of it, or its attempts on it spent) for the
	// failure of the whole connection: the calls in flight are given up
	// with it, their answer streams left (client.survives-get-failure). A
	// 405 to the stream's first GET is understood, as the server offering
	// no stream.
	TearDownOnGETFailure ClientFault = 80 + iota
)

// errTornDown is what the calls of a client with TearDownOnGETFailure end
// with once its standalone stream failed.
var errTornDown = errors.New("the standalone stream failed: connection closed")

// standaloneFailed is the client's answer to the failure of its
// standalone stream, a 405 or its attempts spent; reconnection says
// whether the stream had been open before.
func (c *client) standaloneFailed(reconnection bool) {
	if reconnection && c.opts.Fault == TearDownOnGETFailure {
		c.teardown(errTornDown)
	}
}
