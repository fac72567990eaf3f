package main

import "github.com/frayproxy/fray/profiles/probes"

// probeSettings are the settings of one probe's run: the run's, with the
// client command bounded by the probe's own timeout unless --client-timeout
// gave one for every probe.
func probeSettings(set runSettings, p probes.Probe) runSettings {
	if set.clientTimeout > 0 {
		return set
	}
	set.clientTimeout = p.ClientTimeout()
	set.timeoutFrom = "probe " + p.Name + "'s timeout"
	return set
}
