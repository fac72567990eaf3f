package forward_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// chunkCounter is the Queue, counting the chunks it is given.
type chunkCounter struct {
	*observe.Queue
	chunks atomic.Int64
	// refuse, when set, refuses chunks at random, as a busy Queue does,
	// so that a stream parses some reads and sends others as chunks. (One
	// stream asks, from its goroutine.)
	refuse *rand.Rand
}

func (c *chunkCounter) Stream() observe.Stream { return &countingStream{c.Queue.Stream(), c} }

// countingStream is the Queue's handle on a stream, counting its chunks.
type countingStream struct {
	observe.Stream
	c *chunkCounter
}

func (s *countingStream) Chunks() bool {
	if s.c.refuse != nil && s.c.refuse.IntN(2) == 0 {
		return false
	}
	return s.Stream.Chunks()
}

func (s *countingStream) ObserveChunk(o *observe.Observation) {
	s.c.chunks.Add(1)
	s.Stream.ObserveChunk(o)
}

// noChunks is the Queue whose streams take no chunks: every event is
// parsed on the stream's path.
type noChunks struct{ q *observe.Queue }

func (n noChunks) Observe(o *observe.Observation) { n.q.Observe(o) }
func (n noChunks) Stream() observe.Stream         { return noChunksStream{n.q.Stream()} }

type noChunksStream struct{ observe.Stream }

func (noChunksStream) Chunks() bool { return false }

