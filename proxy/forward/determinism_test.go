package forward_test

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/forward"
)

// The scripted traffic: detSessions sessions, begun one after the other,
// each making detCalls tools/call requests answered by an SSE stream of
// detEvents events with ids.
const (
	detSessions = 4
	detCalls    = 6
	detEvents   = 7
)

// detRun is what one run through fray produced.
type detRun struct {
	streams   map[string]string // "session/id" -> the bytes the client got
	decisions []string          // logged fault decisions, sorted
}

// TestSameSeedSameFaultsThroughFray: the same scripted traffic through the
// built-in lossy-resume profile with the same seed gives the same bytes on
// every stream and the same logged decisions, whether the streams run all
// at once or one by one in reverse; another seed decides differently. The
// profile's first = true is left out: which stream comes first is the
// order of arrival, which this test changes on purpose.
func TestSameSeedSameFaultsThroughFray(t *testing.T) {
	checkNoLeaks(t)
	var forward, reverse []detCall
	for s := 1; s <= detSessions; s++ {
		for id := 1; id <= detCalls; id++ {
			forward = append(forward, detCall{session: s, id: id})
		}
	}
	reverse = slices.Clone(forward)
	slices.Reverse(reverse)

	a := runDeterminism(t, 7, forward, true)
	b := runDeterminism(t, 7, reverse, false)
	if !reflect.DeepEqual(a.decisions, b.decisions) {
		t.Fatalf("same seed, different decisions:\nconcurrent: %q\nreversed:   %q", a.decisions, b.decisions)
	}
	cut := 0
	for k, got := range a.streams {
		if b.streams[k] != got {
			t.Errorf("stream %s: concurrent run got\n%q\nreversed run got\n%q", k, got, b.streams[k])
		}
		if !strings.Contains(got, detResponse(k)) {
			cut++
		}
	}
	if cut == 0 || cut == len(a.streams) {
		t.Fatalf("%d of %d streams lost events; lossy-resume should cut about half, or the test proves nothing", cut, len(a.streams))
	}
	if len(a.decisions) == 0 {
		t.Fatal("no fault decision logged")
	}
	c := runDeterminism(t, 8, forward, false)
	if reflect.DeepEqual(a.decisions, c.decisions) {
		t.Fatalf("seeds 7 and 8 gave the same decisions: %q", a.decisions)
	}
}

type detCall struct{ session, id int }

// runDeterminism starts a fresh upstream and fray with lossy-resume and
// seed, opens the sessions in order, then makes the calls, all at once
// when concurrent is set and one by one in the order given otherwise.
func runDeterminism(t *testing.T, seed uint64, calls []detCall, concurrent bool) detRun {
	t.Helper()
	prof, err := profiles.Builtin("lossy-resume")
	if err != nil {
		t.Fatal(err)
	}
	drawn := *prof
	drawn.Faults = slices.Clone(prof.Faults)
	for i, f := range drawn.Faults {
		params := maps.Clone(f.Params)
		delete(params, "first")
		drawn.Faults[i].Params = params
	}
	plan, err := profiles.NewActive(&drawn, &seed)
	if err != nil {
		t.Fatal(err)
	}
	fray, rec := front(t, upServer(t, detUpstream), func(o *forward.Options) { o.Faults, o.LogFaults = plan, true })
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	// Sessions are numbered in the order fray first sees them: they are
	// begun in the same order in every run.
	sids := make(map[int]string)
	for s := 1; s <= detSessions; s++ {
		resp, err := detPost(client, fray, "", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sids[s] = resp.Header.Get("Mcp-Session-Id")
	}
	run := detRun{streams: make(map[string]string)}
	var mu sync.Mutex
	call := func(c detCall) error {
		resp, err := detPost(client, fray, sids[c.session],
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow-count"}}`, c.id))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("call %v: %w", c, err)
		}
		mu.Lock()
		run.streams[fmt.Sprintf("%d/%d", c.session, c.id)] = string(b)
		mu.Unlock()
		return nil
	}
	workers := 1
	if concurrent {
		workers = len(calls)
	}
	for _, err := range inParallel(len(calls), workers, func(i int) error { return call(calls[i]) }) {
		t.Fatal(err)
	}
	if len(run.streams) != len(calls) {
		t.Fatalf("%d streams for %d calls", len(run.streams), len(calls))
	}
	// The exchange counter follows arrival order, so it is left out; the
	// rest names the decision whatever the schedule.
	for _, l := range rec.find("fault") {
		run.decisions = append(run.decisions, fmt.Sprintf("session=%s stream=%s rpc_id=%s at=%s fault=%s kind=%s",
			l["session"], l["stream"], l["rpc_id"], l["at"], l["fault"], l["kind"]))
	}
	slices.Sort(run.decisions)
	return run
}

func detPost(client *http.Client, fray, sid, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, fray+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return client.Do(req)
}

// detUpstream answers initialize with a session id that differs run to
// run, and each tools/call with a stream of detEvents events: a priming
// event, progress notifications and the response, each with an id.
func detUpstream(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(string(body), `"initialize"`) {
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("sess-%x", rand.Uint64()))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}`)
		return
	}
	var id int
	if _, err := fmt.Sscanf(string(body[strings.Index(string(body), `"id":`):]), `"id":%d`, &id); err != nil {
		http.Error(w, "no id", http.StatusBadRequest)
		return
	}
	sseHeader(w)
	writePieces(w, fmt.Sprintf("id: %d-0\ndata:\n\n", id))
	for i := 1; i < detEvents-1; i++ {
		writePieces(w, fmt.Sprintf("id: %d-%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", id, i, i))
	}
	writePieces(w, fmt.Sprintf("id: %d-%d\ndata: %s\n\n", id, detEvents-1, detResult(id)))
}

func detResult(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"done"}]}}`, id)
}

// detResponse is the response a stream "session/id" ends with when whole.
func detResponse(key string) string {
	_, id, _ := strings.Cut(key, "/")
	return `"id":` + id + `,"result"`
}
