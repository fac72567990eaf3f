package scale

import (
	"net/http"
	"net/url"

	"github.com/frayproxy/fray/proxy/forward"
)

// newFloor is the least an SSE proxy built on net/http can hold per
// stream: fray's transport, and a handler that copies the upstream's body
// to the client with a 256-byte buffer and a flush after every read,
// keeping nothing else. It observes nothing and injects no fault; it is
// not a proxy to use (no hop-by-hop headers are removed, no error is
// reported), only a measure of what net/http's server and transport hold
// for a stream, below which no proxy built on them goes. fray's GET
// streams to an http upstream do without the transport, and go below it.
func newFloor(up *url.URL) http.Handler {
	t := forward.NewTransport(nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.RequestURI = up.Scheme, up.Host, ""
		resp, err := t.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		var buf [256]byte
		for {
			n, err := resp.Body.Read(buf[:])
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil || rc.Flush() != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
}
