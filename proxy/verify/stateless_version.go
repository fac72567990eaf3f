package verify

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// The response heads of 2026-07-28: every SSE stream the server starts
// asks intermediaries not to buffer it, and a request refused for its
// revision is answered 400.

// statelessResponse judges the head of the upstream's answer to a request
// of 2026-07-28 (server.x-accel-buffering).
func (v *Verifier) statelessResponse(x *exch, o *observe.Observation) {
	st := v.stateless
	if st == nil {
		return
	}
	sx := st.exch[x.num]
	if sx == nil || !o.Response.EventStream || o.Response.Origin != observe.FromUpstream {
		return
	}
	v.judgeAccelBuffering(x, sx, o.Response, o.At)
}

// judgeAccelBuffering judges one SSE answer's X-Accel-Buffering header:
// "no" (in any case) passes; a stream whose headers a fault of fray's
// changed is excused, since the header the client got may not be the
// server's. fray sees the answer as it arrives, after whatever stands
// between the server and fray: a reverse proxy that honours the header
// (nginx) removes it, so the evidence says what fray received and that
// it may not be what the server sent.
func (v *Verifier) judgeAccelBuffering(x *exch, sx *slExch, r *observe.Response, at time.Duration) {
	got := r.Header.Values(mcp.HeaderAccelBuffering)
	ok := len(got) == 1 && strings.EqualFold(strings.TrimSpace(got[0]), "no")
	if !ok && sx.fault != nil {
		v.excuse(cAccelBuffering, "a fault changed the exchange's headers")
		return
	}
	v.apply(cAccelBuffering)
	if ok {
		return
	}
	what, cause := "without "+mcp.HeaderAccelBuffering, "the server did not send it, or an intermediary between the server and fray removed it (nginx, for one, consumes it)"
	if len(got) > 0 {
		what = fmt.Sprintf("with %s: %s", mcp.HeaderAccelBuffering, strings.Join(got, ", "))
		cause = "the server sent it so, or an intermediary between the server and fray changed it"
	}
	msg := fmt.Sprintf("fray received the SSE stream answering request %s (%s) %s, not %s: no: %s", sx.id, sx.method, what, mcp.HeaderAccelBuffering, cause)
	if via := strings.Join(r.Header.Values("Via"), ", "); via != "" {
		if len(via) > maxViaShown {
			via = via[:maxViaShown] + "..."
		}
		msg += fmt.Sprintf("; the answer came through Via: %s", via)
	}
	v.find(cAccelBuffering, levelError, evidence(msg, x.sess, x.num, at))
}

// maxViaShown bounds the bytes of a Via header an evidence quotes.
const maxViaShown = 120

// judgeVersionRefusal judges a JSON answer of the upstream to a request
// of 2026-07-28 that refuses it for its revision (JSON-RPC error -32022):
// on HTTP it comes with 400 Bad Request (server.unsupported-version-error).
// Whether the server did implement the revision fray cannot tell, so an
// answer that is no refusal is not judged.
func (v *Verifier) judgeVersionRefusal(x *exch, sx *slExch, end *observe.End, at time.Duration) {
	for _, m := range end.Messages {
		if m.Kind != mcp.RPCError || m.ErrorCode != mcp.ErrUnsupportedVersion || m.ID != sx.id {
			continue
		}
		v.apply(cUnsupportedVersion)
		if x.status == http.StatusBadRequest {
			return
		}
		v.find(cUnsupportedVersion, levelError, evidence(fmt.Sprintf("the server refused request %s (%s) for its protocol revision (JSON-RPC error %d) with HTTP %d, not 400", sx.id, sx.method, mcp.ErrUnsupportedVersion, x.status), x.sess, x.num, at))
		return
	}
}

// judgeStreamRefusal judges a refusal for the revision that came as an
// event of an SSE stream: the stream's status (200) is not the 400 the
// rule asks for (server.unsupported-version-error).
func (v *Verifier) judgeStreamRefusal(x *exch, sx *slExch, data []byte, at time.Duration) {
	code := 0
	jsonrpc.ScanBatch(data, func(m jsonrpc.Message) bool {
		code, _ = m.ErrorCode()
		return false
	})
	if code != mcp.ErrUnsupportedVersion {
		return
	}
	v.apply(cUnsupportedVersion)
	v.find(cUnsupportedVersion, levelError, evidence(fmt.Sprintf("the server refused request %s (%s) for its protocol revision (JSON-RPC error %d) in an SSE stream with HTTP %d, not 400", sx.id, sx.method, mcp.ErrUnsupportedVersion, x.status), x.sess, x.num, at))
}
