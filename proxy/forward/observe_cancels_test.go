package forward_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestObservedRequestNamesCancelledIDs: a POST of notifications/cancelled
// tells observers which request the client gave up on, so that the
// verifier does not wait for that request's response.
func TestObservedRequestNamesCancelledIDs(t *testing.T) {
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	var (
		mu      sync.Mutex
		cancels [][]string
	)
	obs := observe.Func(func(o *observe.Observation) {
		if o.Kind == observe.KindRequest {
			mu.Lock()
			cancels = append(cancels, slices.Clone(o.Request.Cancels))
			mu.Unlock()
		}
	})
	fray, _ := front(t, up, func(o *forward.Options) { o.Observer = obs })
	bodies := []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a-7","reason":"user"}}`,
		`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}},{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":4}}]`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"requestId":6}}`,
	}
	for _, b := range bodies {
		readBody(post(t, fray+"/mcp", b))
	}
	mu.Lock()
	defer mu.Unlock()
	want := [][]string{{`"a-7"`}, {`3`}, nil}
	if len(cancels) != len(want) {
		t.Fatalf("%d requests observed, want %d", len(cancels), len(want))
	}
	for i := range want {
		if !slices.Equal(cancels[i], want[i]) {
			t.Errorf("request %d: Cancels = %q, want %q", i, cancels[i], want[i])
		}
	}
}
