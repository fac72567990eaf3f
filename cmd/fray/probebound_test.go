package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles/probes"
)

// TestProbeSettingsBound: a probe's run is bounded by the probe's own
// timeout, unless --client-timeout gave a bound for every probe.
func TestProbeSettingsBound(t *testing.T) {
	p := probes.Probe{Name: "slow", Timeout: 7 * time.Second}
	got := probeSettings(runSettings{}, p)
	if got.clientTimeout != 7*time.Second || got.timeoutFrom != "probe slow's timeout" {
		t.Errorf("no --client-timeout: bound %v from %q, want 7s from the probe", got.clientTimeout, got.timeoutFrom)
	}
	got = probeSettings(runSettings{}, probes.Probe{Name: "plain"})
	if got.clientTimeout != probes.DefaultTimeout {
		t.Errorf("a probe without its own timeout: bound %v, want %v", got.clientTimeout, probes.DefaultTimeout)
	}
	got = probeSettings(runSettings{clientTimeout: 2 * time.Second}, p)
	if got.clientTimeout != 2*time.Second || got.timeoutFrom != "" {
		t.Errorf("--client-timeout 2s: bound %v from %q, want the flag's", got.clientTimeout, got.timeoutFrom)
	}
}

// TestProbeBoundStopsTheCommand: the bound ends the client's context, and
// the cause names the probe and the value.
func TestProbeBoundStopsTheCommand(t *testing.T) {
	set := probeSettings(runSettings{}, probes.Probe{Name: "slow", Timeout: time.Millisecond})
	cctx, release := clientContext(context.Background(), set, nil)
	defer release()
	<-cctx.Done()
	if got := context.Cause(cctx).Error(); !strings.Contains(got, "probe slow's timeout 1ms") {
		t.Errorf("cause %q, want it to name probe slow's timeout 1ms", got)
	}
}
