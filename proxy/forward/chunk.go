package forward

import (
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// chunkMax bounds a chunk: a read of a paced stream, an event or a few,
// is one; a burst is parsed on the stream's path, where the Queue's
// goroutine, which would parse it, is the busier side.
const chunkMax = 1024

// mayChunk reports whether the stream's reads may go to the observer as
// chunks (observe.Chunker) once its plan has started: blocks fray writes
// on as they came, whatever they hold. That takes a stream no fault can
// hit (no plan, or one that startPlan found inert: nothing armed at the
// stream's start either), whose events the proxy does not read itself:
// not the answer to an initialize (the session's revision), not a legacy
// stream (its endpoint event is rewritten).
func (pm *pump) mayChunk() bool {
	return pm.p.chunker != nil && pm.sp == nil && !pm.ex.initReq && pm.ex.Stream != mcp.StreamLegacy
}

// chunk reports c, the whole blocks of one read (sse.Reader.ReadChunk),
// to the Chunker, which parses them off the stream's path, then writes
// them on as they came. The Chunker has them before the client can, as
// every event. Blocks is how many blocks c holds. It reports whether the
// stream goes on.
//
// c is all the read brought, so nothing else is gathered to go with it
// (the read flushed what came before): it goes straight to the response's
// buffer, as ReverseProxy writes, which the flush before the next read
// sends. A gathering buffer would add a copy, and a pool's take and give,
// to a paced event's path between the read and the write, which the
// latency budget of a paced event counts (docs/performance.md).
func (pm *pump) chunk(c []byte, blocks int) bool {
	pm.observeHead(nil)
	es := pm.current()
	e, o := &es.oev, &es.obs
	*e = observe.Event{}
	e.Index, e.Raw = pm.index, c
	e.SinceStream, e.SinceRun = pm.readRun-pm.startRun, pm.readRun
	e.Fate, e.Copies, e.DeliveredAt = observe.Delivered, 1, pm.readRun
	*o = observe.Observation{Event: e}
	pm.p.head(o, observe.KindEvent, pm.ex, pm.readRun)
	pm.p.chunker.ObserveChunk(o)
	pm.reported = pm.p.kicker != nil
	pm.index += blocks
	if pm.gather != nil {
		ok, _ := pm.write(c, 0)
		return ok
	}
	pm.pending = true
	if _, err := pm.w.Write(c); err != nil {
		pm.cancel(err)
		return false
	}
	return true
}
