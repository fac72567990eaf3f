package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestJSONLogStartLines: with --log-format json every line fray writes
// to stderr while it runs is a JSON record, its start lines included.
func TestJSONLogStartLines(t *testing.T) {
	ctx := within(t, 20*time.Second)
	up := sseUpstream(t)
	f := launch(t, ctx, "proxy", "--upstream", up.URL, "--listen", "127.0.0.1:0", "--quiet",
		"--allow-inconclusive", "--log-format", "json", "--admin", "127.0.0.1:0")
	var msgs []string
	for range 3 {
		line := f.line()
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level != "INFO" {
			t.Fatalf("not a JSON record at info: %q (%v)", line, err)
		}
		msgs = append(msgs, rec.Msg)
	}
	if code := f.stop(); code != exitOK {
		t.Errorf("exit %d", code)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"admin API on http://127.0.0.1:", "proxying http://127.0.0.1:", "point clients at"} {
		if !strings.Contains(all, want) {
			t.Errorf("start lines do not say %q:\n%s", want, all)
		}
	}
}
