package verify

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// statelessEvent judges one event the upstream sent on an exchange of
// 2026-07-28: the first message of a subscription stream, and anything
// for a request whose stream had closed.
func (v *Verifier) statelessEvent(x *exch, e *observe.Event, o *observe.Observation) {
	st := v.stateless
	if st == nil || !e.Parsed || !e.Dispatched || e.RPCKind == mcp.RPCNone {
		return
	}
	sx := st.exch[x.num]
	if sx == nil {
		return
	}
	if sx.listen && !sx.ackJudged {
		v.judgeListenAck(x, sx, e, o.At)
	}
	v.taskEvent(x, e)
	if e.RPCKind == mcp.RPCError && string(e.RPCID) == sx.id {
		v.judgeStreamRefusal(x, sx, e.Data, o.At)
	}
	if len(st.cancelled) > 0 {
		v.judgeAfterCancel(x, e.RPCKind, e.RPCID, e.RPCMethod, e.Data, o.At)
	}
}

// judgeListenAck judges the first message of a subscriptions/listen
// stream (server.listen-acknowledged).
func (v *Verifier) judgeListenAck(x *exch, sx *slExch, e *observe.Event, at time.Duration) {
	sx.ackJudged = true
	v.apply(cListenAck)
	if e.RPCKind == mcp.RPCNotification && string(e.RPCMethod) == mcp.MethodListenAcknowledged {
		return
	}
	what := e.RPCKind.String()
	if len(e.RPCMethod) > 0 {
		what += " " + string(e.RPCMethod)
	}
	v.find(cListenAck, levelError, evidence(fmt.Sprintf("the subscriptions/listen stream of request %s began with a %s, not %s", sx.id, what, mcp.MethodListenAcknowledged), x.sess, x.num, at))
}

// judgeAfterCancel judges a message the upstream sent: a response to a
// request whose stream had closed, or progress for it, is a message the
// server owed no more (server.silent-after-cancel).
func (v *Verifier) judgeAfterCancel(x *exch, kind mcp.RPCKind, id, method, data []byte, at time.Duration) {
	st := v.stateless
	var c *cancelRec
	switch kind {
	case mcp.RPCResponse, mcp.RPCError:
		c = st.cancelled[string(id)]
	case mcp.RPCNotification:
		if string(method) != "notifications/progress" || len(st.byToken) == 0 {
			return
		}
		m := jsonrpc.Scan(data)
		c = st.byToken[string(m.ProgressToken())]
	}
	if c == nil || c.ex == x.num || c.found {
		return
	}
	c.found = true
	what := "its response"
	if kind == mcp.RPCNotification {
		what = "progress for it"
	}
	where := "another stream"
	if sx := st.exch[x.num]; sx != nil && sx.listen {
		where = "a subscriptions/listen stream"
	}
	ev := evidence(fmt.Sprintf("the server sent %s on %s %v after the stream of request %s (%s) closed, which cancelled it", what, where, (at-c.at).Round(time.Millisecond), c.id, c.method), x.sess, x.num, at)
	ev.Related = related(c.ex)
	ev.Fault = c.fault
	v.find(cSilentAfterCancel, levelError, ev)
}

// statelessEnd judges the end of an exchange of 2026-07-28: the answer to
// a request whose headers disagreed with its body, a subscription stream
// that ended, and a call stream that broke before its response.
func (v *Verifier) statelessEnd(x *exch, end *observe.End, at time.Duration) {
	st := v.stateless
	if st == nil {
		return
	}
	sx := st.exch[x.num]
	if sx == nil {
		return
	}
	delete(st.exch, x.num)
	if sx.mismatch != "" && v.judgeMismatchAnswer(x, sx, end, at) {
		return
	}
	if !x.eventStream {
		// A JSON answer answers its own request; one that carries a
		// cancelled request's id is a message for that one.
		if x.origin == observe.FromUpstream {
			v.judgeVersionRefusal(x, sx, end, at)
			for _, m := range end.Messages {
				if m.ID == sx.id {
					v.taskAnswered(m.TaskID, m.PollMS, x.num, at)
				}
				if len(st.cancelled) > 0 && m.ID != sx.id {
					v.judgeAfterCancel(x, m.Kind, []byte(m.ID), []byte(m.Method), nil, at)
				}
			}
		}
		return
	}
	if sx.listen {
		v.listenEnded(x, sx, end, at)
		return
	}
	v.callEnded(x, sx, end, at)
}

// answered reports whether the exchange's request got its response
// delivered to the client.
func answered(x *exch) bool {
	return slices.ContainsFunc(x.reqs, func(r *request) bool { return r.delivered > 0 })
}

// endWhat says how a stream ended, for evidence.
func endWhat(c observe.Cause) string {
	switch c {
	case observe.FaultClosed:
		return "was closed by fray"
	case observe.FaultReset:
		return "was reset by fray"
	case observe.UpstreamFailed:
		return "broke off upstream"
	}
	return "ended without its response"
}

