package forward_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// recorder keeps a one-line summary of each observation.
type recorder struct{ list[string] }

func (r *recorder) Observe(o *observe.Observation) {
	var s string
	switch o.Kind {
	case observe.KindRequest:
		q := o.Request
		s = fmt.Sprintf("request %s %s lei=%v:%q msgs=%s", q.Method, q.Path, q.HasLastEventID, q.LastEventID, messages(q.Messages))
	case observe.KindResponse:
		s = fmt.Sprintf("response %d %s sse=%v session=%q", o.Response.Status, o.Response.Origin, o.Response.EventStream, o.Response.Session)
	case observe.KindEvent:
		e := o.Event
		s = fmt.Sprintf("event %d id=%q %s copies=%d delivered-id=%v:%q retry=%v msg=%s:%s", e.Index, e.ID, e.Fate, e.Copies,
			e.DeliveredHasID, e.DeliveredID, e.DeliveredHasRetry, e.RPCKind, e.RPCID)
	case observe.KindEnd:
		s = fmt.Sprintf("end %s msgs=%s", o.End.Cause, messages(o.End.Messages))
	}
	if len(o.Fired) > 0 {
		s += " fired=["
		for i, f := range o.Fired {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprintf("{%d %s}", f.Index, f.Kind)
		}
		s += "]"
	}
	r.add(s)
}

// TestObservationsTellWhatHappened: an observer sees each request,
// response, event with its fate and the fields the client got, and the
// end of each exchange with its cause, in order.
func TestObservationsTellWhatHappened(t *testing.T) {
	checkNoLeaks(t)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") == "application/json" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
			return
		}
		sseHeader(w)
		writePieces(w, threeEvents)
	})
	fired := []faults.Firing{{Index: 0, Kind: "test"}}
	plan := &scriptPlan{event: func(ev *mcp.Event) faults.EventAction {
		switch ev.Index {
		case 0:
			return faults.EventAction{StripRetry: true, Fired: fired}
		case 1:
			return faults.EventAction{Drop: true, Fired: fired}
		}
		return faults.EventAction{Duplicate: 1, Close: faults.CloseAfter, Fired: fired}
	}}
	rec := &recorder{}
	fray, _ := front(t, up, func(o *forward.Options) { o.Faults = plan; o.Observer = rec })

	roundTrip(t, "POST", fray+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, map[string]string{"Accept": "application/json"})
	roundTrip(t, "GET", fray+"/mcp", "", map[string]string{"Last-Event-ID": "0"})

	want := []string{
		`request POST /mcp lei=false:"" msgs=[{request initialize 1}]`,
		`response 200 upstream sse=false session="s1"`,
		`end complete msgs=[{response  1}]`,
		`request GET /mcp lei=true:"0" msgs=[]`,
		`response 200 upstream sse=true session=""`,
		`event 0 id="p" delivered copies=1 delivered-id=true:"p" retry=false msg=none: fired=[{0 test}]`,
		`event 1 id="1" dropped copies=0 delivered-id=false:"" retry=false msg=notification: fired=[{0 test}]`,
		`event 2 id="2" delivered copies=2 delivered-id=true:"2" retry=false msg=response:7 fired=[{0 test}]`,
		`end fault-closed msgs=[]`,
	}
	got := rec.all()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("observations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// messages formats JSON-RPC identities as kind, method and id.
func messages(ms []observe.Message) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("{%s %s %s}", m.Kind, m.Method, m.ID))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

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

// TestObservedRequestNamesCancelledIDs: a POST of notifications/cancelled
// tells observers which request the client gave up on, so that the
// verifier does not wait for that request's response.
func TestObservedRequestNamesCancelledIDs(t *testing.T) {
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	var observed list[[]string]
	obs := observe.Func(func(o *observe.Observation) {
		if o.Kind == observe.KindRequest {
			observed.add(slices.Clone(o.Request.Cancels))
		}
	})
	fray, _ := front(t, up, func(o *forward.Options) { o.Observer = obs })
	bodies := []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a-7","reason":"user"}}`,
		`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}},{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":4}}]`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"requestId":6}}`,
	}
	for _, b := range bodies {
		readBody(post(t, fray+"/mcp", b))
	}
	cancels := observed.all()
	want := [][]string{{`"a-7"`}, {`3`}, nil}
	if len(cancels) != len(want) {
		t.Fatalf("%d requests observed, want %d", len(cancels), len(want))
	}
	for i := range want {
		if !slices.Equal(cancels[i], want[i]) {
			t.Errorf("request %d: Cancels = %q, want %q", i, cancels[i], want[i])
		}
	}
}
