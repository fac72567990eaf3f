package admin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
)

// lossyResume returns the built-in lossy-resume profile, in force.
func lossyResume(t *testing.T) *profiles.Active {
	t.Helper()
	p, err := profiles.Builtin("lossy-resume")
	if err != nil {
		t.Fatal(err)
	}
	active, err := profiles.NewActive(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return active
}

func newServer(t *testing.T) (*httptest.Server, *profiles.Active) {
	t.Helper()
	active := lossyResume(t)
	srv := httptest.NewServer(admin.New(active))
	t.Cleanup(srv.Close)
	return srv, active
}

// send sends req and returns the status and the body of the answer.
func send(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// newRequest is http.NewRequest, failing the test on an error.
func newRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// do sends a request and decodes the JSON answer into into, unless nil.
func do(t *testing.T, method, url, body string, into any) int {
	t.Helper()
	code, data := send(t, newRequest(t, method, url, body))
	if into != nil {
		if err := json.Unmarshal(data, into); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
	return code
}

type problems struct {
	Errors []admin.ProblemView `json:"errors"`
}

func TestGetProfile(t *testing.T) {
	srv, _ := newServer(t)
	var v admin.ProfileView
	if code := do(t, "GET", srv.URL+"/profile", "", &v); code != 200 {
		t.Fatalf("status %d", code)
	}
	if v.Name != "lossy-resume" || v.Seed != 42 || len(v.Faults) != 1 || v.Faults[0].Kind != "lose" || !strings.Contains(v.TOML, "lose") {
		t.Errorf("got %+v", v)
	}
}

func TestPutProfile(t *testing.T) {
	srv, active := newServer(t)
	var v admin.ProfileView
	code := do(t, "PUT", srv.URL+"/profile", "name = \"mine\"\nseed = 5\n[[fault]]\nkind = \"drop\"\n", &v)
	if code != 200 || v.Name != "mine" || active.Profile().Name != "mine" || active.Seed() != 5 {
		t.Fatalf("status %d, view %+v, active %q", code, v, active.Profile().Name)
	}
	var p problems
	code = do(t, "PUT", srv.URL+"/profile", "[[fault]]\nkind = \"delay\"\ndelay = \"fast\"\nstrem = 1\n", &p)
	if code != 400 || len(p.Errors) != 2 {
		t.Fatalf("status %d, %+v; want 400 and two problems", code, p)
	}
	if e := p.Errors[0]; e.Line != 3 || e.Col != 9 || e.Path != "fault[0].delay" {
		t.Errorf("first problem %+v", e)
	}
	if active.Profile().Name != "mine" {
		t.Error("a rejected profile replaced the active one")
	}
}

func TestEnableDisable(t *testing.T) {
	srv, active := newServer(t)
	var st faults.FaultStats
	if code := do(t, "POST", srv.URL+"/faults/0/disable", "", &st); code != 200 || st.Enabled {
		t.Fatalf("disable: %d %+v", code, st)
	}
	if active.Stats()[0].Enabled {
		t.Error("fault still enabled")
	}
	if code := do(t, "POST", srv.URL+"/faults/0/enable", "", &st); code != 200 || !st.Enabled {
		t.Fatalf("enable: %d %+v", code, st)
	}
	var p problems
	if code := do(t, "POST", srv.URL+"/faults/9/enable", "", &p); code != 404 || len(p.Errors) != 1 {
		t.Errorf("unknown fault: %d %+v", code, p)
	}
	if code := do(t, "POST", srv.URL+"/faults/x/enable", "", &p); code != 400 {
		t.Errorf("bad index: %d", code)
	}
	if code := do(t, "GET", srv.URL+"/faults/0/enable", "", nil); code != 405 {
		t.Errorf("GET on a POST route: %d, want 405", code)
	}
}

func TestStats(t *testing.T) {
	srv, active := newServer(t)
	ex := &mcp.Exchange{Method: "POST", Stream: mcp.StreamPost, SessionSeq: 1, RPCMethod: "tools/call", RPCID: "1"}
	fired := 0
	for seq := 1; seq <= 20; seq++ {
		ex.StreamSeq = seq
		sp := active.Stream(ex)
		for i := 0; i < 4; i++ {
			ev := mcp.Event{Index: i}
			if a := sp.Event(&ev); a.Lose > 0 {
				fired++
			}
		}
	}
	var v admin.StatsView
	if code := do(t, "GET", srv.URL+"/stats", "", &v); code != 200 {
		t.Fatalf("status %d", code)
	}
	if fired == 0 || v.Profile != "lossy-resume" || len(v.Faults) != 1 || v.Faults[0].Fired != int64(fired) {
		t.Errorf("stats %+v, want %d firings", v, fired)
	}
}

// three and one are the profiles swapped in turn while faults are
// switched.
const (
	three = "name = \"three\"\n[[fault]]\nkind = \"drop\"\n[[fault]]\nkind = \"drop\"\n[[fault]]\nkind = \"lose\"\nevents = 1\n"
	one   = "name = \"one\"\n[[fault]]\nkind = \"drop\"\n"
)

// TestEnableRacingSwap: switching fault 2 on while profiles of three
// faults and of one are swapped in turn answers 200 or 404, each time with
// a whole answer: the request reads the profile in force once, so the
// fault it switched is the one it reports.
func TestEnableRacingSwap(t *testing.T) {
	srv, _ := newServer(t)
	const rounds, enablers = 1000, 3
	errc := make(chan error, 1+enablers)
	go func() {
		for i := range rounds {
			body := three
			if i%2 == 1 {
				body = one
			}
			req, _ := http.NewRequest("PUT", srv.URL+"/profile", strings.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errc <- err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- nil
	}()
	enable := func() {
		for range rounds {
			resp, err := http.Post(srv.URL+"/faults/2/enable", "application/json", nil)
			if err != nil {
				errc <- fmt.Errorf("enable: %w (the handler panicked)", err)
				return
			}
			var st faults.FaultStats
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				if err := json.Unmarshal(data, &st); err != nil || st.Index != 2 || st.Kind != "lose" || !st.Enabled {
					errc <- fmt.Errorf("200 with %s (%v)", data, err)
					return
				}
			case 404:
			default:
				errc <- fmt.Errorf("status %d: %s", resp.StatusCode, data)
				return
			}
		}
		errc <- nil
	}
	for range enablers {
		go enable()
	}
	for range 1 + enablers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// swapAfterSwitch is a Control on which every fault switch is followed
// at once by a swap to a one-fault profile: the interleaving that
// TestEnableRacingSwap finds only now and then, every time.
type swapAfterSwitch struct {
	*profiles.Active
	t *testing.T
}

func (s swapAfterSwitch) SetEnabled(index int, on bool) (faults.FaultStats, error) {
	st, err := s.Active.SetEnabled(index, on)
	p, perr := profiles.Parse("one", strings.NewReader(one))
	if perr == nil {
		perr = s.Active.Swap(p)
	}
	if perr != nil {
		s.t.Fatal(perr)
	}
	return st, err
}

// TestEnableAnswersTheFaultItSwitched: the answer to an enable names the
// fault switched, from the profile it was switched in, even when another
// profile is swapped in between.
func TestEnableAnswersTheFaultItSwitched(t *testing.T) {
	p, err := profiles.Parse("three", strings.NewReader(three))
	if err != nil {
		t.Fatal(err)
	}
	active, err := profiles.NewActive(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(admin.New(swapAfterSwitch{active, t}))
	defer srv.Close()
	var st faults.FaultStats
	if code := do(t, "POST", srv.URL+"/faults/2/disable", "", &st); code != 200 || st.Index != 2 || st.Kind != "lose" || st.Enabled {
		t.Fatalf("status %d, %+v; want fault 2, lose, disabled", code, st)
	}
}

// TestPutHostileProfile: a profile nested far deeper than any profile
// needs, or larger than profiles.MaxSize, is refused with a 4xx that says
// why, and the profile in force stays.
func TestPutHostileProfile(t *testing.T) {
	srv, active := newServer(t)
	for _, tc := range []struct {
		name, body string
		code       int
		says       string
	}{
		{"deep", strings.Repeat("a.", profiles.MaxSize/3) + "a = 1\n", http.StatusBadRequest, "nest more than 32 deep"},
		{"large", strings.Repeat("# comment\n", profiles.MaxSize/10+10), http.StatusRequestEntityTooLarge, fmt.Sprintf("more than %d bytes", profiles.MaxSize)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p problems
			code := do(t, "PUT", srv.URL+"/profile", tc.body, &p)
			if code != tc.code || len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Message, tc.says) {
				t.Errorf("status %d, %+v; want %d saying %q", code, p, tc.code, tc.says)
			}
			if active.Profile().Name != "lossy-resume" {
				t.Error("a refused profile replaced the one in force")
			}
		})
	}
}

// TestRuntimeProfiles: the runtime's named profiles are served, a heap
// profile after a collection when asked; the command line, which may
// hold the admin token, is not.
func TestRuntimeProfiles(t *testing.T) {
	srv, _ := newServer(t)
	for _, c := range []struct {
		path   string
		status int
		gzip   bool // a profile in pprof's format, gzipped
	}{
		{"/debug/pprof/", http.StatusOK, false},
		{"/debug/pprof/heap?gc=1", http.StatusOK, true},
		{"/debug/pprof/goroutine", http.StatusOK, true},
		{"/debug/pprof/cmdline", http.StatusNotFound, false},
		{"/debug/pprof/symbol", http.StatusNotFound, false},
		{"/debug/pprof/nosuch", http.StatusNotFound, false},
	} {
		code, data := send(t, newRequest(t, http.MethodGet, srv.URL+c.path, ""))
		if code != c.status {
			t.Errorf("GET %s: %d, want %d", c.path, code, c.status)
		}
		if isGzip := len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b; isGzip != c.gzip {
			t.Errorf("GET %s: a gzipped profile %v, want %v (%d bytes)", c.path, isGzip, c.gzip, len(data))
		}
		if strings.Contains(string(data), os.Args[0]) {
			t.Errorf("GET %s: the answer holds the command line", c.path)
		}
	}
}

// TestMetricsRoute: once mounted, GET /metrics answers the metrics in the
// text format, and only with the bearer token when one is required.
func TestMetricsRoute(t *testing.T) {
	active := lossyResume(t)
	m := metrics.New(metrics.Options{})
	m.Observe(&observe.Observation{Kind: observe.KindRequest, Stream: mcp.StreamResume,
		Request: &observe.Request{Method: http.MethodGet, HasLastEventID: true}})
	h := admin.New(active)
	h.HandleMetrics(m.Handler())
	srv := httptest.NewServer(admin.RequireToken(h, "s3cret"))
	defer srv.Close()

	get := func(token string) (int, string) {
		req := newRequest(t, http.MethodGet, srv.URL+"/metrics", "")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		code, body := send(t, req)
		return code, string(body)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", code)
	}
	code, body := get("s3cret")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics with the token: %d, want 200: %s", code, body)
	}
	for _, want := range []string{"fray_resumptions_total 1\n", `fray_exchanges_total{stream="resume"} 1` + "\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q:\n%s", want, body)
		}
	}
}
