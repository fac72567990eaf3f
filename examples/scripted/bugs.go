package scripted

import (
	"bytes"
	"fmt"

	"github.com/frayproxy/fray/proxy/sse"
)

// More client misbehaviours, each the one a released SDK was found to
// have (the probe catalog names them). They continue the ClientFault
// values of client.go.
const (
	// ForgetIDOnEmptyResume: a resumed stream that ends before any event
	// with an id makes the client forget the id it resumed from, so its
	// next GET carries no Last-Event-ID (client.last-event-id).
	ForgetIDOnEmptyResume ClientFault = 32 + iota
	// GiveUpOnTransient: a 5xx or 429 answered to a reconnection ends the
	// call for good (client.retries-transient).
	GiveUpOnTransient
	// FailOnRetryField: a retry field errors the stream and the call, as
	// an SSE parser that rejects the field does (client.reconnects).
	FailOnRetryField
	// FailOnEmptyData: an event with an id and empty data (the priming
	// event) is decoded as JSON, which fails the call (client.reconnects).
	FailOnEmptyData
	// NoBackoff: a stream that ends without the result, or the
	// standalone stream, is reconnected at once, with no retry budget
	// spent on a call, however often it happens (client.backoff).
	NoBackoff
)

// choke is where a client with FailOnRetryField or FailOnEmptyData fails
// on an event a correct client takes in its stride.
func (c *client) choke(e *sse.Event) error {
	switch {
	case c.opts.Fault == FailOnRetryField && e.HasRetry:
		return fmt.Errorf("unsupported SSE field retry: %d", e.Retry)
	case c.opts.Fault == FailOnEmptyData && e.Complete && e.HasID && len(bytes.TrimSpace(e.Data)) == 0:
		return fmt.Errorf("event %q: unexpected end of JSON input", e.ID)
	}
	return nil
}
