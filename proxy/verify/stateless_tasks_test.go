package verify

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// taskCreated runs a tools/call answered with a task to poll every
// pollMS, in a JSON body.
func (tl *timeline) taskCreated(id int, task string, pollMS int64) {
	x := tl.scall(id, "tools/call", "long")
	x.respond(http.StatusOK, false, "")
	x.end(observe.Complete, observe.Message{Kind: mcp.RPCResponse, ID: fmt.Sprint(id), TaskID: task, PollMS: pollMS})
}

// poll runs a tasks/get for task, answered at once on an SSE stream that
// gives pollMS again.
func (tl *timeline) poll(id int, task string, pollMS int64) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"taskId":%q,"status":"working","pollIntervalMs":%d}}`, id, task, pollMS)
	tl.request("POST", "/mcp", mcp.StreamPost, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q,"_meta":{%q:%q}}}`, id, task, mcp.MetaProtocolVersion, mcp.RevStateless),
		header(mcp.HeaderProtocol, mcp.RevStateless), header(mcp.HeaderMethod, "tasks/get")).
		stream200().send(noID(ev{data: body})).end(observe.Complete)
}

func TestStatelessTaskPolling(t *testing.T) {
	t.Run("polls at the interval: pass", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.taskCreated(1, "t-1", 200)
		for id := 2; id <= 4; id++ {
			tl.wait(200 * ms)
			tl.poll(id, "t-1", 200)
		}
		r := tl.final()
		c := expect(t, r, checks.ClientTaskPollInterval, report.StatusPass, 0)
		if c.Applied != 3 {
			t.Errorf("%d polls judged, want 3", c.Applied)
		}
	})
	t.Run("polls faster than asked: a warning per poll", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.taskCreated(1, "t-1", 500)
		tl.wait(500 * ms)
		tl.poll(2, "t-1", 500)
		tl.wait(100 * ms)
		tl.poll(3, "t-1", 500)
		tl.wait(100 * ms)
		tl.poll(4, "t-1", 500)
		r := tl.final()
		expect(t, r, checks.ClientTaskPollInterval, report.StatusWarn, 2)
		expectVerdict(t, r, report.VerdictPass, "")
	})
	t.Run("a new interval holds from the next poll", func(t *testing.T) {
		tl := newTimeline(t, Options{}).speakStateless()
		tl.taskCreated(1, "t-1", 500)
		tl.wait(500 * ms)
		tl.poll(2, "t-1", 100)
		tl.wait(100 * ms)
		tl.poll(3, "t-1", 100)
		expect(t, tl.final(), checks.ClientTaskPollInterval, report.StatusPass, 0)
	})
	t.Run("2025-11-25 traffic is not judged", func(t *testing.T) {
		tl := initialized(t)
		tl.call("s1", 1, "tools/call").jsonAnswer("1")
		expect(t, tl.final(), checks.ClientTaskPollInterval, report.StatusSkip, 0)
	})
}
