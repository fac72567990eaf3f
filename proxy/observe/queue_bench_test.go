package observe

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// BenchmarkQueueEventCold measures what queueing one event costs the
// stream that reports it when the batch it is copied into is out of the
// nearer caches, as on a stream that waits between events (the paced
// regime of the proxy's BenchmarkStream): before each event it writes over
// coldSpan bytes, and every 32 events the batch is drained, on another
// goroutine, as the Queue's own does. It reports the median time of the
// queueing alone (cold-p50-ns); ns/op means nothing here.
//
//	go test -run XXX -bench BenchmarkQueueEventCold -benchtime 20000x ./proxy/observe/
func BenchmarkQueueEventCold(b *testing.B) {
	q := NewQueue(Func(func(*Observation) {}))
	defer q.Close()
	o := progressEvent()
	e := o.Event
	flood := make([]byte, coldSpan)
	took := make([]time.Duration, 0, b.N)
	drained := make(chan struct{})
	b.ResetTimer()
	for i := range b.N {
		for j := range flood {
			flood[j] = byte(i + j)
		}
		e.Index = i
		e.ID = strconv.AppendInt(e.ID[:0:0], int64(i), 10)
		start := time.Now()
		q.Observe(o)
		took = append(took, time.Since(start))
		if i%32 == 31 {
			go func() { q.Drain(); drained <- struct{}{} }()
			<-drained
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "cold-p50-ns")
}

// coldSpan is what BenchmarkQueueEventCold writes between two events: more
// than the second-level caches hold.
const coldSpan = 4 << 20

// BenchmarkStageBurst measures what handing a read's burst of events to
// the Queue costs the stream, per event: each event staged as the proxy
// stages a progress notification delivered unchanged (its id and data
// parts of its raw bytes), the Stage committed every stageEvents events
// and given back at the end of the burst, as at a flush. The Queue's
// goroutine passes the events on meanwhile, on the other core.
//
//	go test -run XXX -bench BenchmarkStageBurst ./proxy/observe/
func BenchmarkStageBurst(b *testing.B) {
	q := NewQueue(Func(func(*Observation) {}))
	defer q.Close()
	o := progressEvent()
	e := o.Event
	e.DeliveredID, e.DeliveredHasID = e.ID, true
	const burst = 350 // the events of a 32 KiB read
	b.ResetTimer()
	for i := 0; i < b.N; {
		s := q.stage()
		for j := 0; j < burst && i < b.N; j, i = j+1, i+1 {
			e.Index = i
			s.Observe(o)
		}
		s.giveBack()
		q.Kick()
	}
}

// progressEvent is the observation of a progress notification as the
// proxy reports one delivered as it came: its id and data parts of its
// raw block, its method a part of its data.
func progressEvent() *Observation {
	raw := []byte(`id: 12345` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"seq":12345,"t":123456789}}` + "\n\n")
	e := &Event{}
	e.Raw, e.Parsed, e.ID, e.HasID, e.Dispatched = raw, true, raw[4:9], true, true
	e.Data = raw[16 : len(raw)-2]
	e.RPCKind, e.RPCMethod = mcp.RPCNotification, e.Data[28:50]
	e.Fate, e.Copies = Delivered, 1
	return &Observation{Kind: KindEvent, Exchange: 1, Session: "s", SessionSeq: 1, Protocol: "2025-11-25", Event: e}
}
