package verify

import (
	"net/http"
	"testing"

	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestSessionSurvivesRefusal: after a POST refused with a 4xx, a later
// POST of the session answered 5xx is a finding, one answered 2xx is
// not; a 404, 401, 403 or 429 sets nothing up, and neither does a 5xx
// with no refusal before it.
func TestSessionSurvivesRefusal(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second int
		applied       bool
		found         bool
	}{
		{"400 then 503", http.StatusBadRequest, http.StatusServiceUnavailable, true, true},
		{"415 then 500", http.StatusUnsupportedMediaType, http.StatusInternalServerError, true, true},
		{"400 then 202", http.StatusBadRequest, http.StatusAccepted, true, false},
		{"404 then 503", http.StatusNotFound, http.StatusServiceUnavailable, false, false},
		{"429 then 503", http.StatusTooManyRequests, http.StatusServiceUnavailable, false, false},
		{"202 then 503", http.StatusAccepted, http.StatusServiceUnavailable, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := initialized(t)
			tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/progress"}`).respond(tc.first, false, "").end(observe.Complete)
			tl.notify("s1", `{"jsonrpc":"2.0","method":"notifications/progress"}`).respond(tc.second, false, "").end(observe.Complete)
			c := check(t, tl.report(), checks.ServerSessionSurvivesRefusal)
			if (c.Applied > 0) != tc.applied || (c.Count > 0) != tc.found {
				t.Errorf("applied %d, found %d; want applied %v, found %v", c.Applied, c.Count, tc.applied, tc.found)
			}
		})
	}
}
