package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/profiles/probes"
)

// TestProbeClientHelper is a client of the probe tests when
// FRAY_PROBE_CLIENT says which: "gosdk" runs the official Go SDK's client
// (examples/gosdk/refpeer), "gosdk-stateless" the same at revision
// 2026-07-28; a number is the scripted client with that
// misbehaviour (0: a correct client), making two tool calls. It exits 1
// when its calls did not complete.
func TestProbeClientHelper(t *testing.T) {
	fault, ok := os.LookupEnv("FRAY_PROBE_CLIENT")
	if !ok {
		t.Skip("a helper process for the probe tests, not a test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if fault == "gosdk" || fault == "gosdk-stateless" {
		opts := refpeer.ClientOptions{Endpoint: os.Getenv("FRAY_URL")}
		if fault == "gosdk-stateless" {
			opts.ProtocolVersion = refpeer.StatelessProtocolVersion
		}
		res, err := refpeer.RunClient(ctx, opts)
		fmt.Printf("%+v\n", res)
		helperExit(err)
	}
	n, _ := strconv.Atoi(fault)
	res, err := scripted.RunClient(ctx, scripted.ClientOptions{
		URL: os.Getenv("FRAY_URL"), Calls: 2, Fault: scripted.ClientFault(n),
		Backoff: 100 * time.Millisecond, MaxAttempts: 4, Idle: 600 * time.Millisecond,
	})
	fmt.Printf("completed %d\n", res.Completed)
	helperExit(err)
}

// helperExit ends a helper process: with err on stderr and exit code 1,
// or with 0 when err is nil.
func helperExit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// probeClient makes TestProbeClientHelper the client which says, and
// returns its command line.
func probeClient(t *testing.T, which string) []string {
	t.Helper()
	return helperArgs(t, "TestProbeClientHelper", "FRAY_PROBE_CLIENT", which)
}

func TestProbesList(t *testing.T) {
	code, stdout, stderr := runFray(t, 10*time.Second, "probes", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range probes.All() {
		if !strings.Contains(stdout, p.Name+" ") || !strings.Contains(stdout, p.Issue) {
			t.Errorf("list lacks %s or its report %s:\n%s", p.Name, p.Issue, stdout)
		}
	}
}

// TestProbesShow: the output is the probe's profile, preceded by comments,
// and parses as a profile file.
func TestProbesShow(t *testing.T) {
	code, stdout, stderr := runFray(t, 10*time.Second, "probes", "show", "resume-token-dropped")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "typescript-sdk/issues/2499") {
		t.Errorf("show does not name the report:\n%s", stdout)
	}
	if code, needs, stderr := runFray(t, 10*time.Second, "probes", "show", "replay-other-sessions"); code != 0 || !strings.Contains(needs, "# needs: the client command runs two sessions at once") {
		t.Errorf("show does not say what the probe needs: exit %d, %s\n%s", code, stderr, needs)
	}
	p, err := profiles.Parse("shown.toml", strings.NewReader(stdout))
	if err != nil || p.Name != "probe-resume-token-dropped" {
		t.Errorf("show's output is not the profile: %v\n%s", err, stdout)
	}
}

// TestProbesShowFoundIn: fray probes show names the released versions a
// probe found its bug in, and says nothing of them for a probe that found
// it in none it was run on.
func TestProbesShowFoundIn(t *testing.T) {
	code, out, stderr := runFray(t, 10*time.Second, "probes", "show", "transient-503-on-resume")
	if code != 0 || !strings.Contains(out, "# found in: github.com/modelcontextprotocol/go-sdk v1.8.0 (client)\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, out, _ := runFray(t, 10*time.Second, "probes", "show", "get-reopen-refused"); strings.Contains(out, "# found in") {
		t.Errorf("get-reopen-refused: %q", out)
	}
}

// TestRunProbeOnScriptedClients runs one probe through fray run on a
// client with its bug and on one without, both this binary: the table
// says found or survived, the exit code follows, and the report file is
// the run's.
func TestRunProbeOnScriptedClients(t *testing.T) {
	up := serve(t, scripted.NewServer(scripted.ServerOptions{}))
	for _, tc := range []struct {
		name  string
		fault scripted.ClientFault
		code  int
		want  string
	}{
		{"with the bug", scripted.NoLastEventID, exitFindings, "found"},
		{"without it", scripted.ClientCorrect, exitOK, "survived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := probeClient(t, strconv.Itoa(int(tc.fault)))
			code, stdout, stderr, r := runReported(t, 60*time.Second, append([]string{"run", "--probe", "no-last-event-id",
				"--upstream", up.URL + "/mcp", "--settle", "200ms", "--"}, args...)...)
			wantProbeRow(t, code, stdout, stderr, "no-last-event-id", tc.code, tc.want, "")
			if r.Merged != 1 || r.Profile != "probe-no-last-event-id" {
				t.Errorf("report of %d runs, profile %q", r.Merged, r.Profile)
			}
		})
	}
}

