package sweep

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

func response(ex uint64, status int, stream bool) *observe.Observation {
	return &observe.Observation{Kind: observe.KindResponse, Exchange: ex, Response: &observe.Response{Status: status, EventStream: stream}}
}

func sse(ex uint64, index int, id string, priming bool, kind mcp.RPCKind) *observe.Observation {
	o := event(ex, index)
	o.Event.ID, o.Event.HasID, o.Event.Priming, o.Event.RPCKind = []byte(id), id != "", priming, kind
	return o
}

func end(ex uint64) *observe.Observation {
	return &observe.Observation{Kind: observe.KindEnd, Exchange: ex}
}

func TestLearner(t *testing.T) {
	obs := []*observe.Observation{
		// initialize answered with JSON: no stream.
		request(1, mcp.StreamPost, 0, observe.Message{Kind: mcp.RPCRequest, Method: "initialize"}),
		response(1, 200, false), end(1),
		// a notification: no stream.
		request(2, mcp.StreamPost, 1, observe.Message{Kind: mcp.RPCNotification, Method: "notifications/initialized"}),
		response(2, 202, false), end(2),
		// the GET stream, refused the first time.
		request(3, mcp.StreamGet, 1), response(3, 405, false), end(3),
		// the call: priming, a progress, then the server closes.
		request(4, mcp.StreamPost, 1, toolCall), response(4, 200, true),
		sse(4, 0, "s_1", true, mcp.RPCNone), sse(4, 1, "s_2", false, mcp.RPCNotification), end(4),
		// its resumption: the response.
		resumeReq(5, 1, "s_2"),
		response(5, 200, true), sse(5, 0, "s_3", false, mcp.RPCResponse), end(5),
		// a second call of the same tool: already learned.
		request(6, mcp.StreamPost, 1, toolCall), response(6, 200, true), sse(6, 0, "t_1", false, mcp.RPCResponse), end(6),
		// a resumption from an id never seen: not learned.
		resumeReq(7, 1, "zz"),
		response(7, 200, true), end(7),
		// the GET stream.
		request(8, mcp.StreamGet, 1), response(8, 200, true), sse(8, 0, "g_1", true, mcp.RPCNone), end(8),
	}
	var l Learner
	for _, o := range obs {
		l.Observe(o)
	}
	want := []Stream{
		{Kind: KindPost, Method: "tools/call", Name: "slow-count", Events: 2, Primed: true},
		{Kind: KindResume, Method: "tools/call", Name: "slow-count", Seq: 1, Events: 1, Response: 1},
		{Kind: KindGet, Events: 1, Primed: true},
	}
	if got := l.Streams(); !reflect.DeepEqual(got, want) {
		t.Errorf("streams\n got %+v\nwant %+v", got, want)
	}
}

// TestLearnerBounded: a client that calls ever new tools gives at most
// maxStreams streams.
func TestLearnerBounded(t *testing.T) {
	var l Learner
	for i := range maxStreams + 5 {
		ex := uint64(i + 1)
		l.Observe(request(ex, mcp.StreamPost, 1, observe.Message{Kind: mcp.RPCRequest, Method: "tools/call", Name: fmt.Sprint("tool-", i), HasName: true}))
		l.Observe(response(ex, 200, true))
		l.Observe(end(ex))
	}
	if n := len(l.Streams()); n != maxStreams {
		t.Errorf("%d streams, want %d", n, maxStreams)
	}
}
