package forward_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
)

// heldUpstream primes each POST stream, then sends three events when told
// (more), and stays open until its client goes away, which it reports on
// gone. A GET is answered 200 with no body.
type heldUpstream struct {
	more chan struct{}
	gone chan struct{}
}

func (u *heldUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "id: a0\nretry: 10\ndata:\n\n")
	w.(http.Flusher).Flush()
	if !until(r, u.more) {
		close(u.gone)
		return
	}
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(w, "id: a%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", i, i)
	}
	w.(http.Flusher).Flush()
	<-r.Context().Done()
	close(u.gone)
}

// obsLog keeps the observations, and closes enough when want events
// have been lost.
type obsLog struct {
	list[string]
	lost   atomic.Int32
	want   int32
	enough chan struct{}
}

func (l *obsLog) Observe(o *observe.Observation) {
	switch o.Kind {
	case observe.KindEvent:
		l.add(fmt.Sprintf("%d event %s %s", o.Exchange, o.Event.ID, o.Event.Fate))
		if o.Event.Fate == observe.Lost && l.lost.Add(1) == l.want {
			close(l.enough)
		}
	case observe.KindEnd:
		l.add(fmt.Sprintf("%d end %s at %v", o.Exchange, o.End.Cause, o.At > 0))
	case observe.KindRequest:
		l.add(fmt.Sprintf("%d request %s", o.Exchange, o.Request.Method))
	}
}

func (l *obsLog) text() string { return strings.Join(l.all(), "\n") }

// holdingFray starts a heldUpstream and fray in front of it, cutting every
// POST stream at its priming event and holding it.
func holdingFray(t *testing.T) (*heldUpstream, *forward.Proxy, string, *obsLog) {
	t.Helper()
	plan := activeProfile(t, "hold.toml", `
[[fault]]
kind = "close"
stream = "post"
after_priming = true
hold = true
`)
	up := &heldUpstream{more: make(chan struct{}), gone: make(chan struct{})}
	log := &obsLog{want: 3, enough: make(chan struct{})}
	p := newProxy(t, upServer(t, up.ServeHTTP), forward.Options{Faults: plan, Observer: log})
	return up, p, upServer(t, p.ServeHTTP), log
}

// cutCall POSTs a tools/call for session s1 and reads what the client gets:
// the priming event, then a clean end.
func cutCall(t *testing.T, fray string) {
	t.Helper()
	_, got := roundTrip(t, http.MethodPost, fray+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
		map[string]string{"Content-Type": "application/json", "Mcp-Session-Id": "s1"})
	if got != "id: a0\nretry: 10\ndata:\n\n" {
		t.Fatalf("the client got %q, want the priming event and a clean end", got)
	}
}

// TestEndHoldsEndsEveryHold: a held stream whose client never comes
// back ends when the proxy's holds are released (as the engine does when
// it stops): its end is observed and the server's connection let go
// before EndHolds returns, so no goroutine is left behind.
func TestEndHoldsEndsEveryHold(t *testing.T) {
	up, p, fray, log := holdingFray(t)
	cutCall(t, fray)
	p.EndHolds()
	if got := log.text(); !strings.HasSuffix(got, "1 end fault-closed at true") {
		t.Errorf("observations after EndHolds:\n%s", got)
	}
	waitFor(t, up.gone, "the server's stream is still open after EndHolds")
}

// TestHoldReadsOnUntilTheClientResumes: a close with hold ends the
// client's stream at the priming event, but fray goes on reading the
// server's stream: the events the server sends meanwhile are observed as
// lost, the server's connection stays open, and the client's next GET for
// the session ends the hold (the upstream request is cancelled, the end
// observed) before that GET is reported or forwarded.
func TestHoldReadsOnUntilTheClientResumes(t *testing.T) {
	up, p, fray, log := holdingFray(t)
	defer p.EndHolds()
	cutCall(t, fray)

	close(up.more)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case <-log.enough:
	case <-ctx.Done():
		t.Fatalf("fray did not read on after the cut:\n%s", log.text())
	}
	select {
	case <-up.gone:
		t.Fatal("the server's stream was closed while fray held it")
	default:
	}

	roundTrip(t, http.MethodGet, fray+"/mcp", "", map[string]string{"Mcp-Session-Id": "s1", "Last-Event-ID": "a0"})
	select {
	case <-up.gone:
	case <-ctx.Done():
		t.Fatal("the client's GET did not end the hold")
	}
	want := "1 request POST\n1 event a0 delivered\n1 event a1 lost\n1 event a2 lost\n1 event a3 lost\n1 end fault-closed at true\n2 request GET"
	if got := log.text(); !strings.HasPrefix(got, want) {
		t.Errorf("observations:\n%s\nwant them to begin:\n%s", got, want)
	}
}
