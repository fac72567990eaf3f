package profiles_test

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/mcp"
)

func TestBuiltinsValidate(t *testing.T) {
	want := []string{"buffering-proxy", "cut-fin", "cut-rst", "flaky-gateway", "gateway-errors", "idle-cut-125s", "idle-cut-300s",
		"legacy-sse", "lossy-resume", "mobile-network", "no-priming", "polling-server", "retry-storm", "soak", "stateless-cut"}
	names := profiles.Names()
	if !slices.Equal(names, want) {
		t.Fatalf("Names() = %v, want %v", names, want)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) { checkBuiltin(t, name) })
	}
}

// checkBuiltin fails unless the built-in name loads, is named name,
// describes itself in 100 bytes or more, has faults and compiles.
func checkBuiltin(t *testing.T, name string) *profiles.Profile {
	t.Helper()
	p, err := profiles.Builtin(name)
	if err != nil {
		t.Errorf("Builtin(%q): %v", name, err)
		return nil
	}
	if p.Name != name || len(p.Description) < 100 || len(p.Faults) == 0 {
		t.Errorf("%s: name %q, %d-byte description, %d faults", name, p.Name, len(p.Description), len(p.Faults))
	}
	if _, err := p.Plan(p.Seed); err != nil {
		t.Errorf("%s: Plan: %v", name, err)
	}
	return p
}

