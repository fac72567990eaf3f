package forward

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// maxCapture bounds the JSON answer the proxy keeps to classify it; a
// longer one passes whole, its end observed as Unread.
const maxCapture = 1 << 20

var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyResponse streams a response that is not an event stream: JSON
// answers, empty 202s, errors. Bodies of unknown length are flushed as they
// arrive, so that a streaming answer the proxy does not parse still streams.
func (p *Proxy) copyResponse(w http.ResponseWriter, r *http.Request, ex *exchange, resp *http.Response) {
	h := w.Header()
	copyHeader(h, resp.Header)
	for k := range resp.Trailer {
		h.Add("Trailer", k)
	}
	w.WriteHeader(resp.StatusCode)
	p.observeResponse(ex, upstreamResponse(h, resp.StatusCode, false), nil)
	end := observe.End{Cause: observe.ClientGone}
	defer func() { p.observeEnd(ex, &end) }()
	rc := http.NewResponseController(w)
	var capture *bytes.Buffer
	if ex.Method == http.MethodPost && mcp.MediaType(resp.Header.Get("Content-Type")) == "application/json" {
		capture = new(bytes.Buffer)
	}
	bufp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bufp)
	for {
		n, err := resp.Body.Read(*bufp)
		if n > 0 {
			if _, werr := w.Write((*bufp)[:n]); werr != nil {
				return
			}
			if capture != nil {
				if capture.Len()+n <= maxCapture {
					capture.Write((*bufp)[:n])
				} else {
					end.Unread = true
				}
			}
			if resp.ContentLength < 0 {
				_ = rc.Flush()
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			p.log.LogAttrs(r.Context(), slog.LevelWarn, "upstream body failed; aborting the client's response",
				append(ex.logAttrs(), slog.String("error", err.Error()))...)
			end = observe.End{Cause: observe.UpstreamFailed, Error: oneLine(err.Error())}
			panic(http.ErrAbortHandler)
		}
	}
	for k, vv := range resp.Trailer {
		h[http.TrailerPrefix+k] = vv
	}
	p.logAnswer(r, ex, resp, capture)
	end.Cause = observe.Complete
	if capture != nil && !end.Unread && p.observing() {
		end.Messages = bodyMessages(capture.Bytes())
	}
}

// logAnswer classifies what came back for a non-stream exchange, and reads
// the negotiated protocol revision from an initialize answer.
func (p *Proxy) logAnswer(r *http.Request, ex *exchange, resp *http.Response, capture *bytes.Buffer) {
	kind := "body"
	switch {
	case resp.StatusCode == http.StatusAccepted:
		kind = "accepted"
	case resp.StatusCode >= 400:
		kind = "error"
	case capture != nil:
		kind = "json"
		if ex.initReq {
			jsonrpc.ScanBatch(capture.Bytes(), func(m jsonrpc.Message) bool {
				if m.Kind == mcp.RPCResponse {
					p.noteInitialize(ex, capture.Bytes())
				}
				return false
			})
		}
	}
	p.log.LogAttrs(r.Context(), slog.LevelDebug, "answer",
		append(ex.logAttrs(), slog.Int("status", resp.StatusCode), slog.String("answer", kind))...)
}
