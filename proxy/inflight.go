package proxy

import (
	"context"
	"net/http"
	"sync"

	"github.com/frayproxy/fray/proxy/mcp"
)

// inflight tracks the exchanges being served, so that shutdown can wait
// for them and then end those left. It is safe for concurrent use.
type inflight struct {
	mu       sync.Mutex
	next     uint64
	open     map[uint64]flight
	changed  chan struct{} // closed and replaced whenever an exchange ends
	ending   bool          // endAll was called: new exchanges end at once
	standing int           // open standalone GET streams
}

type flight struct {
	cancel   context.CancelFunc
	standing bool
}

func newInflight() *inflight {
	return &inflight{open: map[uint64]flight{}, changed: make(chan struct{})}
}

// wrap serves h with every request's context in f's hands.
func (f *inflight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		// A standalone GET stream lasts as long as its session: nothing to
		// wait for at shutdown. (A legacy stream is one too, but its path
		// is known only once the proxy has seen its first event.)
		standing := mcp.Classify(r.Method, r.URL, r.Header, mcp.RPCNone, nil).Stream == mcp.StreamGet
		id := f.add(flight{cancel, standing})
		defer f.remove(id)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (f *inflight) add(fl flight) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ending {
		fl.cancel()
	}
	f.next++
	f.open[f.next] = fl
	if fl.standing {
		f.standing++
	}
	return f.next
}

func (f *inflight) remove(id uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open[id].standing {
		f.standing--
	}
	delete(f.open, id)
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait returns true once no exchange is open (standing streams included
// only with standing), false if ctx ends first.
func (f *inflight) wait(ctx context.Context, standing bool) bool {
	for {
		f.mu.Lock()
		n := len(f.open)
		if !standing {
			n -= f.standing
		}
		ch := f.changed
		f.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// endAll ends every open exchange, and every later one at once: the proxy
// sees its client gone and ends the response cleanly. It returns how many
// were open, and whether they were all standalone GET streams.
func (f *inflight) endAll() (open int, drained bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ending = true
	for _, fl := range f.open {
		fl.cancel()
	}
	return len(f.open), len(f.open) == f.standing
}