// TestRunProbeOnScriptedServers probes a server under test: the server's
// event store replays another stream's events or not, and a correct
// client is the command.
func TestRunProbeOnScriptedServers(t *testing.T) {
	args := probeClient(t, "0")
	for _, tc := range []struct {
		fault scripted.ServerFault
		code  int
		want  string
	}{
		{scripted.ReplayForeign, exitFindings, probes.Found},
		{scripted.ServerCorrect, exitOK, probes.Survived},
	} {
		up := httptest.NewServer(scripted.NewServer(scripted.ServerOptions{Fault: tc.fault}))
		// One client, one session, nothing on the standalone stream: the
		// probes that need more say nothing, which --allow-inconclusive
		// accepts.
		code, stdout, stderr := runFray(t, 60*time.Second, append([]string{"run", "--probe", "server",
			"--upstream", up.URL + "/mcp", "--settle", "200ms", "--allow-inconclusive", "--quiet", "--"}, args...)...)
		up.Close()
		row := strings.Fields(tableRow(stdout, "replay-other-streams"))
		if code != tc.code || len(row) < 4 || row[1] != probes.Server || row[3] != tc.want {
			t.Errorf("server fault %d: exit %d, want %d and %s\nstdout:\n%s\nstderr:\n%s", tc.fault, code, tc.code, tc.want, stdout, stderr)
		}
		server, _ := probes.Select(probes.Server)
		for _, p := range server {
			// The pair does not do what they need: none survives.
			if f := strings.Fields(tableRow(stdout, p.Name)); len(f) < 4 || p.Needs != "" && f[3] == probes.Survived {
				t.Errorf("row of %s: %q", p.Name, tableRow(stdout, p.Name))
			}
		}
		for _, l := range strings.Split(stdout, "\n")[1:] {
			if f := strings.Fields(l); len(f) > 1 && f[1] != probes.Server {
				t.Errorf("--probe server ran a %s probe:\n%s", f[1], stdout)
			}
		}
	}
}

// TestRunProbeOnGoSDKClient runs the probe of a transient 503 on the
// reconnection path on the official Go SDK's client (v1.8.0, go.mod):
// the release still gives the call up, and the probe finds it; the
// TypeScript SDK's client survives the same probe (TestRunProbesAllNodeClient).
func TestRunProbeOnGoSDKClient(t *testing.T) {
	probeGoSDKClient(t, refpeer.NewHandler(refpeer.ServerOptions{RetryAfter: refpeer.DefaultRetryAfter}),
		"gosdk", "transient-503-on-resume", "client.retries-transient:")
}

// TestRunProbeOnGoSDKStatelessClient runs cut-call-left-pending on the
// official Go SDK's client at revision 2026-07-28, against the SDK's
// stateless server: the release ends a call whose stream broke and never
// sends it again, and the probe finds it.
func TestRunProbeOnGoSDKStatelessClient(t *testing.T) {
	probeGoSDKClient(t, refpeer.NewStatelessHandler(refpeer.ServerOptions{}),
		"gosdk-stateless", "cut-call-left-pending", "client.reissues-cut-request:")
}

