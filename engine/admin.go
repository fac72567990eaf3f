package engine

import (
	"net/http"

	"github.com/frayproxy/fray/proxy/admin"
)

// AdminHandler returns the admin API over the engine: the profile in force
// (changes made through it are recorded like Swap's and SetEnabled's),
// per-fault counters, and the metrics at /metrics when Options.Metrics is
// set. It is unguarded: serve it on loopback, or behind admin.RequireToken.
func (e *Engine) AdminHandler() http.Handler {
	h := admin.New(e)
	if e.metrics != nil {
		h.HandleMetrics(e.metrics.Handler())
	}
	return h
}
