package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestResumeOfAFinishedStream: a GET that names an id of a POST answer
// stream whose response was delivered and which ended resumes nothing
// (client.last-event-id); the same id while the call still waits for its
// response is a resumption like any other.
func TestResumeOfAFinishedStream(t *testing.T) {
	tl := initialized(t)
	tl.get("s1").stream200().send(prime("g1"))
	tl.toolCall("s1", 1, "a1", "a2", "a3")
	tl.wait(200 * ms)
	tl.get("s1", "a3").stream200().end(observe.Complete)
	c := check(t, tl.report(), checks.ClientLastEventID)
	if c.Count != 1 || !strings.Contains(c.Evidence[0].Message, "already delivered its response") {
		t.Fatalf("finding %d: %+v", c.Count, c.Evidence)
	}

	tl = newTimeline(t, Options{})
	tl.initialize("s1")
	tl.call("s1", 1, "tools/call").stream200().send(prime("a1")).send(note("a2")).end(observe.Complete)
	tl.wait(time.Second)
	tl.get("s1", "a2").stream200().send(resp("a3", 1)).end(observe.Complete)
	if c := check(t, tl.report(), checks.ClientLastEventID); c.Count != 0 || c.Applied == 0 {
		t.Errorf("a resumption of a pending call: applied %d, found %d: %+v", c.Applied, c.Count, c.Evidence)
	}
}