// fixedClock reads the same time always, so that two runs report the
// same times.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }
func (c fixedClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// eventRecorder keeps a copy of every event observation.
type eventRecorder struct{ list[string] }

func (r *eventRecorder) Observe(o *observe.Observation) {
	if o.Kind != observe.KindEvent {
		return
	}
	e := *o.Event
	h := *o
	h.Event = nil
	r.add(fmt.Sprintf("%+v %+v %q %q %q %q %q %q", h, e.Event, e.Raw, e.Type, e.ID, e.Data, e.RPCMethod, e.RPCID) +
		fmt.Sprintf(" fate=%v copies=%d at=%v did=%q/%v dretry=%d/%v unclassified=%v scanned=%v",
			e.Fate, e.Copies, e.DeliveredAt, e.DeliveredID, e.DeliveredHasID, e.DeliveredRetry, e.DeliveredHasRetry, e.Unclassified, e.Scanned))
}

// chunkyStream is an event stream of n blocks, in the pieces an upstream
// writes, each with whether it ends at a block's edge.
func chunkyStream(rng *rand.Rand, n int) (pieces []string, edges []bool) {
	lines := []string{
		`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
		`data: {"jsonrpc":"2.0","id":3,"result":{}}`, `data: {"jsonrpc":"2.0","id":"s-1","method":"roots/list"}`,
		"id: 7", "id:", "event: message", ": keep-alive", "retry: 1500", "data:", "data: a", "\ufeffdata: x",
	}
	var b strings.Builder
	if rng.IntN(4) == 0 {
		b.WriteString("\ufeff")
	}
	edge := 0
	for i := range n {
		eol := "\n"
		if rng.IntN(15) == 0 {
			eol = "\r\n"
		}
		for range rng.IntN(4) {
			b.WriteString(lines[rng.IntN(len(lines))] + eol)
		}
		b.WriteString(eol)
		if rng.IntN(3) == 0 && i < n-1 {
			continue // the next block comes in the same piece
		}
		s := b.String()
		cut := len(s)
		if rng.IntN(8) == 0 {
			cut = edge + 1 + rng.IntN(len(s)-edge)
		}
		pieces, edges = append(pieces, s[edge:cut]), append(edges, cut == len(s))
		edge = cut
	}
	if s := b.String(); edge < len(s) {
		pieces, edges = append(pieces, s[edge:]), append(edges, true)
	}
	return pieces, edges
}

// runChunky streams pieces through fray, whose observer is ob (a Queue,
// q, behind it the recorder), to a client; the upstream writes a piece
// that ends at a block's edge only once the client has every byte before
// it, so that most reads of fray are one piece. The client checks, at
// each read, that every block it has is observed already.
func runChunky(t *testing.T, method string, pieces []string, edges []bool, ob observe.Observer, q *observe.Queue, rec *eventRecorder) {
	t.Helper()
	var mu sync.Mutex
	got := 0
	moved := sync.NewCond(&mu)
	// The servers close on return: the test runs this dozens of times.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		// Gone, the client does not read on: the wait ends.
		stop := context.AfterFunc(r.Context(), func() { mu.Lock(); moved.Broadcast(); mu.Unlock() })
		defer stop()
		sent := 0
		for i, p := range pieces {
			if i > 0 && edges[i-1] {
				mu.Lock()
				for got < sent && r.Context().Err() == nil {
					moved.Wait()
				}
				mu.Unlock()
			}
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
			sent += len(p)
		}
	}))
	defer up.Close()
	srv := httptest.NewServer(newProxy(t, up.URL, forward.Options{Observer: ob, Clock: fixedClock{time.Unix(1e9, 0)}}))
	defer srv.Close()
	fray := srv.URL

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	}
	req, _ := http.NewRequestWithContext(ctx, method, fray+"/mcp", body)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp := do(t, http.DefaultClient, req)
	defer resp.Body.Close()
	var have []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		have = append(have, buf[:n]...)
		if n > 0 {
			q.Drain()
			if blocks, observed := completeBlocks(t, have), len(rec.all()); observed < blocks {
				t.Fatalf("the client has %d blocks, the observer only %d", blocks, observed)
			}
			mu.Lock()
			got = len(have)
			moved.Broadcast()
			mu.Unlock()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := strings.Join(pieces, ""); string(have) != want {
		t.Fatalf("the client got %q, want %q", have, want)
	}
	q.Drain()
}

// completeBlocks is how many whole blocks b holds.
func completeBlocks(t *testing.T, b []byte) int {
	r := sse.NewReader(bytes.NewReader(b), 0)
	n := 0
	for {
		e, err := r.Next()
		if err != nil || !e.Complete {
			return n
		}
		n++
	}
}

// TestChunksReportWhatParsingDid: a stream whose reads go to the Queue as
// chunks reports to the observer the very events it reports when it parses
// every read itself, field for field, in the same order, whatever the
// blocks hold, however the reads break them and whenever the Queue
// refuses chunks (as a busy one does); each before the client has it; and
// chunks are taken (most reads here are whole blocks).
func TestChunksReportWhatParsingDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var chunks, reads int64
	for i := range 12 {
		method := []string{http.MethodGet, http.MethodPost}[i%2]
		pieces, edges := chunkyStream(rng, 10+rng.IntN(40))
		run := func(chunky, refuse bool) []string {
			rec := &eventRecorder{}
			q := observe.NewQueue(rec)
			defer q.Close()
			var ob observe.Observer = noChunks{q}
			c := &chunkCounter{Queue: q}
			if refuse {
				c.refuse = rand.New(rand.NewPCG(uint64(i), 3))
			}
			if chunky {
				ob = c
			}
			runChunky(t, method, pieces, edges, ob, q, rec)
			chunks += c.chunks.Load()
			return rec.all()
		}
		parsed := run(false, false)
		for _, refuse := range []bool{false, true} {
			reads += int64(len(pieces))
			chunked := run(true, refuse)
			if len(parsed) != len(chunked) {
				t.Fatalf("stream %d (%s, refusing at random %v): %d events parsed on the path, %d with chunks", i, method, refuse, len(parsed), len(chunked))
			}
			for j := range parsed {
				if parsed[j] != chunked[j] {
					t.Fatalf("stream %d (%s, refusing at random %v), event %d:\nparsed  %s\nchunked %s", i, method, refuse, j, parsed[j], chunked[j])
				}
			}
		}
	}
	t.Logf("%d chunks in %d reads", chunks, reads)
	if chunks < reads/3 {
		t.Fatalf("%d chunks in %d reads: the test did not take the way it tests", chunks, reads)
	}
}
