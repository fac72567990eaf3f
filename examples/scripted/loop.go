package scripted

import "time"

// More client misbehaviours, each one a released client was found to
// have (the probe catalog names them). Their values start at 64, apart
// from the other blocks of ClientFault.
const (
	// LoopOnEmptyResume takes a resumption answered 200 with a stream
	// that ends before any event for a reconnection that worked: its
	// attempt counter starts again, and it resumes from the same id after
	// the retry it was given, at that one pace, for as long as the answer
	// stays empty (client.resume-loop).
	LoopOnEmptyResume ClientFault = 64 + iota
)

// retryWait is how long the client waits before it resumes a stream that
// was given retry, once the stream ended: the retry, and when the
// resumption it had made brought nothing, the wait its failures give on
// top (backoff), so that the waits grow whatever the retry. A client with
// LoopOnEmptyResume waits the retry however often the answer was empty.
func (c *client) retryWait(retry, backoff time.Duration, emptyResume bool) time.Duration {
	if emptyResume && c.opts.Fault != LoopOnEmptyResume {
		return retry + backoff
	}
	return retry
}
