package faults

import (
	"sync"
	"sync/atomic"

	"github.com/frayproxy/fray/proxy/mcp"
)

// Traffic names what a fault's draw was for: the session's number, the
// stream type and the client's JSON-RPC method.
type Traffic struct {
	SessionSeq int
	Stream     mcp.StreamType
	RPCMethod  string
}

func traffic(ex *mcp.Exchange) Traffic {
	return Traffic{SessionSeq: ex.SessionSeq, Stream: ex.Stream, RPCMethod: ex.RPCMethod}
}

// Skip is one draw that ruled a fault out: the fault, its probability,
// the seed drawn with, and the traffic it matched.
type Skip struct {
	Index       int
	Kind        string
	Probability float64
	Seed        uint64
	Traffic     Traffic
}

// drawLog counts a fault's draws and keeps what is needed to draw its
// first skipped ones again under another seed.
type drawLog struct {
	drawn, skipped atomic.Int64
	mu             sync.Mutex
	kept           []drawn // the first maxKept skipped draws that were their source's first
}

// drawn names one draw: the salt and identity its source was seeded with.
type drawn struct{ salt, id uint64 }

// maxKept bounds the skipped draws a fault keeps for FiringSeed.
const maxKept = 16

// draw decides whether fault f acts on the traffic ex, from r's next
// draw: a certain fault always, a fault with first = true on every
// opportunity until it has acted once in the run, any other at its
// probability. first says the draw is r's first since r was seeded with
// salt and id, so that it can be made again under another seed.
func (s *Set) draw(f *fault, r *Rand, tr Traffic, salt, id uint64, first bool) bool {
	p := f.sel.probability
	if p >= 1 {
		return true
	}
	f.draws.drawn.Add(1)
	on := r.Chance(p)
	if on || f.sel.first && f.fired.Load() == 0 {
		return true
	}
	f.draws.skipped.Add(1)
	if first {
		f.draws.keep(salt, id)
	}
	if hook := s.skipHook.Load(); hook != nil {
		(*hook)(Skip{Index: f.index, Kind: f.def.Name, Probability: p, Seed: s.seed, Traffic: tr})
	}
	return false
}

func (d *drawLog) keep(salt, id uint64) {
	d.mu.Lock()
	if len(d.kept) < maxKept {
		d.kept = append(d.kept, drawn{salt, id})
	}
	d.mu.Unlock()
}

// OnSkip has fn told of every draw that skips a fault from now on (nil:
// no longer). fn is called on the exchange's goroutine, while it decides:
// it must be quick and safe for concurrent use.
func (s *Set) OnSkip(fn func(Skip)) {
	if fn == nil {
		s.skipHook.Store(nil)
		return
	}
	s.skipHook.Store(&fn)
}

// maxRedraw bounds the seeds FiringSeed tries.
const maxRedraw = 10000

// FiringSeed returns a seed, other than the Set's, under which the draws
// that skipped fault index would have fired it, found by making those
// draws again offline (the traffic is named by its identity, not by
// time): the first seed that fires it on all of them, or else on the
// most. fired of skipped says how many; ok is false when the fault
// skipped nothing that can be drawn again, or no seed up to maxRedraw
// fires it on any. Under another seed the other faults' draws change too.
func (s *Set) FiringSeed(index int) (seed uint64, fired, skipped int, ok bool) {
	if index < 0 || index >= len(s.faults) {
		return 0, 0, 0, false
	}
	f := s.faults[index]
	f.draws.mu.Lock()
	kept := append([]drawn(nil), f.draws.kept...)
	f.draws.mu.Unlock()
	for c := uint64(1); c <= maxRedraw && fired < len(kept); c++ {
		if c == s.seed {
			continue
		}
		n := 0
		for _, d := range kept {
			var r Rand
			r.seed(c, f.index, d.salt, d.id)
			if r.Chance(f.sel.probability) {
				n++
			}
		}
		if n > fired {
			seed, fired = c, n
		}
	}
	return seed, fired, len(kept), fired > 0
}
