package verify

import (
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// bounded returns o, or, when a string the ledger may keep of it (a
// session id, an event id, a Last-Event-ID, a JSON-RPC id, method, name or
// progress token, a protocol revision) is longer than observe.MaxIDKey, a copy of o in which
// each such string is its observe.IDKey. The ledger then holds a bounded
// number of bytes per id whatever a peer or a trace sends, and ids still
// compare equal exactly when they are: the rule is applied to every id at
// this one door. Observations with short ids, all but a hostile peer's,
// pass with no copy and no allocation; o itself is never changed, since
// the other observers (the trace) see it as it was.
func bounded(o *observe.Observation) *observe.Observation {
	if !oversize(o) {
		return o
	}
	c := *o
	c.Session, c.Protocol = observe.IDKey(o.Session), observe.IDKey(o.Protocol)
	if q := o.Request; q != nil {
		cq := *q
		cq.LastEventID = observe.IDKey(q.LastEventID)
		cq.Action.ForwardedLastEventID = observe.IDKey(q.Action.ForwardedLastEventID)
		if sid := q.Header.Get(mcp.HeaderSession); len(sid) > observe.MaxIDKey {
			cq.Header = q.Header.Clone()
			cq.Header.Set(mcp.HeaderSession, observe.IDKey(sid))
		}
		cq.Messages = boundMessages(q.Messages)
		cq.Cancels = make([]string, len(q.Cancels))
		for i, id := range q.Cancels {
			cq.Cancels[i] = observe.IDKey(id)
		}
		c.Request = &cq
	}
	if r := o.Response; r != nil {
		cr := *r
		cr.Session = observe.IDKey(r.Session)
		if sid := r.Header.Get(mcp.HeaderSession); len(sid) > observe.MaxIDKey {
			cr.Header = r.Header.Clone()
			cr.Header.Set(mcp.HeaderSession, observe.IDKey(sid))
		}
		c.Response = &cr
	}
	if e := o.Event; e != nil {
		ce := *e
		ce.ID = observe.IDKeyBytes(e.ID)
		ce.DeliveredID = observe.IDKeyBytes(e.DeliveredID)
		ce.RPCID = observe.IDKeyBytes(e.RPCID)
		ce.RPCMethod = observe.IDKeyBytes(e.RPCMethod)
		c.Event = &ce
	}
	if e := o.End; e != nil {
		ce := *e
		ce.Messages = boundMessages(e.Messages)
		c.End = &ce
	}
	return &c
}

// oversize reports whether o holds a string bounded changes.
func oversize(o *observe.Observation) bool {
	const n = observe.MaxIDKey
	if len(o.Session) > n || len(o.Protocol) > n {
		return true
	}
	switch {
	case o.Event != nil:
		e := o.Event
		return len(e.ID) > n || len(e.DeliveredID) > n || len(e.RPCID) > n || len(e.RPCMethod) > n
	case o.Request != nil:
		q := o.Request
		if len(q.LastEventID) > n || len(q.Action.ForwardedLastEventID) > n || len(q.Header.Get(mcp.HeaderSession)) > n ||
			longMessages(q.Messages) {
			return true
		}
		for _, id := range q.Cancels {
			if len(id) > n {
				return true
			}
		}
	case o.Response != nil:
		r := o.Response
		return len(r.Session) > n || len(r.Header.Get(mcp.HeaderSession)) > n
	case o.End != nil:
		return longMessages(o.End.Messages)
	}
	return false
}

func longMessages(ms []observe.Message) bool {
	const n = observe.MaxIDKey
	for i := range ms {
		m := &ms[i]
		if len(m.ID) > n || len(m.Method) > n || len(m.ProgressToken) > n || len(m.Name) > n || len(m.TaskID) > n || len(m.Protocol) > n {
			return true
		}
	}
	return false
}

// boundMessages returns a copy of ms with its ids, methods, names, tokens
// and task ids replaced by their observe.IDKey.
func boundMessages(ms []observe.Message) []observe.Message {
	if ms == nil {
		return nil
	}
	out := make([]observe.Message, len(ms))
	for i, m := range ms {
		m.ID, m.Method, m.ProgressToken = observe.IDKey(m.ID), observe.IDKey(m.Method), observe.IDKey(m.ProgressToken)
		m.Name, m.TaskID, m.Protocol = observe.IDKey(m.Name), observe.IDKey(m.TaskID), observe.IDKey(m.Protocol)
		out[i] = m
	}
	return out
}
