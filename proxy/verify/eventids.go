package verify

import "time"

// A logical stream keeps its last idWindow events with an id (l.events)
// to judge a replay; their ids live in one byte arena per stream rather
// than one string each, so that entering an event allocates nothing once
// the stream's ring and arena have grown. The arena only grows at its
// end, in the order the events came, so the live ids are always its tail,
// from the oldest event's on: an id that leaves the ring leaves its bytes
// behind it. When the arena is full, that tail is copied, in one move,
// into the spare arena (kept from the last compaction) and the two swap.
// An event's place is counted in all the bytes the stream ever entered
// (modulo 2^32, more than any arena holds), so that moving the tail
// changes only where the arena starts (evBase), not the events. In a
// steady state both arenas hold about twice the live ids' bytes and
// neither is reallocated.

// eventID returns the id of one of l's events; valid until the next
// addEvent.
func (l *logical) eventID(e *evRec) []byte {
	o := e.off - l.evBase
	return l.evIDs[o : o+e.n]
}

// addEvent enters an event with an id into l's ring, evicting the oldest
// once the ring holds idWindow. pos is its place in the stream, one more
// than the last event's but for the first event since the ring was empty:
// the ring counts its records' places from it (eventPos).
func (l *logical) addEvent(id []byte, pos int64, dispatched bool, at time.Duration) {
	i, oldest := len(l.events), 0 // oldest: the oldest slot the new event leaves
	if i == 0 {
		l.evFirst = pos
		if l.events == nil {
			// Room for a short stream (a POST's priming event and its
			// answer) at once; append grows a longer one to idWindow.
			l.events = make([]evRec, 0, 8)
		}
	}
	l.evLast = pos
	if i < idWindow {
		l.events = append(l.events, evRec{})
	} else {
		i = l.evNext
		if l.evNext++; l.evNext == idWindow {
			l.evNext = 0
		}
		l.evFolded = true
		oldest = l.evNext
	}
	if len(l.evIDs)+len(id) > cap(l.evIDs) {
		l.compactIDs(i, oldest, len(id))
	}
	er := &l.events[i]
	n := len(l.evIDs)
	er.off, er.n = l.evBase+uint32(n), uint32(len(id))
	// The arena has room, as compactIDs left it: no append to grow it.
	l.evIDs = l.evIDs[:n+len(id)]
	copy(l.evIDs[n:], id)
	er.atd = int64(at) << 1
	if dispatched {
		er.atd |= 1
	}
}

// eventPos is the place in the stream of the event in slot i of l's ring.
// The slots are filled in the order the events come, from the first slot
// once the ring is empty, and again from the first once it holds idWindow:
// the event in slot i is the last one entered there.
func (l *logical) eventPos(i int) int64 {
	entered := l.evLast - l.evFirst + 1
	if entered <= idWindow {
		return l.evFirst + int64(i)
	}
	newest := int((entered - 1) % idWindow)
	return l.evLast - int64((newest-i+idWindow)%idWindow)
}

// compactIDs moves the live ids, those of every event but the one in slot
// (which a new event is taking), from the one in slot oldest on, into an
// arena with room for extra more bytes and twice the live ones, reusing
// the spare arena when it is big enough.
func (l *logical) compactIDs(slot, oldest, extra int) {
	from := l.evBase + uint32(len(l.evIDs)) // no live id
	if oldest != slot {
		from = l.events[oldest].off
	}
	live := l.evIDs[from-l.evBase:]
	need := max(2*len(live), 256) + extra
	to := l.evSpare[:0]
	if cap(to) < need {
		to = make([]byte, 0, need)
	}
	l.evIDs, l.evSpare = append(to, live...), l.evIDs[:0]
	l.evBase = from
}

// dropEvents forgets l's events and their ids. evFolded stays: what the
// stream sent before is forgotten. A ring filled again starts at its
// first slot, so that its slots stay in the order the events came.
func (l *logical) dropEvents() {
	l.events, l.evIDs, l.evSpare, l.evNext = nil, nil, nil, 0
}
