package scale

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// Upstream is an SSE server that holds every stream idle until Fire, then
// writes the same number of events on all of them at once. A GET of any
// path opens a stream: the response head and one event go out at once, so
// that the whole path through a proxy is set up, then the stream waits.
// Upstream is safe for concurrent use; the zero value is not: use
// NewUpstream.
type Upstream struct {
	mu    sync.Mutex
	round int           // rounds fired so far
	k     []int         // events per stream of each round
	next  chan struct{} // closed at the next Fire
	open  atomic.Int64
}

// NewUpstream returns an Upstream holding no stream.
func NewUpstream() *Upstream { return &Upstream{next: make(chan struct{})} }

// Fire makes every stream, open now or opened later, write k more events.
func (u *Upstream) Fire(k int) {
	u.mu.Lock()
	u.round++
	u.k = append(u.k, k)
	close(u.next)
	u.next = make(chan struct{})
	u.mu.Unlock()
}

// Streams is the number of streams open now.
func (u *Upstream) Streams() int { return int(u.open.Load()) }

// OpenEvent is the event every stream starts with.
const OpenEvent = ": open\n\n"

// ServeHTTP holds one stream until the client goes away.
func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "GET opens a stream", http.StatusMethodNotAllowed)
		return
	}
	sseHead(w)
	f := w.(http.Flusher)
	u.mu.Lock()
	done := u.round // a stream owes only the rounds fired after it opened
	u.mu.Unlock()
	if _, err := w.Write([]byte(OpenEvent)); err != nil {
		return
	}
	f.Flush()
	u.open.Add(1)
	defer u.open.Add(-1)
	buf := make([]byte, 0, 160)
	seq := 0
	for {
		u.mu.Lock()
		round, next := u.round, u.next
		u.mu.Unlock()
		for ; done < round; done++ {
			u.mu.Lock()
			k := u.k[done]
			u.mu.Unlock()
			for range k {
				buf = AppendEvent(buf[:0], seq)
				seq++
				if _, err := w.Write(buf); err != nil {
					return
				}
				f.Flush()
			}
		}
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
	}
}

// AppendEvent appends event seq of a stream: an id and a JSON-RPC
// notification of ~90 bytes, as an MCP server sends progress.
func AppendEvent(b []byte, seq int) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":"...)
	b = strconv.AppendInt(b, int64(seq), 10)
	return append(b, "}}\n\n"...)
}
