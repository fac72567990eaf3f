package forward

import (
	"sync"

	"github.com/frayproxy/fray/proxy/observe"
)

// eventScratch is what a pump builds for each event: the block's view
// (oev.Event, what the stream plan decides on) and the observation that
// reports it. Nothing of it outlives the event.
type eventScratch struct {
	obs observe.Observation
	oev observe.Event
}

// scratchPool holds the eventScratch of streams that wait for their
// upstream: thousands of idle streams hold none.
var scratchPool = sync.Pool{New: func() any { return new(eventScratch) }}

// current returns the stream's eventScratch, taking one from the pool when
// it holds none.
func (pm *pump) current() *eventScratch {
	if pm.es == nil {
		pm.es = scratchPool.Get().(*eventScratch)
	}
	return pm.es
}

// releaseScratch gives the stream's eventScratch and Stage back, the
// eventScratch cleared of what it pointed to, the Stage committed, before
// the stream waits for its upstream: no event is being handled then.
func (pm *pump) releaseScratch() {
	pm.releaseStage()
	if pm.es == nil {
		return
	}
	*pm.es = eventScratch{}
	scratchPool.Put(pm.es)
	pm.es = nil
}
