package probes

import (
	"testing"
	"time"
)

// TestTimeoutsFitAJob: every probe bounds its client's run, and the bounds
// of one end's probes add up to at most four minutes, so that `fray run
// --probe client` (or server) ends within five even when the peer hangs on
// every probe, fray's settling and the servers' starts included.
func TestTimeoutsFitAJob(t *testing.T) {
	const most = 4 * time.Minute
	sum := map[string]time.Duration{}
	for _, p := range All() {
		d := p.ClientTimeout()
		if d <= 0 {
			t.Errorf("%s: timeout %v, want a positive bound", p.Name, d)
		}
		sum[p.End] += d
	}
	for end, d := range sum {
		if d > most {
			t.Errorf("the %s probes' timeouts add up to %v, more than %v", end, d, most)
		}
	}
}

// TestClientTimeoutDefault: a probe without a Timeout of its own takes
// DefaultTimeout; one with its own keeps it.
func TestClientTimeoutDefault(t *testing.T) {
	if got := (Probe{Name: "p"}).ClientTimeout(); got != DefaultTimeout {
		t.Errorf("no Timeout: %v, want %v", got, DefaultTimeout)
	}
	if got := (Probe{Name: "p", Timeout: 3 * time.Second}).ClientTimeout(); got != 3*time.Second {
		t.Errorf("Timeout 3s: %v, want 3s", got)
	}
}
