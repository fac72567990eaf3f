package admin_test

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/internal/browsertest"
)

// attackPage is what a web page can try against an admin API it reaches
// under its own name (DNS rebinding: evil.example resolves to 127.0.0.1,
// so the API is the page's own origin) and from another origin: read the
// profile, replace it, and switch a fault off with a no-cors POST. It
// writes what it read into the page.
const attackPage = `<!doctype html><body>pending<script>
(async () => {
  const out = {};
  try { const r = await fetch('/profile'); out.read = r.status; out.text = (await r.text()).slice(0, 200); } catch (e) { out.read = String(e); }
  try { const r = await fetch('/profile', {method: 'PUT', headers: {'Content-Type': 'application/toml'}, body: 'name = "evil"\n[[fault]]\nkind = "drop"\n'}); out.put = r.status; } catch (e) { out.put = String(e); }
  try { await fetch('http://127.0.0.1:%s/faults/0/disable', {method: 'POST', mode: 'no-cors'}); out.cross = 'sent'; } catch (e) { out.cross = String(e); }
  document.body.textContent = 'RESULT ' + JSON.stringify(out);
})();
</script></body>`

// TestWebPageCannotDriveTheAPI attacks the admin API from a page in
// headless Chromium, first unguarded, where the page reads the profile,
// replaces it and disables a fault (so the attack is real), then behind
// SameOrigin, where every request the page makes reaches the API and is
// refused, and nothing changes.
func TestWebPageCannotDriveTheAPI(t *testing.T) {
	bin := browsertest.Chromium(t, "the admin API was not attacked from a browser")
	for _, guarded := range []bool{false, true} {
		t.Run(fmt.Sprintf("guarded=%v", guarded), func(t *testing.T) {
			active := lossyResume(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			var api http.Handler = admin.New(active)
			if guarded {
				api = admin.SameOrigin(api, ln.Addr(), "0")
			}
			var mu sync.Mutex
			var seen []string
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/attack.html" {
					// The attacker's server, before the name was rebound.
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprintf(w, attackPage, port)
					return
				}
				rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
				api.ServeHTTP(rec, r)
				// A browser retries a 421 once, on a new connection, and
				// asks for a favicon: each distinct request counts once.
				line := fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.status)
				mu.Lock()
				if r.URL.Path != "/favicon.ico" && !slices.Contains(seen, line) {
					seen = append(seen, line)
				}
				mu.Unlock()
			})}
			go srv.Serve(ln)
			defer srv.Close()

			dom := browsertest.Headless(t, bin, "http://evil.example:"+port+"/attack.html",
				"--host-resolver-rules=MAP evil.example 127.0.0.1", "--virtual-time-budget=10000", "--dump-dom")
			mu.Lock()
			got := strings.Join(seen, ", ")
			mu.Unlock()
			prof, _, stats := active.Snapshot()
			disabled := len(stats) > 0 && !stats[0].Enabled
			t.Logf("page: %s\nAPI saw: %s", resultLine(dom), got)
			if !guarded {
				if prof.Name != "evil" || !disabled {
					t.Fatalf("the unguarded API was not driven by the page (profile %q, fault 0 disabled %v): the attack proves nothing", prof.Name, disabled)
				}
				return
			}
			want := "GET /profile 421, PUT /profile 421, POST /faults/0/disable 403"
			if got != want {
				t.Errorf("the API saw %q, want %q", got, want)
			}
			if prof.Name != "lossy-resume" || disabled || strings.Contains(string(dom), "lossy-resume") {
				t.Errorf("the page changed or read the profile: %q, fault 0 disabled %v, page %s", prof.Name, disabled, resultLine(dom))
			}
		})
	}
}

// statusRecorder keeps the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// resultLine is the line the attack page wrote.
func resultLine(dom []byte) string {
	s := string(dom)
	if i := strings.Index(s, "RESULT "); i >= 0 {
		s = s[i:]
		if j := strings.Index(s, "<"); j >= 0 {
			s = s[:j]
		}
		return s
	}
	return "(no result: " + strings.TrimSpace(s) + ")"
}
