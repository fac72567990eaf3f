package interop_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// captureDir holds real 2026-07-28 exchanges: for each capture, the fray
// trace of the run (NAME.jsonl, for `fray check`) and what passed on the
// wire between fray and the server, bodies included (NAME.wire.json).
// FRAY_CAPTURE_UPDATE=1 rewrites them from a live run.
const captureDir = "testdata/era2026"

// capture is one pair run once through fray with its wire recorded.
type capture struct {
	name    string // file name in captureDir
	pair    string // the eraPairs name whose expectation holds
	profile string
	start   startServer
	client  runClientFor
	// accel is the X-Accel-Buffering the server sends on its SSE
	// responses ("" for none).
	accel string
	// notifications are the JSON-RPC notifications the client POSTs.
	notifications []string
}

// captures are the 2026-07-28 exchanges kept in captureDir: each SDK's own
// pair with no fault (the TypeScript one with a subscriptions/listen
// stream), each under lossy-resume (a cut call no client re-issues), and
// mcp-go against the Go SDK's stateful handler (a DiscoverResult that does
// not offer the revision asked for).
var captures = []capture{
	{name: "ts2", pair: "ts2←ts2-server@" + era2026, start: startTSModern, client: tsModernClient(era2026, true), accel: "no", notifications: []string{"notifications/cancelled"}},
	{name: "ts2-lossy-resume", pair: "ts2←ts2-server@" + era2026, profile: "lossy-resume", start: startTSModern,
		client: tsModernClient(era2026, false), accel: "no"},
	{name: "go-sdk", pair: "go-sdk←go-sdk-stateless@" + era2026, start: startGoStateless, client: goSDKEraClient(era2026)},
	{name: "go-sdk-lossy-resume", pair: "go-sdk←go-sdk-stateless@" + era2026, profile: "lossy-resume", start: startGoStateless,
		client: goSDKEraClient(era2026)},
	{name: "mcp-go", pair: "mcp-go←mcp-go@" + era2026, start: startMCPGoStreamable, client: mcpGoEraClient(era2026)},
	{name: "mcp-go-lossy-resume", pair: "mcp-go←mcp-go@" + era2026, profile: "lossy-resume", start: startMCPGoStreamable,
		client: mcpGoEraClient(era2026)},
	{name: "mcp-go-discover-go-sdk-server", pair: "mcp-go←go-sdk-server@" + eraAuto, start: startGoStreamable,
		client: mcpGoEraClient(era2026)},
}

// TestCapture2026 runs each capture through fray with a recorder between
// fray and the server, holds the verdict to eraExpectation and the wire to
// what revision 2026-07-28 asks of it (checkWire2026). With
// FRAY_CAPTURE_UPDATE=1 it rewrites captureDir.
func TestCapture2026(t *testing.T) {
	if testing.Short() {
		t.Skip("captures run real peers; not in -short (TestCaptured2026 reads the kept ones)")
	}
	for _, c := range captures {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), eraPairTimeout)
			defer cancel()
			up := c.start(ctx, t)
			takeCapture(ctx, t, c, up, func(*wireLog) runClientFor { return c.client })
		})
	}
}

// takeCapture runs c's client through fray in front of a recorder in front
// of up, holds the verdict to eraExpectation and the wire to checkWire2026,
// and returns the wire. With FRAY_CAPTURE_UPDATE=1 it keeps the trace and
// the wire (NAME.wire.json) in captureDir.
func takeCapture(ctx context.Context, t *testing.T, c capture, up upstream, client func(*wireLog) runClientFor) []wireExchange {
	t.Helper()
	update := os.Getenv("FRAY_CAPTURE_UPDATE") == "1"
	rec, recURL := newWireRecorder(t, up.origin)
	dir := t.TempDir()
	if update {
		dir = captureDir
	}
	o := frayRunThirdParty(ctx, t, upstream{origin: recURL, path: up.path, serverSent: up.serverSent},
		c.profile, eraSeed(c.pair, c.profile), client(rec), eraClientTimeout, filepath.Join(dir, c.name+".jsonl"))
	checkEra(t, c.pair, o)
	wire := rec.exchanges()
	checkWire2026(t, c, wire)
	if update {
		b, err := json.MarshalIndent(wire, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(captureDir, c.name+".wire.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wire
}

// startMCPGoStreamable serves mcpgopeer's Streamable HTTP handler.
var startMCPGoStreamable = startMCPGo("streamable")

// TestCaptured2026 holds the kept captures to what they showed when they
// were taken: `fray check` of each trace gives the verdict eraExpectation
// gives, and each wire record passes checkWire2026. It needs no peer.
func TestCaptured2026(t *testing.T) {
	for _, c := range append(slices.Clone(captures), listenCaptures...) {
		t.Run(c.name, func(t *testing.T) {
			rep := checkTraceFile(t, filepath.Join(captureDir, c.name+".jsonl"))
			o := frayOutcome{Profile: c.profile, Report: rep}
			o.Client.OK = rep.Command == nil || rep.Command.ExitCode == 0
			if !o.Client.OK {
				o.Client.Error = rep.Command.Error
			}
			checkEra(t, c.pair, o)
			b, err := os.ReadFile(filepath.Join(captureDir, c.name+".wire.json"))
			if err != nil {
				t.Fatal(err)
			}
			var wire []wireExchange
			if err := json.Unmarshal(b, &wire); err != nil {
				t.Fatalf("%s.wire.json: %v", c.name, err)
			}
			checkWire2026(t, c, wire)
		})
	}
}
