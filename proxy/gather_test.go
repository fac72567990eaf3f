package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
)

// TestClientWriteErrorIsClientGone: when the flush before a read fails, the
// stream ends as the client's doing, with a clean end and no abort, even
// before the client's request context is done: the upstream is not blamed.
func TestClientWriteErrorIsClientGone(t *testing.T) {
	up := httptest.NewRequest(http.MethodGet, "http://upstream/mcp", nil)
	pm := &pump{
		p:     &Proxy{log: slog.New(slog.DiscardHandler)},
		r:     httptest.NewRequest(http.MethodGet, "http://fray/mcp", nil).WithContext(context.Background()),
		resp:  &http.Response{Request: up},
		ex:    &exchange{},
		cause: observe.ClientGone,
	}
	pm.finish(&clientWriteError{syscall.EPIPE})
	if pm.cause != observe.ClientGone || pm.abort {
		t.Errorf("after a failed write to the client: cause %v, abort %v; want %v, no abort", pm.cause, pm.abort, observe.ClientGone)
	}
	// The same error from the upstream's side is the upstream's failure.
	pm.finish(errors.New("read tcp: connection reset by peer"))
	if pm.cause != observe.UpstreamFailed || !pm.abort {
		t.Errorf("after a failed upstream read: cause %v, abort %v; want %v, abort", pm.cause, pm.abort, observe.UpstreamFailed)
	}
}
