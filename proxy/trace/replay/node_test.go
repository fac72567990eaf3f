package replay_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/frayproxy/fray/examples/node/nodepeer"
)

// nodeEnv is the Node environment of examples/node, where the TypeScript
// SDK peers live.
func nodeEnv(t *testing.T) nodepeer.Env {
	t.Helper()
	return nodepeer.Require(t, "../../../examples/node", "the TypeScript SDK replay test")
}

// startNodeServer runs script and returns the URL of its LISTENING line;
// the process is stopped when the test ends.
func startNodeServer(ctx context.Context, t *testing.T, script string, args ...string) string {
	t.Helper()
	return nodeEnv(t).Start(ctx, t, script, args...).URL
}

// attempt is one request the TypeScript client made, as it reports them.
type attempt struct {
	Method      string  `json:"method"`
	LastEventID *string `json:"lastEventId"`
	Status      *int    `json:"status"`
}

// clientRun is the summary line streamable-client.mjs prints.
type clientRun struct {
	OK        bool      `json:"ok"`
	Error     string    `json:"error"`
	Result    string    `json:"result"`
	Progress  int       `json:"progress"`
	Reconnect int       `json:"reconnects"`
	Requests  []attempt `json:"requests"`
	raw       string
}

// runNodeClient runs the TypeScript client against endpoint.
func runNodeClient(ctx context.Context, t *testing.T, endpoint string, args ...string) clientRun {
	t.Helper()
	stdout, stderr, err := nodeEnv(t).Run(ctx, "streamable-client.mjs", append([]string{endpoint}, args...)...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var run clientRun
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &run); jerr != nil {
		t.Fatalf("client printed no JSON summary (%v; %v)\nstdout:\n%s\nstderr:\n%s", jerr, err, stdout, stderr)
	}
	run.raw = lines[len(lines)-1]
	return run
}

// resumes lists the Last-Event-IDs of the client's reconnections, in order.
func (r clientRun) resumes() []string {
	var out []string
	for _, a := range r.Requests {
		if a.Method == "GET" && a.LastEventID != nil {
			out = append(out, *a.LastEventID)
		}
	}
	return out
}
