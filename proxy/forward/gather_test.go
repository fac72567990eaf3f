package forward

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// TestClientWriteErrorIsClientGone: when the flush before a read fails, the
// stream ends as the client's doing, with a clean end and no abort, even
// before the client's request context is done: the upstream is not blamed.
func TestClientWriteErrorIsClientGone(t *testing.T) {
	up := httptest.NewRequest(http.MethodGet, "http://upstream/mcp", nil)
	pm := &pump{
		p:    &Proxy{log: slog.New(slog.DiscardHandler)},
		r:    httptest.NewRequest(http.MethodGet, "http://fray/mcp", nil).WithContext(context.Background()),
		resp: &http.Response{Request: up},
		ex:   &exchange{},
	}
	pm.rec.cause = observe.ClientGone
	pm.finish(&clientWriteError{syscall.EPIPE})
	if pm.rec.cause != observe.ClientGone || pm.sink.abort {
		t.Errorf("after a failed write to the client: cause %v, abort %v; want %v, no abort", pm.rec.cause, pm.sink.abort, observe.ClientGone)
	}
	// The same error from the upstream's side is the upstream's failure.
	pm.finish(errors.New("read tcp: connection reset by peer"))
	if pm.rec.cause != observe.UpstreamFailed || !pm.sink.abort {
		t.Errorf("after a failed upstream read: cause %v, abort %v; want %v, abort", pm.rec.cause, pm.sink.abort, observe.UpstreamFailed)
	}
}

// TestGatherSizedToRead: the gathering buffer is as large as one read of
// the stream's reader can deliver: 4 KiB while it reads 4 KiB at a time
// (a paced stream, and each of ten thousand quiet ones), 32 KiB and then
// 128 KiB as a burst widens its reads; 32 KiB before it reads. A stream
// that reads little holds little while it writes, and a pool miss
// allocates as little.
func TestGatherSizedToRead(t *testing.T) {
	s := &sink{}
	var tiers []int
	check := func() {
		g := s.takeGather()
		tiers = append(tiers, cap(*g))
		putGather(g)
	}
	check()
	var body strings.Builder
	for body.Len() < 1<<20 {
		body.WriteString("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
	}
	s.rd = sse.NewReader(strings.NewReader(body.String()), 1<<20)
	room := -1
	for {
		if _, err := s.rd.Next(); err != nil {
			break
		}
		if r := s.rd.Room(); r != room {
			room = r
			check()
		}
	}
	if want := []int{gatherSize, gatherSmall, gatherSize, gatherBulk}; !slices.Equal(tiers, want) {
		t.Errorf("gathering buffers taken as the reads widen: %v, want %v", tiers, want)
	}
}
