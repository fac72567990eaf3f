package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/proxy/internal/benchsse"
	"github.com/frayproxy/fray/proxy/internal/scale"
)

// The setups' names.
const (
	direct       = "direct"
	fray         = "fray"
	reverseProxy = "reverseproxy"
	toxiproxy    = "toxiproxy"
)

// setup is one way to reach the upstream: direct, or through a proxy in a
// process of its own.
type setup struct {
	name string
	base string // http://host:port
	proc *proc  // nil for direct
}

// cpu is the proxy process's CPU time so far; 0 for direct.
func (s setup) cpu() (time.Duration, error) {
	if s.proc == nil {
		return 0, nil
	}
	return s.proc.cpu()
}

// roundFunc runs one round through s and returns the events it carried.
type roundFunc func(ctx context.Context, s setup, t *tally) (int64, error)

// alternate runs rounds rounds of fn through every setup, each round
// starting one setup further on, so that whatever else the machine does
// meanwhile falls on all of them alike; it times each round and reads the
// proxy's CPU before and after.
func alternate(ctx context.Context, setups []setup, rounds int, fn roundFunc) (map[string]*tally, error) {
	out := map[string]*tally{}
	for _, s := range setups {
		out[s.name] = &tally{}
	}
	for r := range rounds {
		for i := range setups {
			s := setups[(r+i)%len(setups)]
			cpu0, err := s.cpu()
			if err != nil {
				return nil, err
			}
			start := time.Now()
			n, err := fn(ctx, s, out[s.name])
			took := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("perf: %s: %w", s.name, err)
			}
			cpu1, err := s.cpu()
			if err != nil {
				return nil, err
			}
			out[s.name].add(n, took, cpu1-cpu0)
		}
	}
	return out, nil
}

// floodPath is where the upstream serves the Go SDK flood server.
const floodPath = "/flood"

// floodFigures is the first measurement: the official Go SDK server
// streams n progress notifications a round, as fast as it can, to the Go
// SDK client, through each setup.
func floodFigures(ctx context.Context, setups []setup, rounds, n int) ([]figure, error) {
	clients := map[string]*refpeer.FloodClient{}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	// call runs one flood through s. Now and then the SDK pair loses a
	// call's stream behind a proxy, a plain ReverseProxy too (the client
	// reads an unexpected EOF and reports the call "terminated without
	// response"): the call runs again once, on a new session, and the
	// figure counts it.
	redone := 0
	call := func(ctx context.Context, s setup, n int) error {
		_, err := clients[s.name].Call(ctx, n)
		if err == nil || ctx.Err() != nil {
			return err
		}
		redone++
		_ = clients[s.name].Close()
		c, derr := refpeer.DialFlood(ctx, s.base+floodPath, &http.Client{Transport: scale.NewTransport()})
		if derr != nil {
			return errors.Join(err, derr)
		}
		clients[s.name] = c
		if _, err2 := c.Call(ctx, n); err2 != nil {
			return errors.Join(err, err2)
		}
		return nil
	}
	for _, s := range setups {
		c, err := refpeer.DialFlood(ctx, s.base+floodPath, &http.Client{Transport: scale.NewTransport()})
		if err != nil {
			return nil, err
		}
		clients[s.name] = c
		if err := call(ctx, s, min(n, 2000)); err != nil { // warm-up
			return nil, fmt.Errorf("perf: %s: %w", s.name, err)
		}
	}
	t, err := alternate(ctx, setups, rounds, func(ctx context.Context, s setup, _ *tally) (int64, error) {
		return int64(n), call(ctx, s, n)
	})
	if err != nil {
		return nil, err
	}
	d, f, tp, rp := t[direct], t[fray], t[toxiproxy], t[reverseProxy]
	return []figure{{
		Name:  "1. Go SDK flood: events/s, fray / direct",
		Value: ratio(f.eventsPerSec(), d.eventsPerSec()), Limit: 0.95, AtLeast: true, Unit: "×",
		Detail: fmt.Sprintf("events/s: direct %.0f, fray %.0f, reverseproxy %.0f, toxiproxy %.0f; calls run again after the SDK pair lost their stream: %d",
			d.eventsPerSec(), f.eventsPerSec(), rp.eventsPerSec(), tp.eventsPerSec(), redone),
	}, {
		Name:  "1. Go SDK flood: CPU per event, fray / toxiproxy",
		Value: ratio(f.cpuPerEvent(), tp.cpuPerEvent()), Limit: 1, Unit: "×",
		Detail: fmt.Sprintf("proxy process CPU per event: fray %.2f µs, toxiproxy %.2f µs, reverseproxy %.2f µs",
			f.cpuPerEvent(), tp.cpuPerEvent(), rp.cpuPerEvent()),
	}}, nil
}

// pacedFigure is the second measurement: one event per upstream write,
// one every pace, n a round; the client records each event's one-way
// latency.
func pacedFigure(ctx context.Context, up *benchsse.Upstream, setups []setup, rounds, n int, pace time.Duration) (figure, error) {
	client := &http.Client{Transport: scale.NewTransport()}
	defer client.CloseIdleConnections()
	lat := make([]time.Duration, n)
	t, err := alternate(ctx, setups, rounds, func(ctx context.Context, s setup, t *tally) (int64, error) {
		if err := benchsse.Read(ctx, client, benchsse.URL(s.base, n, pace, 1), n, up.Base, lat); err != nil {
			return 0, err
		}
		t.lat = append(t.lat, lat...)
		return int64(n), nil
	})
	if err != nil {
		return figure{}, err
	}
	d, f, rp, tp := t[direct].p50(), t[fray].p50(), t[reverseProxy].p50(), t[toxiproxy].p50()
	return figure{
		Name:  "2. paced events: added p50 latency, fray / reverseproxy",
		Value: addedRatio(d, f, rp), Limit: 1.2, Unit: "×",
		Detail: fmt.Sprintf("p50 one-way latency, one event every %v: direct %.0f µs, fray %.0f µs (+%.0f), reverseproxy %.0f µs (+%.0f), toxiproxy %.0f µs (+%.0f)",
			pace, d, f, f-d, rp, rp-d, tp, tp-d),
	}, nil
}

// bulkFigure is the fourth measurement: the upstream writes a thousand
// events a write, n a round, as fast as the client reads them.
func bulkFigure(ctx context.Context, up *benchsse.Upstream, setups []setup, rounds, n int) (figure, error) {
	client := &http.Client{Transport: scale.NewTransport()}
	defer client.CloseIdleConnections()
	t, err := alternate(ctx, setups, rounds, func(ctx context.Context, s setup, _ *tally) (int64, error) {
		return int64(n), benchsse.Read(ctx, client, benchsse.URL(s.base, n, 0, 1000), n, up.Base, nil)
	})
	if err != nil {
		return figure{}, err
	}
	f, rp, tp := t[fray], t[reverseProxy], t[toxiproxy]
	return figure{
		Name:  "4. bulk events: CPU per event, fray / reverseproxy",
		Value: ratio(f.cpuPerEvent(), rp.cpuPerEvent()), Limit: 8, Unit: "×",
		Detail: fmt.Sprintf("proxy process CPU per event, 1,000 events a write: fray %.2f µs, reverseproxy %.2f µs, toxiproxy %.2f µs; events/s: fray %.0f, reverseproxy %.0f, toxiproxy %.0f",
			f.cpuPerEvent(), rp.cpuPerEvent(), tp.cpuPerEvent(), f.eventsPerSec(), rp.eventsPerSec(), tp.eventsPerSec()),
	}, nil
}
