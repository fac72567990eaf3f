package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/frayproxy/fray/proxy/internal/scale"
)

// idleFigure is the third measurement: n idle SSE streams held through a
// fresh ReverseProxy process, then through a fresh `fray proxy`; the
// figure is the resident memory each process gained per stream.
func idleFigure(ctx context.Context, frayBin string, n int) (figure, error) {
	up := scale.NewUpstream()
	srv := httptest.NewServer(up)
	defer srv.Close()
	perStream := map[string]float64{}
	for _, name := range []string{reverseProxy, fray} {
		var p *proc
		var err error
		if name == fray {
			p, err = startFray(ctx, frayBin, srv.URL)
		} else {
			p, err = startReverseProxy(ctx, srv.URL)
		}
		if err != nil {
			return figure{}, err
		}
		perStream[name], err = idleMemory(ctx, up, p, n)
		p.stop()
		if err != nil {
			return figure{}, fmt.Errorf("perf: %s: %w", name, err)
		}
	}
	f, rp := perStream[fray], perStream[reverseProxy]
	return figure{
		Name:  fmt.Sprintf("3. %d idle streams: memory per stream, fray / reverseproxy", n),
		Value: ratio(f, rp), Limit: 1, Unit: "×",
		Detail: fmt.Sprintf("resident memory (VmRSS) gained per idle stream: fray %.1f KiB, reverseproxy %.1f KiB", f/1024, rp/1024),
	}, nil
}

// idleMemory warms p up with a few streams, then opens n streams through
// it and returns the resident memory p gained per stream, read once the
// upstream holds all of them and the process has settled.
func idleMemory(ctx context.Context, up *scale.Upstream, p *proc, n int) (float64, error) {
	target := "http://" + p.addr + "/mcp"
	warm, err := scale.Open(ctx, target, 16, 16)
	if err != nil {
		return 0, err
	}
	warm.Expect(16 * 4)
	up.Fire(4)
	err = warm.Wait(ctx)
	warm.Close()
	if err != nil {
		return 0, fmt.Errorf("warming up: %w", err)
	}
	if err := holds(ctx, up, 0); err != nil {
		return 0, err
	}
	before, err := settledRSS(ctx, p)
	if err != nil {
		return 0, err
	}
	streams, err := scale.Open(ctx, target, n, 128)
	if err != nil {
		return 0, err
	}
	defer streams.Close()
	if err := holds(ctx, up, n); err != nil {
		return 0, err
	}
	after, err := settledRSS(ctx, p)
	if err != nil {
		return 0, err
	}
	return (float64(after) - float64(before)) / float64(n), nil
}

// holds waits, at most a minute, until the upstream holds n streams:
// streams end there a moment after their clients close them.
func holds(ctx context.Context, up *scale.Upstream, n int) error {
	deadline := time.Now().Add(time.Minute)
	for up.Streams() != n {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the upstream holds %d streams, want %d", up.Streams(), n)
		}
		time.Sleep(20 * time.Millisecond) // polling a count the servers' goroutines keep
	}
	return nil
}

// settledRSS reads p's resident memory once two readings half a second
// apart differ by less than 1% (at most 10 s): what a process holds once
// it has finished setting up what it was just asked to.
func settledRSS(ctx context.Context, p *proc) (uint64, error) {
	last, err := procRSS(p.pid())
	if err != nil {
		return 0, err
	}
	for range 20 {
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		now, err := procRSS(p.pid())
		if err != nil {
			return 0, err
		}
		if diff := int64(now) - int64(last); diff*100 < int64(last) && -diff*100 < int64(last) {
			return now, nil
		}
		last = now
	}
	return last, nil
}
