package proxy

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
		// The metrics count what the verifier was passed: the events
		// queued so far go first.
		m := e.metrics.Handler()
		h.HandleMetrics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.queue.Drain()
			m.ServeHTTP(w, r)
		}))
	}
	return h
}
