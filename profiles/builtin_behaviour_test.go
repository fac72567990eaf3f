package profiles_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

func exchange(stream mcp.StreamType, seq int, method string) *mcp.Exchange {
	ex := &mcp.Exchange{Method: "GET", Path: "/mcp", Stream: stream, SessionSeq: 1, StreamSeq: seq, Header: http.Header{}}
	if method != "" {
		ex.Method, ex.RPCKind, ex.RPCMethod, ex.RPCID = "POST", mcp.RPCRequest, method, strconv.Itoa(seq)
	}
	return ex
}

// answer is a server's answer stream: a priming event, a progress
// notification, the response.
func answer() []mcp.Event {
	return []mcp.Event{
		{Index: 0, ID: []byte("s1-0"), HasID: true, Priming: true},
		{Index: 1, ID: []byte("s1-1"), HasID: true, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")},
		{Index: 2, ID: []byte("s1-2"), HasID: true, Dispatched: true, RPCKind: mcp.RPCResponse},
	}
}

// closedAt returns the index of the event whose action ends the stream,
// or -1.
func closedAt(p faults.Plan, ex *mcp.Exchange, evs []mcp.Event) (int, faults.EventAction) {
	sp := p.Stream(ex)
	if a := sp.Start(); a.Close != faults.CloseNone {
		return -2, faults.EventAction{}
	}
	for i := range evs {
		if a := sp.Event(&evs[i]); a.Close != faults.CloseNone || a.Lose > 0 {
			return i, a
		}
	}
	return -1, faults.EventAction{}
}

func TestPollingServerCutsOnlyAfterAnID(t *testing.T) {
	set := builtinPlan(t, "polling-server")
	withRetry := 0
	for seq := 1; seq <= 40; seq++ {
		at, act := closedAt(set, exchange(mcp.StreamPost, seq, "tools/call"), answer())
		if at != 0 || act.Close != faults.CloseAfter {
			t.Fatalf("tools/call stream %d: closed at %d (%v), want a clean close after the priming event", seq, at, act.Close)
		}
		if act.HasSetRetry {
			withRetry++
		}
	}
	if withRetry == 0 || withRetry == 40 {
		t.Errorf("%d of 40 cut streams got a retry, want some with and some without", withRetry)
	}
	noPriming := answer()[1:]
	if at, _ := closedAt(set, exchange(mcp.StreamPost, 1, "tools/call"), noPriming); at != -1 {
		t.Errorf("a stream without a priming event was cut at %d", at)
	}
	for _, ex := range []*mcp.Exchange{exchange(mcp.StreamResume, 1, ""), exchange(mcp.StreamPost, 1, "initialize")} {
		if at, _ := closedAt(set, ex, answer()); at != -1 {
			t.Errorf("%v %s stream cut at %d", ex.Stream, ex.RPCMethod, at)
		}
	}
}

func TestLossyResumeLosesOnHalf(t *testing.T) {
	set := builtinPlan(t, "lossy-resume")
	lost := 0
	for seq := 1; seq <= 200; seq++ {
		if at, act := closedAt(set, exchange(mcp.StreamPost, seq, "tools/call"), answer()); at == 2 && act.Lose == 3 {
			lost++
		} else if at != -1 {
			t.Fatalf("stream %d: ended at %d with %+v", seq, at, act)
		}
	}
	if lost < 70 || lost > 130 {
		t.Errorf("lost on %d of 200 streams, want about half", lost)
	}
}

// TestStatelessCutCutsCallsMidWayAndListensAfterTheirAck: under
// stateless-cut, about half the tools/call streams of 2026-07-28 (a
// progress notification, then the response) are closed cleanly after the
// progress, never before it nor at the response; subscription streams
// are reset after their acknowledgement at most twice, and never refused:
// no published text asks a client to listen again after a refusal.
func TestStatelessCutCutsCallsMidWayAndListensAfterTheirAck(t *testing.T) {
	set := builtinPlan(t, "stateless-cut")
	call := []mcp.Event{
		{Index: 0, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")},
		{Index: 1, Dispatched: true, RPCKind: mcp.RPCResponse},
	}
	cut := 0
	for seq := 1; seq <= 40; seq++ {
		at, act := closedAt(set, exchange(mcp.StreamPost, seq, "tools/call"), call)
		switch {
		case at == 0 && act.Close == faults.CloseAfter:
			cut++
		case at != -1:
			t.Fatalf("tools/call stream %d: closed at %d (%v), want after the progress or not at all", seq, at, act.Close)
		}
	}
	if cut < 10 || cut > 30 {
		t.Errorf("%d of 40 tools/call streams cut, want about half", cut)
	}
	if a := set.Exchange(exchange(mcp.StreamPost, 41, mcp.MethodListen)); a.Status != 0 {
		t.Errorf("the first listen got status %d, want none", a.Status)
	}
	listen := []mcp.Event{
		{Index: 0, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte(mcp.MethodListenAcknowledged)},
		{Index: 1, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/tools/list_changed")},
	}
	resets := 0
	for seq := 42; seq <= 80; seq++ {
		at, act := closedAt(set, exchange(mcp.StreamPost, seq, mcp.MethodListen), listen)
		switch {
		case at == 0 && act.Close == faults.CloseReset:
			t.Fatalf("listen stream %d reset before its acknowledgement was written", seq)
		case at == 1 && act.Close == faults.CloseReset:
			resets++
		case at != -1:
			t.Fatalf("listen stream %d: closed at %d (%v)", seq, at, act.Close)
		}
	}
	if resets == 0 || resets > 2 {
		t.Errorf("%d listen streams reset, want 1 or 2", resets)
	}
}