// probeGoSDKClient runs fray run --probe probe on the Go SDK client the
// helper process plays as client (FRAY_PROBE_CLIENT), against server at
// /mcp, and wants exit 1 with the probe's row saying it triggered and
// found check.
func probeGoSDKClient(t *testing.T, server http.Handler, client, probe, check string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", server)
	up := serve(t, mux)
	args := probeClient(t, client)
	code, stdout, stderr := runFray(t, 60*time.Second, append([]string{"run", "--probe", probe,
		"--upstream", up.URL + "/mcp", "--settle", "200ms", "--quiet", "--"}, args...)...)
	wantProbeRow(t, code, stdout, stderr, probe, exitFindings, probes.Found, check)
}

// wantProbeRow fails t unless fray run --probe exited wantCode and the
// probe's row in the table says it triggered, with result and, when check
// is not "", the finding check.
func wantProbeRow(t *testing.T, code int, stdout, stderr, probe string, wantCode int, result, check string) {
	t.Helper()
	f := strings.Fields(tableRow(stdout, probe))
	if code != wantCode || len(f) < 4 || f[2] != "yes" || f[3] != result || check != "" && (len(f) < 5 || f[4] != check) {
		t.Errorf("exit %d, want %d and %s triggered, %s %s\nstdout:\n%s\nstderr:\n%s", code, wantCode, probe, result, check, stdout, stderr)
	}
}

// nodePeers finds node and the Node peers of examples/node, with the npm
// package pkg of @modelcontextprotocol installed there, or skips the test
// saying what was not run (what). It returns node's path and the folder.
func nodePeers(t *testing.T, pkg, what string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPED: node not found on PATH; " + what)
	}
	dir, err = filepath.Abs(filepath.Join("..", "..", "examples", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
		t.Skip("SKIPPED: examples/node/node_modules is not installed (npm ci there)")
	}
	t.Setenv("NODE_NO_WARNINGS", "1")
	return node, dir
}

// nodeServer is fray run's --upstream and --server for script of the
// Node peers in dir, run by node with args on a free port.
func nodeServer(t *testing.T, node, dir, script string, args ...string) []string {
	t.Helper()
	port := freePort(t)
	server := append([]string{fmt.Sprintf("PORT=%d exec %s %s", port, node, filepath.Join(dir, script))}, args...)
	return []string{"--upstream", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), "--server", strings.Join(server, " ")}
}

// tableRow returns the line of the probe table that starts with name.
func tableRow(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}

