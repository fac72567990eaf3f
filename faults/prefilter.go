package faults

import (
	"bytes"
	"math"
	"math/bits"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// prefilter narrows, for one event, a stream's slots down to those whose
// selector may accept it, with a few word operations instead of a call per
// fault. Each selector part that looks at the event (rpc_kind and
// rpc_method, event, priming, nth, stream_after) rules out its slots
// through a bitset that is recomputed only when what it depends on
// changes: the message's method, the event type, the index passing an nth,
// the stream's age passing a stream_after. Streams repeat themselves (a
// tool call's progress notifications), so in steady state an event costs
// a comparison per part. matchEvent still has the last word on every slot
// the prefilter lets through; the prefilter never rules out a slot
// matchEvent would accept.
//
// A prefilter belongs to one streamPlan and is not safe for concurrent use.
type prefilter struct {
	words int
	ev    bitset // slots whose fault decides at events
	cand  bitset // the candidates for the current event

	rpcSlots bitset // slots whose rpc_kind or rpc_method look at events
	rpcOK    bitset
	rpcValid bool
	rpcKind  mcp.RPCKind
	rpcName  []byte

	typeSlots bitset // slots with an event selector
	typeOK    bitset
	typeValid bool
	typeName  []byte

	primYes, primNo bitset // slots with priming = true / false

	nthSlots bitset
	nthOK    bitset
	nthIdx   int // the index nthOK was computed for
	nthNext  int // the smallest nth above nthIdx

	lateSlots bitset // slots with stream_after
	lateOK    bitset
	lateAt    time.Duration // the age lateOK was computed for
	lateNext  time.Duration // the smallest stream_after above lateAt
}

// bitset has a bit per slot of a stream.
type bitset []uint64

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }

func (b bitset) clear() {
	for w := range b {
		b[w] = 0
	}
}

func newPrefilter(slots []slot) *prefilter {
	n := (len(slots) + 63) / 64
	pf := &prefilter{words: n, nthIdx: -1}
	for _, b := range []*bitset{&pf.ev, &pf.cand, &pf.rpcSlots, &pf.rpcOK, &pf.typeSlots, &pf.typeOK,
		&pf.primYes, &pf.primNo, &pf.nthSlots, &pf.nthOK, &pf.lateSlots, &pf.lateOK} {
		*b = make(bitset, n)
	}
	for i := range slots {
		f := slots[i].f
		if f.onEvent == nil {
			continue
		}
		pf.ev.set(i)
		s := &f.sel
		if f.def.On == OnEvent && (s.rpcKinds != 0 || s.rpcMethods != nil) {
			pf.rpcSlots.set(i)
		}
		if s.anyEvent {
			pf.typeSlots.set(i)
		}
		switch s.priming {
		case triYes:
			pf.primYes.set(i)
		case triNo:
			pf.primNo.set(i)
		}
		if s.nth >= 0 {
			pf.nthSlots.set(i)
		}
		if s.streamAfter > 0 {
			pf.lateSlots.set(i)
		}
	}
	pf.lateAt = -1
	return pf
}

// candidates returns the slots that may accept ev. The result is valid
// until the next call.
func (pf *prefilter) candidates(slots []slot, ev *mcp.Event) bitset {
	pf.refreshRPC(slots, ev)
	pf.refreshType(slots, ev)
	pf.refreshNth(slots, ev)
	pf.refreshLate(slots, ev)
	prim := pf.primYes
	if ev.Priming {
		prim = pf.primNo
	}
	for w := range pf.cand {
		out := pf.rpcSlots[w]&^pf.rpcOK[w] | pf.typeSlots[w]&^pf.typeOK[w] | prim[w] |
			pf.nthSlots[w]&^pf.nthOK[w] | pf.lateSlots[w]&^pf.lateOK[w]
		pf.cand[w] = pf.ev[w] &^ out
	}
	return pf.cand
}

func (pf *prefilter) refreshRPC(slots []slot, ev *mcp.Event) {
	if pf.rpcValid && ev.RPCKind == pf.rpcKind && bytes.Equal(ev.RPCMethod, pf.rpcName) {
		return
	}
	pf.rpcValid, pf.rpcKind = true, ev.RPCKind
	pf.rpcName = append(pf.rpcName[:0], ev.RPCMethod...)
	pf.rpcOK.clear()
	forEach(pf.rpcSlots, func(i int) {
		if matchRPC(&slots[i].f.sel, ev.RPCKind, ev.RPCMethod) {
			pf.rpcOK.set(i)
		}
	})
}

func (pf *prefilter) refreshType(slots []slot, ev *mcp.Event) {
	if pf.typeValid && bytes.Equal(ev.Type, pf.typeName) {
		return
	}
	pf.typeValid = true
	pf.typeName = append(pf.typeName[:0], ev.Type...)
	pf.typeOK.clear()
	forEach(pf.typeSlots, func(i int) {
		if slots[i].f.sel.matchEventType(ev.Type) {
			pf.typeOK.set(i)
		}
	})
}

// refreshNth keeps nthOK to the slots whose nth is the event's index. An
// index between the last one and the next nth needs no work but to clear
// what the last one let through.
func (pf *prefilter) refreshNth(slots []slot, ev *mcp.Event) {
	if ev.Index == pf.nthIdx {
		return
	}
	if ev.Index > pf.nthIdx && ev.Index < pf.nthNext {
		pf.nthIdx = ev.Index
		pf.nthOK.clear()
		return
	}
	pf.nthIdx, pf.nthNext = ev.Index, math.MaxInt
	pf.nthOK.clear()
	forEach(pf.nthSlots, func(i int) {
		switch nth := slots[i].f.sel.nth; {
		case nth == ev.Index:
			pf.nthOK.set(i)
		case nth > ev.Index:
			pf.nthNext = min(pf.nthNext, nth)
		}
	})
}

// refreshLate keeps lateOK to the slots whose stream_after has passed.
func (pf *prefilter) refreshLate(slots []slot, ev *mcp.Event) {
	t := ev.SinceStream
	if t == pf.lateAt || (t > pf.lateAt && t < pf.lateNext) {
		return
	}
	pf.lateAt, pf.lateNext = t, time.Duration(math.MaxInt64)
	pf.lateOK.clear()
	forEach(pf.lateSlots, func(i int) {
		if after := slots[i].f.sel.streamAfter; after <= t {
			pf.lateOK.set(i)
		} else {
			pf.lateNext = min(pf.lateNext, after)
		}
	})
}

// forEach calls f with the index of each set bit of b, in order.
func forEach(b bitset, f func(i int)) {
	for w, word := range b {
		for word != 0 {
			f(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}
