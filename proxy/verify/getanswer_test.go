package verify

import (
	"net/http"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// TestGetAnswer: a GET the server saw without Last-Event-ID, accepting
// text/event-stream, is answered with a stream or 405; 404, 401, 403, 429
// and 5xx are left to other rules; a GET that did not accept
// text/event-stream, or that carried Last-Event-ID (even one fray took
// away before the server saw it), is not judged.
func TestGetAnswer(t *testing.T) {
	accept := header("Accept", "text/event-stream")
	leid := "a1"
	for _, tc := range []struct {
		name    string
		status  int
		sse     bool
		opts    []reqOpt
		leid    *string
		applied bool
		found   bool
	}{
		{"stream", http.StatusOK, true, []reqOpt{accept}, nil, true, false},
		{"405", http.StatusMethodNotAllowed, false, []reqOpt{accept}, nil, true, false},
		{"400", http.StatusBadRequest, false, []reqOpt{accept}, nil, true, true},
		{"409", http.StatusConflict, false, []reqOpt{accept}, nil, true, true},
		{"200 without a stream", http.StatusOK, false, []reqOpt{accept}, nil, true, true},
		{"404", http.StatusNotFound, false, []reqOpt{accept}, nil, false, false},
		{"401", http.StatusUnauthorized, false, []reqOpt{accept}, nil, false, false},
		{"503", http.StatusServiceUnavailable, false, []reqOpt{accept}, nil, false, false},
		{"429", http.StatusTooManyRequests, false, []reqOpt{accept}, nil, false, false},
		{"no Accept", http.StatusBadRequest, false, nil, nil, false, false},
		{"a resumption", http.StatusBadRequest, false, []reqOpt{accept}, &leid, false, false},
		{"a resumption whose Last-Event-ID fray removed", http.StatusConflict, false, []reqOpt{accept,
			fired(fault(0, "strip-last-event-id")), action(observe.RequestAction{LastEventIDChanged: true})}, &leid, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			tl.getWith("s1", tc.leid, tc.opts...).respond(tc.status, tc.sse, "").end(observe.Complete)
			c := check(t, tl.report(), checks.ServerGetStreamOr405)
			if (c.Applied > 0) != tc.applied || (c.Count > 0) != tc.found {
				t.Errorf("applied %d, found %d; want applied %v, found %v: %+v", c.Applied, c.Count, tc.applied, tc.found, c.Evidence)
			}
		})
	}
}

// TestGetAnswerBesideAnOpenStream: a GET refused while another standalone
// stream of the session is open is not judged; once that stream ended, a
// GET opening it again is.
func TestGetAnswerBesideAnOpenStream(t *testing.T) {
	accept := header("Accept", "text/event-stream")
	tl := initialized(t)
	g := tl.getWith("s1", nil, accept).stream200().send(prime("g1"))
	tl.getWith("s1", nil, accept).respond(http.StatusConflict, false, "").end(observe.Complete)
	expectNone(t, tl.report(), checks.ServerGetStreamOr405)
	g.end(observe.FaultClosed)
	tl.getWith("s1", nil, accept).respond(http.StatusBadRequest, false, "").end(observe.Complete)
	if c := check(t, tl.report(), checks.ServerGetStreamOr405); c.Count != 1 {
		t.Errorf("a standalone GET refused after the old one ended: %d findings", c.Count)
	}
}

// TestGetAnswerWithoutSession: a GET without Mcp-Session-Id is the
// session rules' to judge (a server that requires sessions SHOULD answer
// it 400), not this check's.
func TestGetAnswerWithoutSession(t *testing.T) {
	tl := newTimeline(t, Options{})
	tl.getWith("", nil, header("Accept", "text/event-stream")).respond(http.StatusBadRequest, false, "").end(observe.Complete)
	expect(t, tl.report(), checks.ServerGetStreamOr405, report.StatusSkip, 0)
}
