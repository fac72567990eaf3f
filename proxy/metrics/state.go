package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// streamShards spreads the open streams over locks, so that thousands of
// streams starting and ending at once do not queue on one mutex.
const streamShards = 64

// streamTable knows which exchanges are open SSE streams and whether each
// has delivered its JSON-RPC response. It holds one entry per open stream.
type streamTable struct {
	shards [streamShards]streamShard
}

type streamShard struct {
	mu       sync.Mutex
	answered map[uint64]bool // exchange -> response delivered
	_        [40]byte        // keeps neighbouring shards off one cache line
}

func (t *streamTable) init() {
	for i := range t.shards {
		t.shards[i].answered = make(map[uint64]bool)
	}
}

func (t *streamTable) shard(exchange uint64) *streamShard {
	return &t.shards[exchange%streamShards]
}

func (t *streamTable) open(exchange uint64) {
	s := t.shard(exchange)
	s.mu.Lock()
	s.answered[exchange] = false
	s.mu.Unlock()
}

// answer records that the stream delivered its response.
func (t *streamTable) answer(exchange uint64) {
	s := t.shard(exchange)
	s.mu.Lock()
	if _, ok := s.answered[exchange]; ok {
		s.answered[exchange] = true
	}
	s.mu.Unlock()
}

// close forgets the stream; ok is false when it was not an open stream.
func (t *streamTable) close(exchange uint64) (answered, ok bool) {
	s := t.shard(exchange)
	s.mu.Lock()
	answered, ok = s.answered[exchange]
	delete(s.answered, exchange)
	s.mu.Unlock()
	return answered, ok
}

// maxPendingEnds bounds the stream ends remembered per session until its
// next GET; more ends before that GET are not measured.
const maxPendingEnds = 8

// pending is a session's stream ends that wait for the session's next GET.
type pending struct {
	n  int
	at [maxPendingEnds]time.Duration
}

// sessionTable remembers, per session, the ends of streams that owe a
// reconnection. A session leaves it at its next GET, at its DELETE, or,
// past max sessions, arbitrarily.
type sessionTable struct {
	mu   sync.Mutex
	byID map[string]*pending
	max  int
}

// ended records a stream end at at in session id. Streams without a
// session are not measured: there is no telling whose GET is whose.
func (t *sessionTable) ended(id string, at time.Duration) {
	if id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.byID[id]
	if p == nil {
		if len(t.byID) >= t.max {
			for k := range t.byID {
				delete(t.byID, k)
				break
			}
		}
		p = &pending{}
		t.byID[id] = p
	}
	if p.n < maxPendingEnds {
		p.at[p.n] = at
		p.n++
	}
}

// reconnected observes, for a GET at at in session id, the delay since each
// stream end the session owed a reconnection for. A GET observed before
// the end it follows (a client back within microseconds of a reset, before
// fray has reported the end) is matched to the session's next GET instead.
func (t *sessionTable) reconnected(id string, at time.Duration, h prometheus.Histogram) {
	if id == "" {
		return
	}
	t.mu.Lock()
	p := t.byID[id]
	delete(t.byID, id)
	t.mu.Unlock()
	if p == nil {
		return
	}
	for _, end := range p.at[:p.n] {
		h.Observe(max(at-end, 0).Seconds())
	}
}

func (t *sessionTable) forget(id string) {
	if id == "" {
		return
	}
	t.mu.Lock()
	delete(t.byID, id)
	t.mu.Unlock()
}
