package timeline

import (
	"cmp"
	"fmt"
	"slices"
)

// layout orders the lanes by session and start, lays the event columns
// out lane by lane, and resolves the links.
func (b *builder) layout() {
	m := b.m
	order := make([]int, len(b.lanes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		a, c := b.lanes[x], b.lanes[y]
		return cmp.Or(cmp.Compare(a.Session, c.Session), cmp.Compare(a.StartUS, c.StartUS), cmp.Compare(a.Exchange, c.Exchange))
	})
	newLane := make([]int, len(b.lanes))
	newEvent := make([]int, len(b.events))
	m.Lanes = make([]Lane, 0, len(b.lanes))
	m.Sessions = []Session{}
	for _, old := range order {
		l := b.lanes[old]
		li := len(m.Lanes)
		newLane[old] = li
		if n := len(m.Sessions); n == 0 || m.Sessions[n-1].Seq != l.Session {
			label := fmt.Sprintf("session %d", l.Session)
			if l.Session == 0 {
				label = "no session"
			}
			m.Sessions = append(m.Sessions, Session{Seq: l.Session, Label: label})
		}
		s := &m.Sessions[len(m.Sessions)-1]
		s.Lanes = append(s.Lanes, li)
		l.First, l.Events = len(m.Events.Lane), len(l.events)
		for _, ri := range l.events {
			r := &b.events[ri]
			newEvent[ri] = len(m.Events.Lane)
			e := &m.Events
			e.Lane = append(e.Lane, li)
			e.AtUS = append(e.AtUS, r.at)
			e.Fate = append(e.Fate, r.fate)
			e.Flags = append(e.Flags, r.flags)
			e.ID = append(e.ID, r.id)
			e.Method = append(e.Method, r.method)
			e.Index = append(e.Index, r.index)
			e.Copies = append(e.Copies, r.copies)
		}
		m.Lanes = append(m.Lanes, l.Lane)
	}
	for _, f := range b.faults {
		ev := -1
		if f.event >= 0 {
			ev = newEvent[f.event]
		}
		fs := &m.Faults
		fs.Lane = append(fs.Lane, newLane[f.lane])
		fs.AtUS = append(fs.AtUS, f.at)
		fs.Kind = append(fs.Kind, f.kind)
		fs.Index = append(fs.Index, f.index)
		fs.Event = append(fs.Event, ev)
		fs.Effect = append(fs.Effect, m.str(withStatus(f.effect, b.lanes[f.lane].Status)))
	}
	b.order = order
	b.resolveLinks(newLane, newEvent)
	if m.Strings == nil {
		m.Strings = []string{}
	}
}

// idKey is an id within a session: of an event, or of a request answered.
type idKey struct {
	session int
	id      string
}

// resolveLinks points each reconnection at the latest event before it, in
// its session, whose id the client received; failing that, one whose id
// the upstream sent; failing that, at nothing.
func (b *builder) resolveLinks(newLane, newEvent []int) {
	client := map[idKey][]int{}
	upstream := map[idKey][]int{}
	for ri, r := range b.events {
		s := b.lanes[b.eventLane[ri]].Session
		if r.hasClientID {
			k := idKey{s, r.clientID}
			client[k] = append(client[k], ri)
		}
		if r.hasUpstreamID {
			k := idKey{s, r.upstreamID}
			upstream[k] = append(upstream[k], ri)
		}
	}
	latest := func(rows []int, at int64) int {
		best := -1
		for _, ri := range rows {
			if b.events[ri].at <= at && (best < 0 || b.events[ri].at >= b.events[best].at) {
				best = ri
			}
		}
		return best
	}
	b.m.Links = []Link{}
	for _, l := range b.links {
		s := b.lanes[l.lane].Session
		k := idKey{s, l.id}
		ri := latest(client[k], l.at)
		if ri < 0 {
			ri = latest(upstream[k], l.at)
		}
		ev := -1
		if ri >= 0 {
			ev = newEvent[ri]
		}
		b.m.Links = append(b.m.Links, Link{Lane: newLane[l.lane], AtUS: l.at, ID: l.id, Event: ev})
	}
}
