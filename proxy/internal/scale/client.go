package scale

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Streams is a set of open SSE streams to one URL, each read by its own
// goroutine that counts the events as they come. Its methods are safe for
// concurrent use; the zero value is not usable: call Open.
type Streams struct {
	cancel    context.CancelFunc
	transport *http.Transport
	wg        sync.WaitGroup
	events    atomic.Int64
	target    atomic.Int64
	reached   chan struct{}
	failed    atomic.Int64
	firstErr  atomic.Pointer[error]
}

// NewTransport returns the client transport Streams uses: HTTP/1.1, one
// connection per stream, no limit on connections.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     false,
		MaxIdleConnsPerHost:   -1,
		DisableCompression:    true,
		ResponseHeaderTimeout: time.Minute,
	}
}

// Open opens n streams to url, at most parallel at a time, and returns
// once each has delivered its OpenEvent, or with the first error. The
// streams stay open until Close.
func Open(ctx context.Context, url string, n, parallel int) (*Streams, error) {
	sctx, cancel := context.WithCancel(context.Background())
	s := &Streams{cancel: cancel, transport: NewTransport(), reached: make(chan struct{}, 1)}
	client := &http.Client{Transport: s.transport}
	opened := make(chan error, n)
	sem := make(chan struct{}, max(parallel, 1))
	for range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			s.Close()
			return nil, fmt.Errorf("scale: opening %d streams to %s: %w", n, url, ctx.Err())
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.read(sctx, client, url, func(err error) { <-sem; opened <- err })
		}()
	}
	for i := range n {
		select {
		case err := <-opened:
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("scale: opening stream %d of %d to %s: %w", i+1, n, url, err)
			}
		case <-ctx.Done():
			s.Close()
			return nil, fmt.Errorf("scale: opening %d streams to %s: %d open: %w", n, url, i, ctx.Err())
		}
	}
	return s, nil
}

// read opens one stream, reports its opening (or failure) once, then
// counts its events until the stream ends.
func (s *Streams) read(ctx context.Context, client *http.Client, url string, opened func(error)) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		opened(err)
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		opened(err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		opened(fmt.Errorf("status %s", resp.Status))
		return
	}
	br := bufio.NewReaderSize(resp.Body, 4096)
	first := true
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if first {
				opened(fmt.Errorf("stream ended before its first event: %w", err))
			} else if ctx.Err() == nil {
				s.fail(fmt.Errorf("stream from %s ended: %w", url, err))
			}
			return
		}
		if len(line) != 1 {
			continue
		}
		// A blank line ends an event.
		if first {
			first = false
			opened(nil)
			continue
		}
		if s.events.Add(1) == s.target.Load() {
			s.signal()
		}
	}
}

func (s *Streams) fail(err error) {
	s.failed.Add(1)
	s.firstErr.CompareAndSwap(nil, &err)
	s.signal()
}

// signal wakes Wait to look again; a wake-up already pending will do.
func (s *Streams) signal() {
	select {
	case s.reached <- struct{}{}:
	default:
	}
}

// Events is the number of events counted so far, OpenEvents not included.
func (s *Streams) Events() int64 { return s.events.Load() }

// Expect sets the total of events that Wait waits for; call it before the
// events can arrive.
func (s *Streams) Expect(total int64) { s.target.Store(total) }

// Wait returns once the total set by Expect has been counted, or with an
// error when a stream ended or ctx is done first.
func (s *Streams) Wait(ctx context.Context) error {
	for {
		if s.failed.Load() > 0 {
			return fmt.Errorf("scale: %d streams failed, the first: %w", s.failed.Load(), *s.firstErr.Load())
		}
		if s.events.Load() >= s.target.Load() {
			return nil
		}
		select {
		case <-s.reached:
		case <-ctx.Done():
			return fmt.Errorf("scale: %d of %d events: %w", s.events.Load(), s.target.Load(), ctx.Err())
		}
	}
}

// Close ends every stream and waits for their goroutines.
func (s *Streams) Close() {
	s.cancel()
	s.wg.Wait()
	s.transport.CloseIdleConnections()
}
