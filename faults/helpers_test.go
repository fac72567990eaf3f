package faults_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
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
func postEx() *mcp.Exchange {
	return &mcp.Exchange{
		Method: "POST", Path: "/mcp", Stream: mcp.StreamPost,
		SessionSeq: 1, StreamSeq: 1, RPCKind: mcp.RPCRequest,
		RPCMethod: "tools/call", RPCID: "7", Header: http.Header{},
	}
}

// evOpt changes a synthetic event.
type evOpt func(*mcp.Event)

func withID(id string) evOpt {
	return func(e *mcp.Event) { e.ID, e.HasID = []byte(id), true }
}

func priming(e *mcp.Event) {
	e.ID, e.HasID, e.Priming, e.Dispatched, e.RPCKind = []byte("p"), true, true, false, mcp.RPCNone
}

func withRetry(e *mcp.Event) { e.HasRetry = true }

func rpc(kind mcp.RPCKind, method string) evOpt {
	return func(e *mcp.Event) { e.RPCKind, e.RPCMethod = kind, []byte(method) }
}

func typed(t string) evOpt { return func(e *mcp.Event) { e.Type = []byte(t) } }

func at(d time.Duration) evOpt {
	return func(e *mcp.Event) { e.SinceStream, e.SinceRun = d, d }
}

func comment(e *mcp.Event) { e.Dispatched, e.RPCKind = false, mcp.RPCNone }

// ev is event i of a stream, a JSON-RPC notification by default.
func ev(i int, opts ...evOpt) mcp.Event {
	e := mcp.Event{Index: i, Dispatched: true, RPCKind: mcp.RPCNotification, RPCMethod: []byte("notifications/progress")}
	for _, o := range opts {
		o(&e)
	}
	return e
}

// drive runs a stream of events through a plan and returns every action.
func drive(p faults.Plan, ex *mcp.Exchange, evs []mcp.Event) (faults.StreamAction, []faults.EventAction) {
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