// TestUnknownBuiltinSuggests: a mistyped built-in name fails with
// ErrUnknownProfile and names the built-in it most likely meant.
func TestUnknownBuiltinSuggests(t *testing.T) {
	_, err := profiles.Resolve("lossy")
	if !errors.Is(err, profiles.ErrUnknownProfile) {
		t.Fatalf("Resolve(lossy) = %v, want ErrUnknownProfile", err)
	}
	if want := `unknown profile "lossy" (did you mean "lossy-resume"?)`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

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

// builtinPlan is the plan of the built-in profile name, with its own seed.
func builtinPlan(t *testing.T, name string) faults.Plan {
	t.Helper()
	p, err := profiles.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	set, err := p.Plan(p.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestIdleCutsArmEveryStream: the idle cutters arm their timeout on every
// kind of stream, and decide nothing at events.
func TestIdleCutsArmEveryStream(t *testing.T) {
	for name, want := range map[string]time.Duration{"idle-cut-125s": 125 * time.Second, "idle-cut-300s": 300 * time.Second} {
		set := builtinPlan(t, name)
		for i, ex := range []*mcp.Exchange{exchange(mcp.StreamPost, 1, "tools/call"), exchange(mcp.StreamGet, 2, ""), exchange(mcp.StreamResume, 3, "")} {
			sp := set.Stream(ex)
			if got := sp.Start().CloseIdle; got != want {
				t.Errorf("%s: stream %d (%v) idles out after %v, want %v", name, i, ex.Stream, got, want)
			}
			for _, ev := range answer() {
				if a := sp.Event(&ev); len(a.Fired) > 0 {
					t.Errorf("%s: event %d: %+v", name, ev.Index, a)
				}
			}
		}
	}
}

// TestBufferingProxyHoldsUntil4KiB: on a POST answer stream, small events
// are held until 4096 bytes have gathered; other streams pass.
func TestBufferingProxyHoldsUntil4KiB(t *testing.T) {
	set := builtinPlan(t, "buffering-proxy")
	for _, ex := range []*mcp.Exchange{exchange(mcp.StreamGet, 1, ""), exchange(mcp.StreamResume, 2, "")} {
		sp := set.Stream(ex)
		sp.Start()
		for _, ev := range answer() {
			if sp.Event(&ev).Buffer {
				t.Fatalf("%v stream: event %d held", ex.Stream, ev.Index)
			}
		}
	}
	sp := set.Stream(exchange(mcp.StreamPost, 3, "tools/call"))
	sp.Start()
	var released []int
	for i := range 100 {
		ev := mcp.Event{Index: i, Raw: make([]byte, 100), Dispatched: true, RPCKind: mcp.RPCNotification}
		if !sp.Event(&ev).Buffer {
			released = append(released, i)
		}
	}
	if len(released) != 2 || released[0] != 40 || released[1] != 81 {
		t.Errorf("released at events %v, want 40 and 81 (every 4096 bytes of 100-byte events)", released)
	}
}

// TestCutsFINAndRST: cut-fin ends each tools/call stream cleanly after its
// priming event, cut-rst aborts it at the next event, and neither touches
// another stream.
func TestCutsFINAndRST(t *testing.T) {
	for name, want := range map[string]struct {
		at   int
		mode faults.CloseMode
	}{"cut-fin": {0, faults.CloseAfter}, "cut-rst": {1, faults.CloseReset}} {
		set := builtinPlan(t, name)
		for seq := 1; seq <= 5; seq++ {
			at, act := closedAt(set, exchange(mcp.StreamPost, seq, "tools/call"), answer())
			if at != want.at || act.Close != want.mode {
				t.Errorf("%s: stream %d cut at %d (%v), want at %d (%v)", name, seq, at, act.Close, want.at, want.mode)
			}
		}
		if at, _ := closedAt(set, exchange(mcp.StreamResume, 9, ""), answer()); at != -1 {
			t.Errorf("%s: a resumption was cut at %d", name, at)
		}
	}
}

// TestGatewayErrorsCarryRetryAfter: over many reconnections each of the
// four statuses is answered, always with Retry-After, and a POST never.
func TestGatewayErrorsCarryRetryAfter(t *testing.T) {
	set := builtinPlan(t, "gateway-errors")
	seen := map[int]string{}
	for seq := 1; seq <= 400; seq++ {
		for _, st := range []mcp.StreamType{mcp.StreamResume, mcp.StreamGet} {
			a := set.Exchange(exchange(st, seq, ""))
			if a.Status == 0 {
				continue
			}
			if a.Header.Get("Retry-After") == "" {
				t.Errorf("status %d without Retry-After", a.Status)
			}
			seen[a.Status] = a.Header.Get("Retry-After")
		}
		if a := set.Exchange(exchange(mcp.StreamPost, seq, "tools/call")); a.Status != 0 {
			t.Fatalf("a tools/call POST was answered %d", a.Status)
		}
	}
	want := map[int]string{429: "2", 502: "1", 503: "2", 504: "1"}
	for code, ra := range want {
		if seen[code] != ra {
			t.Errorf("status %d: Retry-After %q, want %q (all seen: %v)", code, seen[code], ra, seen)
		}
	}
}

// TestPresetsValidate: every preset parses, is named after its file, says
// what it imitates and cites where its numbers come from, and no preset
// shares a name with a test profile.
func TestPresetsValidate(t *testing.T) {
	presets := profiles.Presets()
	if len(presets) < 7 {
		t.Fatalf("Presets() = %v, want at least 7", presets)
	}
	for _, name := range presets {
		if slices.Contains(profiles.Names(), name) {
			t.Errorf("%s is both a preset and a test profile", name)
		}
		if p := checkBuiltin(t, name); p != nil && !strings.Contains(p.Description, "(https://") {
			t.Errorf("%s: the description cites no source for its numbers", name)
		}
	}
}

// TestPresetTimeouts: each preset arms the timeout it is named after on
// the streams its intermediary cuts, and no other.
func TestPresetTimeouts(t *testing.T) {
	all := []mcp.StreamType{mcp.StreamPost, mcp.StreamGet, mcp.StreamResume}
	for _, tc := range []struct {
		name    string
		silence time.Duration
		on      []mcp.StreamType
	}{
		{"alb-idle-60s", 60 * time.Second, all},
		{"cloudflare-idle-100s", 100 * time.Second, all},
		{"envoy-stream-idle-300s", 300 * time.Second, all},
		{"editor-idle-305s", 305 * time.Second, all},
		{"nginx-buffering", 60 * time.Second, all},
		{"httpx-read-30s", 30 * time.Second, []mcp.StreamType{mcp.StreamPost, mcp.StreamResume}},
		{"envoy-route-30s", 0, nil},
	} {
		set := builtinPlan(t, tc.name)
		for i, st := range all {
			want := time.Duration(0)
			if slices.Contains(tc.on, st) {
				want = tc.silence
			}
			if got := set.Stream(exchange(st, i+1, "tools/call")).Start().CloseIdle; got != want {
				t.Errorf("%s: %v stream idles out after %v, want %v", tc.name, st, got, want)
			}
		}
	}
}

// TestHTTPXPresetRefusesTheStandaloneStream: the buffered httpx gateway
// answers a standalone GET 503 after its 30 s read timeout, and forwards
// POSTs.
func TestHTTPXPresetRefusesTheStandaloneStream(t *testing.T) {
	set := builtinPlan(t, "httpx-read-30s")
	a := set.Exchange(exchange(mcp.StreamGet, 1, ""))
	if a.Status != 503 || a.Latency != 30*time.Second {
		t.Errorf("standalone GET: status %d after %v, want 503 after 30s", a.Status, a.Latency)
	}
	if a := set.Exchange(exchange(mcp.StreamPost, 2, "tools/call")); a.Status != 0 || a.Latency != 0 {
		t.Errorf("POST: status %d after %v, want it forwarded", a.Status, a.Latency)
	}
}

// TestNginxPresetBuffersEveryStream: nginx buffers the standalone GET
// stream and resumed streams as it does POST answers.
func TestNginxPresetBuffersEveryStream(t *testing.T) {
	set := builtinPlan(t, "nginx-buffering")
	for i, st := range []mcp.StreamType{mcp.StreamPost, mcp.StreamGet, mcp.StreamResume} {
		sp := set.Stream(exchange(st, i+1, ""))
		sp.Start()
		ev := answer()[1]
		if !sp.Event(&ev).Buffer {
			t.Errorf("%v stream: a small event is not held", st)
		}
	}
}

// TestPresetsResolve: a preset is resolved by its bare name, as a test
// profile is, and a mistyped one is suggested.
func TestPresetsResolve(t *testing.T) {
	if p, err := profiles.Resolve("nginx-buffering"); err != nil || p.Name != "nginx-buffering" {
		t.Errorf("Resolve(nginx-buffering) = %v, %v", p, err)
	}
	_, err := profiles.Resolve("alb-idle-6s")
	if !errors.Is(err, profiles.ErrUnknownProfile) || !strings.Contains(err.Error(), `did you mean "alb-idle-60s"`) {
		t.Errorf("Resolve(alb-idle-6s) = %v", err)
	}
}
