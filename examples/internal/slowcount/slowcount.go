// Package slowcount holds what the Go SDK's and mcp-go's example peers share
// of the slow-count call: the pause between its steps, and the progress
// notifications a client collects and checks.
package slowcount

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Progress collects the progress values of one call and ends its wait
// once the expected number has arrived. It is safe for concurrent use.
type Progress struct {
	mu     sync.Mutex
	values []float64
	want   int
	done   chan struct{}
}

// NewProgress returns a Progress that waits for want values (for none
// when want is 0).
func NewProgress(want int) *Progress {
	p := &Progress{want: want, done: make(chan struct{})}
	if want == 0 {
		close(p.done)
	}
	return p
}

// Add records v.
func (p *Progress) Add(v float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.values = append(p.values, v)
	if len(p.values) == p.want {
		close(p.done)
	}
}

// Wait returns the values once all expected ones arrived, or what is there
// when grace passes or ctx ends: notifications are dispatched apart from
// the response, and may trail it.
func (p *Progress) Wait(ctx context.Context, grace time.Duration) []float64 {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-ctx.Done():
	case <-t.C:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.values)
}

// Steps returns 1, 2, ... n: the values a call of n steps reports.
func Steps(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

// Pause waits d, or until ctx is done.
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
