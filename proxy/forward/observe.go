package forward

import (
	"net/http"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// since is the time since the proxy started.
func (p *Proxy) since() time.Duration { return p.clock.Now().Sub(p.start) }

// observing reports whether anyone listens to observations, so that the
// proxy builds them only then.
func (p *Proxy) observing() bool { return p.opts.Observer != nil }

// head fills the fields every observation of ex shares; at is when it
// happened, since the proxy started.
func (p *Proxy) head(o *observe.Observation, k observe.Kind, ex *exchange, at time.Duration) {
	o.Kind = k
	o.At = at
	o.Exchange = ex.seq
	o.Stream = ex.Stream
	o.Session = ex.Session
	o.SessionSeq = ex.SessionSeq
	o.Protocol = ex.protocol
}

// observeRequest reports the client's request and what exchange faults did
// to it.
func (p *Proxy) observeRequest(r *http.Request, ex *exchange, act *faults.ExchangeAction) {
	if !p.observing() {
		return
	}
	req := &observe.Request{Method: r.Method, Path: r.URL.Path, Header: r.Header}
	if v, ok := r.Header[mcp.HeaderLastEventID]; ok {
		req.HasLastEventID = true
		if len(v) > 0 {
			req.LastEventID = v[0]
		}
	}
	if len(ex.body) > 0 {
		jsonrpc.ScanBatch(ex.body, func(m jsonrpc.Message) bool {
			req.Messages = append(req.Messages, requestMessage(&m))
			if m.Kind == mcp.RPCNotification && m.MethodIs("notifications/cancelled") {
				if id := jsonrpc.Lookup(m.Params, "requestId"); id != nil {
					req.Cancels = append(req.Cancels, string(id))
				}
			}
			return true
		})
	}
	a := &req.Action
	a.Latency = act.Latency
	a.Answered = act.Status != 0 || (act.DropRequest && !act.Hang)
	a.Dropped = act.DropRequest
	a.Hang = act.Hang
	a.StrippedHeaders = act.StripRequestHeaders
	a.SetHeaders = act.SetRequestHeaders
	if act.StripLastEventID || act.HasLastEventID {
		a.LastEventIDChanged = true
		a.HasForwardedLastEventID = act.HasLastEventID
		a.ForwardedLastEventID = act.SetLastEventID
	}
	o := observe.Observation{Request: req, Fired: act.Fired}
	p.head(&o, observe.KindRequest, ex, p.since())
	p.opts.Observer.Observe(&o)
}

// observeResponse reports the response head sent to the client.
func (p *Proxy) observeResponse(ex *exchange, resp *observe.Response, fired []faults.Firing) {
	if !p.observing() {
		return
	}
	o := observe.Observation{Response: resp, Fired: fired}
	p.head(&o, observe.KindResponse, ex, p.since())
	p.opts.Observer.Observe(&o)
}

// observeEnd reports the end of an exchange.
func (p *Proxy) observeEnd(ex *exchange, end *observe.End) {
	if !p.observing() {
		return
	}
	o := observe.Observation{End: end}
	p.head(&o, observe.KindEnd, ex, p.since())
	p.opts.Observer.Observe(&o)
}

// upstreamResponse describes a response from the upstream for observers.
func upstreamResponse(h http.Header, status int, stream bool) *observe.Response {
	return &observe.Response{Status: status, Origin: observe.FromUpstream, Header: h, EventStream: stream, Session: h.Get(mcp.HeaderSession)}
}

// bodyMessages lists the JSON-RPC messages of a JSON body.
func bodyMessages(body []byte) []observe.Message {
	var out []observe.Message
	jsonrpc.ScanBatch(body, func(m jsonrpc.Message) bool {
		om := observe.Message{Kind: m.Kind, Method: string(m.Method), ID: string(m.ID)}
		om.ErrorCode, _ = m.ErrorCode()
		if id := m.TaskID(); id != nil {
			om.TaskID = jsonrpc.Unquote(id)
			om.PollMS, _ = m.PollIntervalMs()
		}
		out = append(out, om)
		return true
	})
	return out
}

// requestMessage describes one message of a request body for observers.
func requestMessage(m *jsonrpc.Message) observe.Message {
	om := observe.Message{Kind: m.Kind, Method: string(m.Method), ID: string(m.ID), ProgressToken: string(m.ProgressToken())}
	if m.Kind == mcp.RPCRequest {
		om.Params = m.ParamsDigest()
		om.TaskID = jsonrpc.Unquote(m.TaskID())
	}
	if v := m.MetaProtocolVersion(); v != nil {
		om.Protocol = jsonrpc.Unquote(v)
	}
	if n := m.TargetName(); n != nil {
		om.Name, om.HasName = jsonrpc.Unquote(n), true
	}
	return om
}
