package verify

import (
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestGiveUpAfterEmptyReplayExcused: a client that came back and got an
// empty replay, and does not ask again, is not blamed for it: the
// server's incomplete replay is the cause, and only it fails.
func TestGiveUpAfterEmptyReplayExcused(t *testing.T) {
	tl := newTimeline(t, Options{})
	tl.initialize("s1")
	tl.wait(100 * time.Millisecond)
	lose(tl)
	tl.wait(100 * time.Millisecond)
	tl.get("s1", "a2").stream200().end(observe.Complete)
	tl.wait(time.Minute)
	r := tl.report()
	if c := check(t, r, checks.ServerReplayComplete); c.Count != 1 {
		t.Errorf("server.replay-complete found %d, want 1: %+v", c.Count, c.Evidence)
	}
	if c := check(t, r, checks.ClientReconnects); c.Count != 0 {
		t.Errorf("client.reconnects found %d, want 0 (explained by the replay): %+v", c.Count, c.Evidence)
	}
}
