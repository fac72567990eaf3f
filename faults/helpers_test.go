package faults_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
)

// spec builds a Spec from a kind and key/value pairs.
func spec(kind string, kv ...any) faults.Spec {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return faults.Spec{Kind: kind, Params: m}
}

func compile(t testing.TB, seed uint64, specs ...faults.Spec) *faults.Set {
	t.Helper()
	s, err := faults.Compile(seed, specs)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

// postEx is a POST of tools/call in session 1.
func postEx() *faults.Exchange {
	return &faults.Exchange{
		Method: "POST", Path: "/mcp", Stream: faults.StreamPost,
		SessionSeq: 1, StreamSeq: 1, RPCKind: faults.RPCRequest,
		RPCMethod: "tools/call", RPCID: "7", Header: http.Header{},
	}
}

// evOpt changes a synthetic event.
type evOpt func(*faults.Event)

func withID(id string) evOpt {
	return func(e *faults.Event) { e.ID, e.HasID = []byte(id), true }
}

func priming(e *faults.Event) {
	e.ID, e.HasID, e.Priming, e.Dispatched, e.RPCKind = []byte("p"), true, true, false, faults.RPCNone
}

func withRetry(e *faults.Event) { e.HasRetry = true }

func rpc(kind faults.RPCKind, method string) evOpt {
	return func(e *faults.Event) { e.RPCKind, e.RPCMethod = kind, []byte(method) }
}

func typed(t string) evOpt { return func(e *faults.Event) { e.Type = []byte(t) } }

func at(d time.Duration) evOpt {
	return func(e *faults.Event) { e.SinceStream, e.SinceRun = d, d }
}

func comment(e *faults.Event) { e.Dispatched, e.RPCKind = false, faults.RPCNone }

// ev is event i of a stream, a JSON-RPC notification by default.
func ev(i int, opts ...evOpt) faults.Event {
	e := faults.Event{Index: i, Dispatched: true, RPCKind: faults.RPCNotification, RPCMethod: []byte("notifications/progress")}
	for _, o := range opts {
		o(&e)
	}
	return e
}

// drive runs a stream of events through a plan and returns every action.
func drive(p faults.Plan, ex *faults.Exchange, evs []faults.Event) (faults.StreamAction, []faults.EventAction) {
	sp := p.Stream(ex)
	start := sp.Start()
	out := make([]faults.EventAction, len(evs))
	for i := range evs {
		out[i] = sp.Event(&evs[i])
	}
	return start, out
}

// fired lists the indexes of events whose action has firings.
func firedAt(acts []faults.EventAction) []int {
	var out []int
	for i, a := range acts {
		if len(a.Fired) > 0 {
			out = append(out, i)
		}
	}
	return out
}
