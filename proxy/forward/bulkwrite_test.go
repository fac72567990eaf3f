package forward_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
)

// writeRecorder is a flushable ResponseWriter that keeps what it is
// written and the size of each write.
type writeRecorder struct {
	h      http.Header
	body   bytes.Buffer
	writes []int
}

func (w *writeRecorder) Header() http.Header { return w.h }
func (w *writeRecorder) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	return w.body.Write(b)
}
func (w *writeRecorder) WriteHeader(int) {}
func (w *writeRecorder) Flush()          {}

// TestBulkStreamWritesAsItReads: an upstream that always has more bytes
// than a read takes (a stream in bulk) is read in the reader's largest
// pieces, and the events of each read leave in one write to the client,
// not one per 32 KiB: about one write per 128 KiB. The client gets the
// stream byte for byte, and the observer every event.
func TestBulkStreamWritesAsItReads(t *testing.T) {
	const events = 5000
	body := progressEvents(events)
	seen := 0
	p := newProxy(t, "http://upstream.invalid", forward.Options{Transport: memTransport{body.Bytes()},
		Observer: observe.Func(func(o *observe.Observation) {
			if o.Kind == observe.KindEvent {
				seen++
			}
		})})
	req, _ := http.NewRequest("POST", "http://fray/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	w := &writeRecorder{h: http.Header{}}
	p.ServeHTTP(w, req)
	if !bytes.Equal(w.body.Bytes(), body.Bytes()) {
		t.Fatalf("the client got %d bytes, not the upstream's %d", w.body.Len(), body.Len())
	}
	if seen != events {
		t.Errorf("the observer saw %d events, want %d", seen, events)
	}
	// The reads widen from 4 KiB through 32 KiB to 128 KiB; from there on,
	// one write per read.
	most := body.Len()/(120<<10) + 4
	if len(w.writes) > most {
		t.Errorf("%d writes for %d bytes (sizes %v), want at most %d: one per read of up to 128 KiB", len(w.writes), body.Len(), w.writes, most)
	}
	if largest := slices.Max(w.writes); largest <= 32<<10 {
		t.Errorf("largest write %d bytes, want more than 32 KiB", largest)
	}
}
