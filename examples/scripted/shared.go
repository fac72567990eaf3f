package scripted

import "sync"

// More client misbehaviours, each one a released client was found to
// have (the probe catalog names them). Their values start at 48, apart
// from the other blocks of ClientFault.
const (
	// SharedLastEventID keeps one last event id for all the client's
	// streams, so that the standalone GET stream is resumed with the id
	// of whichever stream delivered an id last, a POST answer stream's
	// included (client.last-event-id).
	SharedLastEventID ClientFault = 48 + iota
)

// sharedID is the last event id delivered on any of a client's streams,
// which a client with SharedLastEventID resumes its standalone stream
// from. It is safe for concurrent use: the standalone stream is read
// beside the calls.
type sharedID struct {
	mu sync.Mutex
	id string
}

// noteID records id, delivered on one of the client's streams.
func (c *client) noteID(id string) {
	c.shared.mu.Lock()
	c.shared.id = id
	c.shared.mu.Unlock()
}

// standaloneLEID returns the Last-Event-ID the standalone stream is
// resumed with: own, the last id it delivered, unless the client shares
// one id among its streams.
func (c *client) standaloneLEID(own string) string {
	if c.opts.Fault != SharedLastEventID {
		return own
	}
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if c.shared.id == "" {
		return own
	}
	return c.shared.id
}
