package observe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/sse"
)

// copyRecorder keeps a deep copy of every observation it is passed.
type copyRecorder struct{ got []Observation }

func (r *copyRecorder) Observe(o *Observation) {
	c := *o
	if o.Event != nil {
		e := cloneEvent(*o.Event)
		c.Event = &e
	}
	r.got = append(r.got, c)
}

// chunkBlocks is a chunk of five blocks: a request, a comment, an empty
// block, a priming event and a notification whose data spans two lines.
const chunkOfFive = "id: 4\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\"}\n\n" +
	": keep-alive\n\n" +
	"\n" +
	"id: 5\nretry: 250\ndata:\n\n" +
	"event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/progress\"}\n\n"

// wantBlocks is what a stream reports of the blocks of chunk, as the proxy
// builds each event's view (delivered as it came, read at at), written
// out here field by field from sse.Reader and jsonrpc.Scan.
func wantBlocks(t *testing.T, chunk string, index int, at time.Duration) []Event {
	t.Helper()
	r := sse.NewReader(strings.NewReader(chunk), 0)
	var want []Event
	for i := index; ; i++ {
		b, err := r.Next()
		if errors.Is(err, io.EOF) {
			return want
		}
		if err != nil {
			t.Fatal(err)
		}
		var e Event
		e.Index, e.Raw, e.Parsed = i, bytes.Clone(b.Raw), true
		e.Type, e.ID, e.HasID = bytes.Clone(b.Type), bytes.Clone(b.ID), b.HasID
		e.Retry, e.HasRetry, e.Priming, e.Dispatched = b.Retry, b.HasRetry, b.Priming(), b.Dispatched
		e.Data = bytes.Clone(b.Data)
		if b.Dispatched {
			m := jsonrpc.Scan(b.Data)
			e.RPCKind, e.RPCMethod, e.RPCID, e.Scanned = m.Kind, bytes.Clone(m.Method), bytes.Clone(m.ID), true
		}
		e.SinceStream, e.SinceRun = at-time.Second, at
		e.Fate, e.Copies, e.DeliveredAt = Delivered, 1, at
		e.DeliveredID, e.DeliveredHasID = bytes.Clone(b.ID), b.HasID
		e.DeliveredRetry, e.DeliveredHasRetry = b.Retry, b.HasRetry
		want = append(want, e)
	}
}

// chunkObservation is the observation a stream makes of chunk.
func chunkObservation(ex uint64, chunk string, index int, at time.Duration) *Observation {
	e := &Event{Fate: Delivered, Copies: 1, DeliveredAt: at}
	e.Index, e.Raw, e.SinceStream, e.SinceRun = index, []byte(chunk), at-time.Second, at
	return &Observation{Kind: KindEvent, At: at, Exchange: ex, Session: "s", Protocol: "2025-11-25", Event: e}
}

// TestQueueChunkPassesEachBlock: a chunk reaches the observer as the
// events of its blocks, each as the stream would have reported it, in its
// place among what was observed before and after it, queued or, when the
// batch has no room, passed on at once.
func TestQueueChunkPassesEachBlock(t *testing.T) {
	big := strings.Repeat("data: "+strings.Repeat("x", 1000)+"\n\n", queueBytes/1000+1)
	for _, tc := range []struct {
		name, chunk string
	}{
		{"queued", chunkOfFive},
		{"passed on at once", big},
		{"a block larger than a run's bytes", "data: " + strings.Repeat("y", chunkArena) + "\n\n" + chunkOfFive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &copyRecorder{}
			q := NewQueue(rec)
			defer q.Close()
			at := 3 * time.Second
			var before Event
			before.Index, before.Raw, before.Fate = 0, []byte("data: 1\n\n"), Delivered
			q.Observe(&Observation{Kind: KindEvent, Exchange: 1, Event: &before})
			q.ObserveChunk(chunkObservation(2, tc.chunk, 9, at))
			q.Observe(&Observation{Kind: KindRequest, Exchange: 3, Request: &Request{Method: "POST"}})

			want := wantBlocks(t, tc.chunk, 9, at)
			if len(rec.got) != len(want)+2 {
				t.Fatalf("%d observations, want %d: the event before, %d blocks, the request", len(rec.got), len(want)+2, len(want))
			}
			if rec.got[0].Exchange != 1 || rec.got[len(rec.got)-1].Kind != KindRequest {
				t.Fatalf("the chunk's events are not between the event before and the request after")
			}
			for i, w := range want {
				o := rec.got[1+i]
				if o.Kind != KindEvent || o.Exchange != 2 || o.At != at || o.Session != "s" || o.Protocol != "2025-11-25" {
					t.Fatalf("block %d: observation %+v, want the chunk's exchange, time and session", i, o)
				}
				if !reflect.DeepEqual(*o.Event, w) {
					t.Fatalf("block %d:\n got %+v\nwant %+v", i, *o.Event, w)
				}
			}
		})
	}
}

// TestQueueChunksGoOnInRuns: the events of queued chunks, one event each
// as from paced streams, go on to an observer that takes runs in runs, as
// queued events do, in the order queued, with the bytes of each.
func TestQueueChunksGoOnInRuns(t *testing.T) {
	runs := &runRecorder{}
	q := NewQueue(runs)
	defer q.Close()
	const n = 2*runLen + 3
	var want []string
	for i := range n {
		chunk := fmt.Sprintf("id: %d\ndata: %d\n\n", i, i)
		q.ObserveChunk(chunkObservation(uint64(i), chunk, 0, time.Second))
		want = append(want, fmt.Sprintf("%d event %s id=%d data=%d", i, chunk, i, i))
	}
	q.Drain()
	if got := runs.seen(); !slices.Equal(got, want) {
		t.Fatalf("the observer saw %q, want %q", got, want)
	}
	longest := 0
	for _, l := range runs.runs {
		longest = max(longest, l)
	}
	if longest < 2 || longest > runLen {
		t.Fatalf("runs of %v: want the chunks' events in runs of at most %d, not one at a time", runs.runs, runLen)
	}
}