// callEnded follows a call stream that ended: one that broke before the
// response owes a re-issue, and one that closed cancelled its request.
func (v *Verifier) callEnded(x *exch, sx *slExch, end *observe.End, at time.Duration) {
	if answered(x) || slices.ContainsFunc(x.reqs, func(r *request) bool { return r.cancelled }) {
		return
	}
	if end.Cause == observe.ClientGone {
		// The client cancelled the request by closing its stream.
		v.noteCancelled(x, sx, at)
		return
	}
	v.oweCall(&owedCall{method: sx.method, name: sx.name, params: sx.params, id: sx.id, at: at, ex: x.num, fault: x.endFault, what: endWhat(end.Cause)})
	if end.Cause.ByFault() {
		// The exchange ends when fray lets go of the upstream too (after a
		// hold, once it stopped reading on): from then on the server has
		// seen the close.
		v.noteCancelled(x, sx, at)
	}
}

// noteCancelled starts watching a request whose stream closed before its
// response: the server owes nothing more for it
// (server.silent-after-cancel). A server that had already sent its
// response when the stream closed owes nothing to watch for.
func (v *Verifier) noteCancelled(x *exch, sx *slExch, at time.Duration) {
	st := v.sl()
	if x.srv != nil && x.srv.respSent {
		v.excuse(cSilentAfterCancel, "the server had sent its response before the stream closed")
		return
	}
	if len(st.order) >= maxCancelled {
		v.forgetCancelled(st.order[0])
	}
	c := &cancelRec{id: sx.id, token: sx.token, method: sx.method, at: at, ex: x.num, fault: x.endFault}
	if old := st.cancelled[c.id]; old != nil {
		v.forgetCancelled(old)
	}
	v.apply(cSilentAfterCancel)
	st.cancelled[c.id] = c
	if c.token != "" {
		st.byToken[c.token] = c
	}
	st.order = append(st.order, c)
}

// forgetCancelled stops watching a cancelled request.
func (v *Verifier) forgetCancelled(c *cancelRec) {
	st := v.stateless
	if st.cancelled[c.id] == c {
		delete(st.cancelled, c.id)
	}
	if c.token != "" && st.byToken[c.token] == c {
		delete(st.byToken, c.token)
	}
	if i := slices.Index(st.order, c); i >= 0 {
		st.order = slices.Delete(st.order, i, i+1)
	}
}

// listenEnded follows a subscription stream that ended: one that ended
// before any message did not begin with its acknowledgement, and one
// lost without the response that closes a subscription gracefully owes a
// listen (client.listens-again).
func (v *Verifier) listenEnded(x *exch, sx *slExch, end *observe.End, at time.Duration) {
	if !sx.ackJudged {
		sx.ackJudged = true
		if end.Cause == observe.Complete && x.origin == observe.FromUpstream {
			v.apply(cListenAck)
			v.find(cListenAck, levelError, evidence(fmt.Sprintf("the subscriptions/listen stream of request %s ended without any message, so without %s", sx.id, mcp.MethodListenAcknowledged), x.sess, x.num, at))
		} else {
			v.excuse(cListenAck, "the stream was cut before its first message")
		}
	}
	graceful := x.srv != nil && x.srv.respSent && end.Cause == observe.Complete
	if end.Cause == observe.ClientGone || graceful {
		return
	}
	v.oweCall(&owedCall{listen: true, method: sx.method, id: sx.id, at: at, ex: x.num, fault: x.endFault, what: endWhat(end.Cause)})
}

// judgeMismatchAnswer judges the answer to a request whose headers, as
// the server got them, disagreed with its body: 400 with JSON-RPC error
// -32020 (server.header-mismatch-rejected). Only the upstream's own
// answers are judged. It reports whether the server rejected the request
// (with any status of 400 or more), so that nothing else is owed for it.
func (v *Verifier) judgeMismatchAnswer(x *exch, sx *slExch, end *observe.End, at time.Duration) bool {
	if !x.responded || x.origin != observe.FromUpstream {
		v.excuse(cHeaderMismatch, "the server's answer did not reach fray")
		return x.responded
	}
	v.apply(cHeaderMismatch)
	code := 0
	for _, m := range end.Messages {
		if m.Kind == mcp.RPCError {
			code = m.ErrorCode
		}
	}
	if x.status == http.StatusBadRequest && code == mcp.ErrHeaderMismatch {
		return true
	}
	got := fmt.Sprintf("HTTP %d", x.status)
	switch {
	case x.eventStream:
		got += " with an SSE stream"
	case code != 0:
		got += fmt.Sprintf(" with JSON-RPC error %d", code)
	default:
		got += " without a JSON-RPC error"
	}
	ev := evidence(fmt.Sprintf("request %s (%s) reached the server with %s and was answered %s, not 400 with %d", sx.id, sx.method, sx.mismatch, got, mcp.ErrHeaderMismatch), x.sess, x.num, at)
	ev.Fault = sx.fault
	v.find(cHeaderMismatch, levelError, ev)
	return x.status >= 400
}

// statelessExcuse says why a request of 2026-07-28 on a stream that ended
// before its response may stay unanswered, "" when it may not: a stream
// fray cut, or the client closed, cancelled it (the client re-issues what
// it still wants, judged by client.reissues-cut-request); a server that
// ended the stream itself, or broke it, owed the response.
func statelessExcuse(l *logical) string {
	switch {
	case l.cutByFray:
		return "a stream fray cut cancelled it (2026-07-28): the client re-issues it"
	case l.clientClosed:
		return "the client cancelled it by closing its stream (2026-07-28)"
	}
	return ""
}
