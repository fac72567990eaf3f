// Package replay stands in for the server of a recorded run: a live client
// that connects gets the recorded responses and event streams, with their
// timing, and can drive the conversation again.
//
//	client --request--> Server: classify, match a recorded exchange
//	                      (HTTP method, stream type, session, JSON-RPC
//	                      method, order; a resume by its Last-Event-ID)
//	client <--response-- the recorded head, then its events on the
//	                      recorded schedule (scaled), JSON-RPC ids of
//	                      responses mapped back onto the client's own
//
// With ModeRecorded the client gets what the client got live, fault
// effects included: events dropped or lost are left out, duplicates are
// written twice, a stream fray cut is cut again the same way. With
// ModeServer it gets what the server sent, every event, as if no fault
// had acted. Session ids and event ids are served as recorded, so the
// ids a client sends back (Mcp-Session-Id, Last-Event-ID) name recorded
// ones; one Server replays one conversation.
//
// A trace holds no bodies other than event streams: a JSON response body
// is rebuilt from the JSON-RPC ids it carried, with an empty result.
package replay

import (
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// Mode says which side of fray's faults a replay stands on.
type Mode uint8

const (
	// ModeRecorded delivers what the client got live, fault effects
	// included.
	ModeRecorded Mode = iota
	// ModeServer delivers what the server sent, before any fault.
	ModeServer
)

// recExchange is one recorded exchange: the request that identifies it and
// what answering it means.
type recExchange struct {
	seq      uint64
	method   string
	stream   mcp.StreamType
	session  string // the session the request carried, "" for none
	messages []observe.Message
	lei      string
	hasLEI   bool
	reqAt    time.Duration
	action   observe.RequestAction

	resp   *observe.Response
	respAt time.Duration
	events []recEvent
	end    *observe.End
	endAt  time.Duration
	ended  bool
	// withSession: the recording ended the exchange once its session had
	// been deleted, so the replay ends it when the session is, whatever
	// the clock says.
	withSession bool
}

// recEvent is one recorded event block.
type recEvent struct {
	at, deliveredAt time.Duration
	raw, delivered  []byte
	parsed          bool
	fate            observe.Fate
	copies          int
	id              []byte // the upstream's id, when it had one
	hasID           bool
	msgKind         mcp.RPCKind
	msgID           []byte
}

// script is a recorded run, by exchange.
type script struct {
	exchanges []*recExchange // in the order their requests arrived
}

// newScript groups observations by exchange. Exchanges whose request was
// not recorded (the trace began mid-run) are left out.
func newScript(obs []*observe.Observation) *script {
	s := &script{}
	by := map[uint64]*recExchange{}
	for _, o := range obs {
		ex := by[o.Exchange]
		if o.Kind == observe.KindRequest {
			r := o.Request
			ex = &recExchange{seq: o.Exchange, method: r.Method, stream: o.Stream, session: o.Session, messages: r.Messages,
				lei: r.LastEventID, hasLEI: r.HasLastEventID, reqAt: o.At, action: r.Action}
			by[o.Exchange] = ex
			s.exchanges = append(s.exchanges, ex)
			continue
		}
		if ex == nil {
			continue
		}
		if o.Stream == mcp.StreamLegacy {
			ex.stream = mcp.StreamLegacy
		}
		switch o.Kind {
		case observe.KindResponse:
			ex.resp, ex.respAt = o.Response, o.At
		case observe.KindEvent:
			e := o.Event
			ex.events = append(ex.events, recEvent{
				at: o.At, deliveredAt: e.DeliveredAt, raw: e.Raw, delivered: e.Delivered, parsed: e.Parsed,
				fate: e.Fate, copies: e.Copies, id: e.ID, hasID: e.HasID, msgKind: e.RPCKind, msgID: e.RPCID,
			})
		case observe.KindEnd:
			ex.end, ex.endAt, ex.ended = o.End, o.At, true
		}
	}
	deleted := map[string]time.Duration{}
	for _, ex := range s.exchanges {
		if ex.method == "DELETE" && ex.session != "" {
			if at, ok := deleted[ex.session]; !ok || ex.reqAt < at {
				deleted[ex.session] = ex.reqAt
			}
		}
	}
	for _, ex := range s.exchanges {
		if at, ok := deleted[liveSession(ex)]; ok && ex.ended && ex.method != "DELETE" && ex.endAt >= at {
			ex.withSession = true
		}
	}
	return s
}

// liveRequest is what the replay knows of a live request.
type liveRequest struct {
	method   string
	stream   mcp.StreamType
	session  string
	messages []observe.Message
	lei      string
	hasLEI   bool
}

// sameClass reports whether a recorded stream type can answer a live one:
// a GET is classified as legacy only once its first event is seen.
func sameClass(rec, live mcp.StreamType) bool {
	if rec == mcp.StreamLegacy {
		rec = mcp.StreamGet
	}
	if live == mcp.StreamLegacy {
		live = mcp.StreamGet
	}
	return rec == live
}

// matches reports whether the recorded exchange can answer the live
// request: same HTTP method, stream type and session, and the same first
// JSON-RPC message (kind, and method for requests and notifications).
func (ex *recExchange) matches(r *liveRequest) bool {
	if ex.method != r.method || !sameClass(ex.stream, r.stream) || ex.session != r.session {
		return false
	}
	if len(ex.messages) != len(r.messages) {
		return false
	}
	for i, m := range ex.messages {
		l := r.messages[i]
		if m.Kind != l.Kind {
			return false
		}
		if (m.Kind == mcp.RPCRequest || m.Kind == mcp.RPCNotification) && m.Method != l.Method {
			return false
		}
	}
	return true
}

// match picks the recorded exchange that answers r: the first unused one,
// in recorded order, that matches; for a resume, the first whose
// Last-Event-ID is the one r carries, if any. used marks exchanges already
// answered; match marks the one it returns.
func (s *script) match(r *liveRequest, used map[uint64]bool) *recExchange {
	var first *recExchange
	for _, ex := range s.exchanges {
		if used[ex.seq] || !ex.matches(r) {
			continue
		}
		if !r.hasLEI || (ex.hasLEI && ex.lei == r.lei) {
			used[ex.seq] = true
			return ex
		}
		if first == nil {
			first = ex
		}
	}
	if first != nil {
		used[first.seq] = true
	}
	return first
}

// rpcIDs maps the ids of the recorded exchange's requests onto the live
// request's, position by position.
func rpcIDs(ex *recExchange, r *liveRequest) map[string]string {
	var m map[string]string
	for i, rec := range ex.messages {
		if rec.Kind != mcp.RPCRequest || i >= len(r.messages) {
			continue
		}
		if live := r.messages[i].ID; live != rec.ID {
			if m == nil {
				m = map[string]string{}
			}
			m[rec.ID] = live
		}
	}
	return m
}
