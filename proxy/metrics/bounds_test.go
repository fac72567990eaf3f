package metrics

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestLatencyBoundsAsClientGolang holds the latency histogram's bounds to
// what client_golang's own histogram made of LatencyBuckets: a last +Inf
// dropped, bounds out of order refused.
func TestLatencyBoundsAsClientGolang(t *testing.T) {
	saved := LatencyBuckets
	defer func() { LatencyBuckets = saved }()

	LatencyBuckets = []float64{0.1, 1, math.Inf(+1)}
	if got := latencyBounds(); !slices.Equal(got, []float64{0.1, 1}) {
		t.Errorf("bounds %v, want [0.1 1]", got)
	}

	LatencyBuckets = []float64{1, 0.1}
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, "increasing order") {
			t.Errorf("New with bounds out of order: recovered %v, want a panic about their order", r)
		}
	}()
	New(Options{})
}
