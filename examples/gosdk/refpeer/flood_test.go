package refpeer_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
)

// TestFlood: every notification of a flood reaches the client before the
// answer, call after call on one session; a count out of range is refused.
func TestFlood(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := httptest.NewServer(refpeer.NewFloodHandler())
	defer srv.Close()
	fc, err := refpeer.DialFlood(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	for _, n := range []int{1, 500, 37} {
		if _, err := fc.Call(ctx, n); err != nil {
			t.Fatalf("flood of %d: %v", n, err)
		}
	}
	if _, err := fc.Call(ctx, 0); err == nil {
		t.Error("a flood of 0 succeeded, want the tool's error")
	}
}