// TestRunProbesAllNodeClient runs every probe on the official TypeScript
// SDK's client, in one fray run --probe all against the SDK's example
// server: the table has a row for each probe, every probe's trigger is
// met (those that need more of the pair than it does are inconclusive),
// the known open bug of that client release (a resumed stream cut
// before any id loses Last-Event-ID) is found, the exit code says a bug
// was found, and the report files hold every run. The server's standalone
// stream is silent, and fray cuts it all the same: the client opens it
// again with no Last-Event-ID, rightly (standalone-resumed-with-post-id
// survives), and standalone-reconnect-storm's resumption cuts meet the
// call's resumption, which the bug above loses.
func TestRunProbesAllNodeClient(t *testing.T) {
	onTSPair := map[string]string{
		"standalone-resumed-with-post-id": probes.Survived,
		"standalone-reconnect-storm":      probes.Failed,
	}
	cutInTime := map[string]bool{
		"get-405-on-reconnect": true, "get-reopen-refused": true, "standalone-retries-tear-down": true,
	}
	node, dir := nodePeers(t, "sdk", "the probes were not run on the TypeScript SDK client")
	junit := filepath.Join(t.TempDir(), "j.xml")
	code, stdout, stderr, r := runReported(t, 150*time.Second, append(append([]string{"run", "--probe", "all"},
		nodeServer(t, node, dir, "streamable-server.mjs")...),
		"--settle", "300ms", "--junit", junit,
		"--", node, filepath.Join(dir, "fray-run-client.mjs"), "--timeout", "5000")...)
	for _, p := range probes.All() {
		row := tableRow(stdout, p.Name)
		f := strings.Fields(row)
		if len(f) < 4 || f[1] != p.End {
			t.Errorf("no table row for %s:\n%s", p.Name, stdout)
			continue
		}
		switch want, ok := onTSPair[p.Name]; {
		case ok:
			if f[2] != "yes" || f[3] != want {
				t.Errorf("%s on the TypeScript SDK pair: want triggered and %s, got: %s", p.Name, want, row)
			}
		case cutInTime[p.Name]:
			// The probe cuts the standalone stream a time after it began,
			// which the client's short run outlasts on a loaded machine
			// and not on a quiet one: then the probe says nothing, or the
			// client opened the stream again and survived.
			if f[3] != probes.Inconclusive && (f[2] != "yes" || f[3] != probes.Survived) {
				t.Errorf("%s on the TypeScript SDK pair: want inconclusive, or triggered and survived, got: %s", p.Name, row)
			}
		case p.Needs != "":
			// The example pair does not do what the probe needs (it speaks
			// 2025-11-25, runs one session of a few calls, sends nothing
			// on the standalone stream): the probe can say nothing.
			if f[3] != probes.Inconclusive {
				t.Errorf("%s needs what the TypeScript SDK pair does not do (%s), yet: %s", p.Name, p.Needs, row)
			}
		case f[2] != "yes":
			t.Errorf("%s did not trigger on the TypeScript SDK pair: %s", p.Name, row)
		}
	}
	if f := strings.Fields(tableRow(stdout, "resume-token-dropped")); len(f) < 4 || f[3] != probes.Found {
		t.Errorf("resume-token-dropped did not find its bug in @modelcontextprotocol/sdk 1.32.2's client:\n%s\nstderr:\n%s", stdout, stderr)
	}
	// The Go SDK's client has this bug (TestRunProbeOnGoSDKClient); this
	// one has not.
	if f := strings.Fields(tableRow(stdout, "transient-503-on-resume")); len(f) < 4 || f[3] != probes.Survived {
		t.Errorf("the TypeScript SDK's client did not survive transient-503-on-resume:\n%s", stdout)
	}
	if code != exitFindings {
		t.Errorf("exit %d, want %d for a bug found\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout, stderr)
	}
	if r.Merged != len(probes.All()) || len(r.Shards) != r.Merged {
		t.Errorf("the report merges %d runs (%d shards), want %d", r.Merged, len(r.Shards), len(probes.All()))
	}
	b := readFile(t, junit)
	if n := strings.Count(string(b), "<testcase "); n != len(probes.All()) ||
		!strings.Contains(string(b), `name="resume-token-dropped"`) || !strings.Contains(string(b), `type="found"`) {
		t.Errorf("junit has %d test cases, want one per probe and resume-token-dropped failed:\n%s", n, b)
	}
}

// TestRunProbeTwoSessionsNode runs replay-other-sessions as probes.md
// shows it: two TypeScript SDK clients at once against the SDK's example
// server, whose event store numbers every session's events from one
// counter, so the server survives; with one client the probe says nothing.
func TestRunProbeTwoSessionsNode(t *testing.T) {
	node, dir := nodePeers(t, "sdk", "the probe was not run on the TypeScript SDK server")
	client := fmt.Sprintf("%s %s --timeout 5000", node, filepath.Join(dir, "fray-run-client.mjs"))
	for _, tc := range []struct {
		name, command, want string
		code                int
	}{
		{"two sessions", client + " & " + client + " && wait $!", probes.Survived, exitOK},
		{"one session", client, probes.Inconclusive, exitInconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runFray(t, 60*time.Second, append(append([]string{"run", "--probe", "replay-other-sessions"},
				nodeServer(t, node, dir, "streamable-server.mjs")...),
				"--settle", "300ms", "--quiet", "--", "sh", "-c", tc.command)...)
			wantProbeRow(t, code, stdout, stderr, "replay-other-sessions", tc.code, tc.want, "")
		})
	}
}

