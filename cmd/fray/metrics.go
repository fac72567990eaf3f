package main

import (
	"net/http"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
	"github.com/frayproxy/fray/proxy/admin"
	"github.com/frayproxy/fray/proxy/metrics"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// proxyMetrics is what GET /metrics serves on the admin listener: the
// metrics watch every observation, and the findings are read from the
// engine's verifier at each scrape. A nil *proxyMetrics is no metrics.
type proxyMetrics struct {
	*metrics.Metrics
	eng atomic.Pointer[engine]
}

// withMetrics adds the metrics to opts' observers when the admin API is
// on (--admin), and returns them; nil otherwise, when they would cost
// something per event for no one to read.
func withMetrics(c *cli.Context, opts *proxy.Options) *proxyMetrics {
	if c.String("admin") == "" {
		return nil
	}
	return addMetrics(opts)
}

// addMetrics adds the metrics to opts' observers.
func addMetrics(opts *proxy.Options) *proxyMetrics {
	pm := &proxyMetrics{}
	pm.Metrics = metrics.New(metrics.Options{Findings: pm.findings})
	opts.Observer = observe.Tee(opts.Observer, pm.Metrics)
	return pm
}

// attach makes the findings those of e's verifier.
func (pm *proxyMetrics) attach(e *engine) {
	if pm != nil {
		pm.eng.Store(e)
	}
}

func (pm *proxyMetrics) findings() []report.Check {
	e := pm.eng.Load()
	if e == nil {
		return nil
	}
	return e.verifier.Report(e.elapsed()).Checks
}

// adminHandler is the admin API over active, with the metrics at GET
// /metrics when there are any.
func adminHandler(active *profiles.Active, pm *proxyMetrics) http.Handler {
	h := admin.New(active)
	if pm != nil {
		h.HandleMetrics(pm.Handler())
	}
	return h
}
