package forward_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
)

// gateObserver holds the observation of the first event until the test
// releases it, and says whether the client had the event by then.
type gateObserver struct {
	got     <-chan struct{}
	release chan struct{}
	early   chan bool
}

func (g *gateObserver) Observe(o *observe.Observation) {
	if o.Kind != observe.KindEvent || o.Event.Index != 0 {
		return
	}
	select {
	case <-g.got:
		g.early <- true
	case <-g.release:
		g.early <- false
	}
}

// TestObservedBeforeTheClientHasIt: an event reaches the client only after
// the observers saw it. Were it flushed first, the client could act on it
// (resume, end its session) before the verifier knew it was sent, and be
// judged on a history in the wrong order.
func TestObservedBeforeTheClientHasIt(t *testing.T) {
	checkNoLeaks(t)
	upDone := make(chan struct{})
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
		w.(http.Flusher).Flush()
		until(r, upDone)
	})
	defer close(upDone)
	got := make(chan struct{})
	g := &gateObserver{got: got, release: make(chan struct{}), early: make(chan bool, 1)}
	fray, _ := front(t, up, func(o *forward.Options) { o.Observer = g })

	resp := get(t, fray+"/mcp")
	defer resp.Body.Close()
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		if strings.HasPrefix(line, "id: 1") {
			close(got)
		}
	}()
	// The client has a bounded time to get the event while its
	// observation is held: with the order right it never does.
	timer := time.AfterFunc(200*time.Millisecond, func() { close(g.release) })
	defer timer.Stop()
	if <-g.early {
		t.Error("the client had the event before the observers saw it")
	}
}
