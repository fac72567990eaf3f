package faults_test

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

func TestExchangeSelectors(t *testing.T) {
	get := &mcp.Exchange{Method: "GET", Path: "/mcp", Stream: mcp.StreamGet, SessionSeq: 1, StreamSeq: 1, Header: http.Header{}}
	legacy := &mcp.Exchange{Method: "POST", Path: "/messages", Stream: mcp.StreamLegacy, SessionSeq: 1, StreamSeq: 1, RPCKind: mcp.RPCNotification, RPCMethod: "notifications/initialized", Header: http.Header{}}
	tests := []struct {
		name string
		sel  []any
		ex   *mcp.Exchange
		want bool
	}{
		{"no selector", nil, get, true},
		{"stream matches", []any{"stream", "get"}, get, true},
		{"stream differs", []any{"stream", "post"}, get, false},
		{"stream list", []any{"stream", []any{"post", "legacy"}}, legacy, true},
		{"stream any", []any{"stream", "any"}, legacy, true},
		{"method case-insensitive", []any{"method", "post"}, postEx(), true},
		{"method differs", []any{"method", "DELETE"}, postEx(), false},
		{"path glob", []any{"path", "/mess*"}, legacy, true},
		{"path glob differs", []any{"path", "/mcp/*"}, postEx(), false},
		{"rpc_method glob", []any{"rpc_method", "notifications/*"}, legacy, true},
		{"rpc_method differs", []any{"rpc_method", "tools/*"}, legacy, false},
		{"rpc_kind", []any{"rpc_kind", "request"}, postEx(), true},
		{"rpc_kind differs", []any{"rpc_kind", []any{"response", "error"}}, postEx(), false},
		{"schedule not yet", []any{"after", "1m"}, get, false},
		{"request_method", []any{"request_method", "tools/call"}, postEx(), true},
		{"request_method on a GET", []any{"request_method", "*"}, get, true},
		{"request_method differs", []any{"request_method", "tools/list"}, postEx(), false},
		{"request_name", []any{"request_name", "slow-*"}, named("slow-count"), true},
		{"request_name differs", []any{"request_name", "echo"}, named("slow-count"), false},
		{"request_name on a request without one", []any{"request_name", "*"}, postEx(), true},
		{"request_name on a request without one differs", []any{"request_name", "?*"}, postEx(), false},
		{"stream_seq", []any{"stream_seq", 1}, postEx(), true},
		{"stream_seq differs", []any{"stream_seq", 2}, postEx(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := compile(t, 1, spec("latency", append([]any{"delay", "1s"}, tt.sel...)...)).Exchange(tt.ex)
			if got := a.Latency > 0; got != tt.want {
				t.Errorf("fired = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEventSelectors(t *testing.T) {
	evs := []mcp.Event{
		ev(0, priming),
		ev(1, typed("message"), withID("1")),
		ev(2, typed("endpoint"), rpc(mcp.RPCNone, "")),
		ev(3, rpc(mcp.RPCRequest, "sampling/createMessage"), at(5*time.Second)),
		ev(4, rpc(mcp.RPCError, ""), at(10*time.Second)),
	}
	tests := []struct {
		name string
		sel  []any
		want []int
	}{
		{"all", nil, []int{0, 1, 2, 3, 4}},
		{"nth", []any{"nth", int64(3)}, []int{3}},
		{"priming", []any{"priming", true}, []int{0}},
		{"not priming", []any{"priming", false}, []int{1, 2, 3, 4}},
		{"event message includes untyped", []any{"event", "message"}, []int{0, 1, 3, 4}},
		{"event endpoint", []any{"event", "endpoint"}, []int{2}},
		{"rpc_kind of the event", []any{"rpc_kind", []any{"request", "error"}}, []int{3, 4}},
		{"rpc_method of the event", []any{"rpc_method", "sampling/*"}, []int{3}},
		{"stream_after", []any{"stream_after", "5s"}, []int{3, 4}},
		{"run schedule", []any{"after", "4s", "for", "2s"}, []int{3}},
		{"every", []any{"every", "5s", "for", "1s"}, []int{0, 1, 2, 3, 4}},
		{"every later", []any{"after", "1s", "every", "5s", "for", "1s"}, nil},
		{"probability 0", []any{"probability", 0.0}, nil},
		{"times", []any{"times", int64(2)}, []int{0, 1}},
		{"request_method", []any{"request_method", "tools/*"}, []int{0, 1, 2, 3, 4}},
		{"request_method differs", []any{"request_method", "resources/*"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, acts := drive(compile(t, 1, spec("drop", tt.sel...)), postEx(), append([]mcp.Event(nil), evs...))
			if got := firedAt(acts); !slices.Equal(got, tt.want) {
				t.Errorf("fired at %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProbabilityIsRoughlyHonoured(t *testing.T) {
	set := compile(t, 42, spec("drop", "probability", 0.25))
	evs := make([]mcp.Event, 4000)
	for i := range evs {
		evs[i] = ev(i)
	}
	_, acts := drive(set, postEx(), evs)
	n := len(firedAt(acts))
	if n < 850 || n > 1150 {
		t.Errorf("dropped %d of 4000 at probability 0.25", n)
	}
}

func TestStreamProbabilityIsPerStream(t *testing.T) {
	set := compile(t, 42, spec("lose", "probability", 0.5))
	lost := 0
	for seq := 1; seq <= 400; seq++ {
		ex := postEx()
		ex.StreamSeq, ex.RPCID = seq, strconv.Itoa(seq)
		_, acts := drive(set, ex, sseStream())
		if n := len(firedAt(acts)); n > 1 {
			t.Fatalf("stream %d: lose fired %d times", seq, n)
		} else if n == 1 {
			lost++
		}
	}
	if lost < 150 || lost > 250 {
		t.Errorf("lost on %d of 400 streams at probability 0.5", lost)
	}
}

func TestTimesScopes(t *testing.T) {
	tests := []struct {
		name  string
		scope string
		want  int
	}{
		{"run", "run", 2},
		{"session", "session", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := compile(t, 1, spec("close", "after_events", int64(1), "times", int64(2), "times_scope", tt.scope))
			n := 0
			for sess := 1; sess <= 3; sess++ {
				for seq := 1; seq <= 4; seq++ {
					ex := postEx()
					ex.SessionSeq, ex.StreamSeq = sess, seq
					_, acts := drive(set, ex, sseStream())
					n += len(firedAt(acts))
				}
			}
			if n != tt.want {
				t.Errorf("closed %d streams, want %d", n, tt.want)
			}
		})
	}
}

func TestSetEnabled(t *testing.T) {
	set := compile(t, 1, spec("drop"), spec("duplicate"))
	if err := set.SetEnabled(0, false); err != nil {
		t.Fatal(err)
	}
	sp := set.Stream(postEx())
	e := ev(0)
	if a := sp.Event(&e); a.Drop || a.Duplicate != 1 {
		t.Errorf("with drop off: %+v", a)
	}
	_ = set.SetEnabled(0, true)
	if a := sp.Event(&e); !a.Drop {
		t.Errorf("drop back on did not drop: %+v", a)
	}
	if err := set.SetEnabled(2, true); !errors.Is(err, faults.ErrNoFault) {
		t.Errorf("SetEnabled(2) = %v, want ErrNoFault", err)
	}
	st := set.Stats()
	if len(st) != 2 || st[0].Fired != 1 || st[1].Fired != 2 || st[0].Kind != "drop" || !st[0].Enabled {
		t.Errorf("Stats = %+v", st)
	}
}

// named is postEx calling the tool name.
func named(name string) *mcp.Exchange {
	ex := postEx()
	ex.RPCName = name
	return ex
}