// TestRunProbeStandaloneNodeServer runs standalone-replay-empty as
// probes.md shows it, on the TypeScript SDK's server with a notification
// on the standalone stream every 100 ms (examples/node/announcing-server.mjs)
// and the SDK's client kept busy for four seconds (it resumes the
// standalone stream a second after the cut, and must stay on the resumed
// stream for a second more to have it judged): with the example event
// store the SDK ships (1.32.2), the resumption of the standalone stream
// replays nothing and the probe finds it; with examples/node's own store the
// server survives.
func TestRunProbeStandaloneNodeServer(t *testing.T) {
	node, dir := nodePeers(t, "sdk", "the probe was not run on the TypeScript SDK server")
	for _, tc := range []struct {
		store, want string
		code        int
	}{
		{"sdk", probes.Found, exitFindings},
		{"own", probes.Survived, exitOK},
	} {
		t.Run(tc.store, func(t *testing.T) {
			code, stdout, stderr := runFray(t, 60*time.Second, append(append([]string{"run", "--probe", "standalone-replay-empty"},
				nodeServer(t, node, dir, "announcing-server.mjs", "--store", tc.store)...),
				"--settle", "300ms", "--quiet", "--", node, filepath.Join(dir, "fray-run-client.mjs"),
				"--count", "100", "--delay-ms", "40", "--timeout", "10000")...)
			wantProbeRow(t, code, stdout, stderr, "standalone-replay-empty", tc.code, tc.want, "")
		})
	}
}

// TestRunProbeModernNodeClient runs cut-call-left-pending as probes.md
// shows it, on the TypeScript SDK v2's client at 2026-07-28 against the v2
// server (examples/node/modern-*.mjs): the call whose stream fray closes
// waits for its timeout and is never sent again, and the probe finds it.
func TestRunProbeModernNodeClient(t *testing.T) {
	node, dir := nodePeers(t, "client", "the probe was not run on the TypeScript SDK v2 client")
	code, stdout, stderr := runFray(t, 60*time.Second, append(append([]string{"run", "--probe", "cut-call-left-pending"},
		nodeServer(t, node, dir, "modern-server.mjs")...),
		"--settle", "300ms", "--quiet", "--", "sh", "-c",
		fmt.Sprintf(`%s %s "$FRAY_URL" --era 2026-07-28 --timeout 3000`, node, filepath.Join(dir, "modern-client.mjs")))...)
	wantProbeRow(t, code, stdout, stderr, "cut-call-left-pending", exitFindings, probes.Found, "client.reissues-cut-request:")
}

// TestProbeDetailEscaped: a probe's detail, which quotes what the peers
// did, reaches the table with its control characters escaped.
func TestProbeDetailEscaped(t *testing.T) {
	got := oneLineDetail("id \x1b]52;c;ZXZpbA==\x07 \r\nfray: verdict PASS")
	if strings.ContainsAny(got, "\x1b\x07\r\n") || !strings.Contains(got, `\x1b]52;c;ZXZpbA==\x07`) {
		t.Errorf("oneLineDetail = %q", got)
	}
}

// TestGoSDKLongCallHelper is the official Go SDK's client for
// TestRunProbeGet405OnGoSDKClient, run as fray run's command: one call of
// twenty steps 200 ms apart, whose stream the server never closes, so that
// the call is in flight when the standalone stream's reconnection is
// refused.
func TestGoSDKLongCallHelper(t *testing.T) {
	if os.Getenv("FRAY_GOSDK_LONG_CALL") == "" {
		t.Skip("a helper process for the probe tests, not a test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	never := 0
	res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{Endpoint: os.Getenv("FRAY_URL"), Count: 20, Delay: 200 * time.Millisecond, CloseAfter: &never})
	fmt.Printf("%+v\n", res)
	helperExit(err)
}

// TestRunProbeGet405OnGoSDKClient runs get-405-on-reconnect on the
// official Go SDK's client (v1.8.0) against the TypeScript SDK's server
// that announces on its standalone stream: the client deletes its session
// at the 405 to the stream's reconnection, with its call in flight, and
// the probe finds it.
func TestRunProbeGet405OnGoSDKClient(t *testing.T) {
	node, dir := nodePeers(t, "sdk", "get-405-on-reconnect was not run on the Go SDK client")
	code, stdout, stderr := runFray(t, 60*time.Second, append(append(append([]string{"run", "--probe", "get-405-on-reconnect"},
		nodeServer(t, node, dir, "announcing-server.mjs")...), "--settle", "200ms", "--quiet", "--"),
		helperArgs(t, "TestGoSDKLongCallHelper", "FRAY_GOSDK_LONG_CALL", "1")...)...)
	wantProbeRow(t, code, stdout, stderr, "get-405-on-reconnect", exitFindings, probes.Found, "client.survives-get-failure:")
}
