package verify

import "time"

// A logical stream keeps its last idWindow events with an id (l.events)
// to judge a replay; their ids live in one byte arena per stream rather
// than one string each, so that entering an event allocates nothing once
// the stream's ring and arena have grown. The arena only grows at its
// end: an id that leaves the ring leaves its bytes behind, and when the
// arena is full its live ids are copied into the spare arena (kept from
// the last compaction) and the two swap. In a steady state both arenas
// hold about twice the live ids' bytes and neither is reallocated.

// eventID returns the id of one of l's events; valid until the next
// addEvent.
func (l *logical) eventID(e *evRec) []byte { return l.evIDs[e.off : e.off+e.n] }

// addEvent enters an event with an id into l's ring, evicting the oldest
// once the ring holds idWindow.
func (l *logical) addEvent(id []byte, pos int64, dispatched bool, at time.Duration) {
	i := len(l.events)
	if i < idWindow {
		l.events = append(l.events, evRec{})
	} else {
		i = l.evNext
		l.evNext = (l.evNext + 1) % idWindow
		l.evFolded = true
	}
	er := &l.events[i]
	er.n = 0 // its old id is garbage now
	if len(l.evIDs)+len(id) > cap(l.evIDs) {
		l.compactIDs(len(id))
	}
	er.off, er.n = int32(len(l.evIDs)), int32(len(id))
	l.evIDs = append(l.evIDs, id...)
	er.pos, er.dispatched, er.at = pos, dispatched, at
}

// compactIDs copies the live ids into an arena with room for extra more
// bytes and twice the live ones, reusing the spare arena when it is big
// enough.
func (l *logical) compactIDs(extra int) {
	live := 0
	for i := range l.events {
		live += int(l.events[i].n)
	}
	need := max(2*live, 256) + extra
	to := l.evSpare[:0]
	if cap(to) < need {
		to = make([]byte, 0, need)
	}
	for i := range l.events {
		e := &l.events[i]
		off := int32(len(to))
		to = append(to, l.eventID(e)...)
		e.off = off
	}
	l.evIDs, l.evSpare = to, l.evIDs[:0]
}

// dropEvents forgets l's events and their ids.
func (l *logical) dropEvents() {
	l.events, l.evIDs, l.evSpare = nil, nil, nil
}
