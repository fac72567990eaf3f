package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
)

// swapped is the profile put in force mid-run: polling-server's cut, with
// a seed of its own and a severity of its own.
const swapped = `name = "swapped"
seed = 9

[checks]
"client.backoff" = "off"

[[fault]]
kind = "close"
stream = "post"
request_method = "tools/call"
after_priming = true
`

// TestProfileChangesAreRecorded: a profile swapped and a fault disabled
// through the admin API mid-run are observations: the trace holds them,
// the report names the profile in force at the end with its seed and
// lists the changes, the faults of the swapped profile fire, and fray
// check of the trace gives the live report.
func TestProfileChangesAreRecorded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	tw, err := trace.Create(path, trace.WriterOptions{Header: trace.Header{Started: time.Now(), Profile: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, up.URL, Options{Mutable: true, Trace: tw})
	fray := httptest.NewServer(eng.Handler())
	defer fray.Close()
	admin := httptest.NewServer(eng.AdminHandler())
	defer admin.Close()

	calls := func(n int) *scripted.Result {
		res, err := scripted.RunClient(ctx, scripted.ClientOptions{URL: fray.URL + "/mcp", Calls: n})
		if err != nil {
			t.Fatalf("client: %v", err)
		}
		return res
	}
	if res := calls(2); len(res.Resumes) != 0 {
		t.Fatalf("with no profile in force the client resumed from %q", res.Resumes)
	}
	adminDo(t, ctx, http.MethodPut, admin.URL+"/profile", swapped)
	if res := calls(2); len(res.Resumes) != 2 {
		t.Fatalf("under the swapped profile the client resumed %d times, want 2 (every call cut)", len(res.Resumes))
	}
	adminDo(t, ctx, http.MethodPost, admin.URL+"/faults/0/disable", "")
	if res := calls(1); len(res.Resumes) != 0 {
		t.Fatalf("with the fault disabled the client resumed from %q", res.Resumes)
	}
	if !eng.Wait(ctx, true) {
		t.Fatal("exchanges still open after the client finished")
	}
	st := eng.Stop()
	if !st.Drained {
		t.Fatalf("stop %+v, want drained", st)
	}
	live, err := eng.Finish(st, nil)
	if err != nil {
		t.Fatal(err)
	}

	if live.Profile != "swapped" || live.Seed != 9 {
		t.Errorf("report names profile %q seed %d, want the one in force at the end: swapped, 9", live.Profile, live.Seed)
	}
	if len(live.Changes) != 2 || live.Changes[0].Action != observe.ProfileSwap || live.Changes[1].Action != observe.ProfileDisable ||
		live.Changes[1].Fault == nil || *live.Changes[1].Fault != 0 || live.Changes[0].AtMS > live.Changes[1].AtMS {
		t.Errorf("report's changes %+v, want a swap then fault 0 disabled", live.Changes)
	}
	if n := faultCount(live, "close"); n != 2 {
		t.Errorf("the swapped profile's close fired %d times, want 2", n)
	}
	for _, c := range live.Checks {
		if c.ID == "client.backoff" && c.Severity != "off" {
			t.Errorf("client.backoff severity %q after the swap, want the swapped profile's off", c.Severity)
		}
	}

	rd, err := trace.Open(path, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	offline, note, err := Check(rd)
	if err != nil || note != "" {
		t.Fatalf("check: %v %q", err, note)
	}
	if a, b := timeless(live), timeless(offline); !reflect.DeepEqual(a, b) {
		t.Errorf("fray check of the trace differs from the live report:\nlive    %+v\noffline %+v", a, b)
	}
}

func adminDo(t *testing.T, ctx context.Context, method, url, body string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/toml")
	}
	resp := do(t, http.DefaultClient, req)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s", method, url, resp.Status)
	}
}

func faultCount(r report.Report, kind string) int {
	for _, f := range r.Faults {
		if f.Kind == kind {
			return f.Count
		}
	}
	return 0
}

// timeless is a report with its timing fields cleared.
func timeless(r report.Report) report.Report {
	r.DurationMS, r.Partial = 0, false
	for i := range r.Checks {
		for j := range r.Checks[i].Evidence {
			r.Checks[i].Evidence[j].AtMS = 0
		}
	}
	return r
}

// manualClock is a clock whose timers fire when the test says.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []manualTimer
}

type manualTimer struct {
	at time.Time
	f  func()
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, manualTimer{c.now.Add(d), f})
	return func() bool { return false }
}

// advance moves the clock on by d and runs the timers due, in order.
func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []manualTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t)
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	slices.SortFunc(due, func(a, b manualTimer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// TestReproduceMakesTheChangesAgain: the profile changes a trace recorded
// are read back by Reproduce and made again by a new engine at the same
// times of its run, each recorded again.
func TestReproduceMakesTheChangesAgain(t *testing.T) {
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, trace.WriterOptions{Header: trace.Header{Started: time.Now(), Profile: "lossy-resume", Seed: 3, ProfileText: builtinText(t, "lossy-resume")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*observe.Observation{
		{Kind: observe.KindProfile, At: 2 * time.Second, Profile: &observe.ProfileChange{Action: observe.ProfileSwap, Name: "swapped", Seed: 9, Text: swapped}},
		{Kind: observe.KindProfile, At: 5 * time.Second, Profile: &observe.ProfileChange{Action: observe.ProfileDisable, Name: "swapped", Seed: 9, Fault: 0}},
	} {
		tw.Observe(o)
	}
	if err := tw.Finish(trace.End{At: 6 * time.Second, Drained: true}); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.NewReader(&buf, "recorded", trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prof, changes, err := Reproduce(rd)
	if err != nil {
		t.Fatal(err)
	}
	if prof.Name != "lossy-resume" || prof.Seed != 3 || len(changes) != 2 || changes[0].Profile == nil ||
		changes[0].Profile.Seed != 9 || changes[1].Profile != nil || changes[1].On || changes[1].Fault != 0 {
		t.Fatalf("Reproduce: %s seed %d, changes %+v", prof.Name, prof.Seed, changes)
	}

	clock := &manualClock{now: time.Unix(1000, 0)}
	var seen []string
	var mu sync.Mutex
	watch := observe.Func(func(o *observe.Observation) {
		if o.Kind == observe.KindProfile {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s %s@%v", o.Profile.Action, o.Profile.Name, o.At))
			mu.Unlock()
		}
	})
	eng := newEngine(t, "http://127.0.0.1:1", Options{Profile: prof, Changes: changes, Clock: clock, Watch: watch})
	clock.advance(time.Second)
	if p, _ := eng.InForce(); p.Name != "lossy-resume" {
		t.Fatalf("after 1s %s is in force", p.Name)
	}
	clock.advance(time.Second)
	if p, s := eng.InForce(); p.Name != "swapped" || s != 9 {
		t.Fatalf("after 2s %s seed %d is in force, want swapped 9", p.Name, s)
	}
	clock.advance(3 * time.Second)
	if st := eng.Stats(); len(st) != 1 || st[0].Enabled {
		t.Fatalf("after 5s the faults are %+v, want the one fault disabled", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"swap swapped@2s", "disable swapped@5s"}; !slices.Equal(seen, want) {
		t.Errorf("recorded %q, want %q", seen, want)
	}
}

func builtinText(t *testing.T, name string) string {
	p, err := profiles.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(p.Text)
}
