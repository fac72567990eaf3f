package verify

import (
	"net/http"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestBoundedIDs: an observation whose ids are all short passes as it
// is, with no allocation; one with a long id, of any kind, passes as a
// copy with every long id replaced by its key, the original untouched.
func TestBoundedIDs(t *testing.T) {
	long := strings.Repeat("x", observe.MaxIDKey+1)
	key := observe.IDKey(long)
	short := &observe.Observation{Kind: observe.KindEvent, Session: "s-1",
		Event: &observe.Event{Event: mcp.Event{ID: []byte("7"), RPCID: []byte("1")}}}
	if bounded(short) != short {
		t.Error("an observation of short ids was copied")
	}
	if n := testing.AllocsPerRun(100, func() { _ = bounded(short) }); n != 0 {
		t.Errorf("bounded allocates %v times for short ids", n)
	}
	msgs := []observe.Message{{ID: long, Method: long, ProgressToken: long, Name: long, TaskID: long, Protocol: long}}
	for _, tc := range []struct {
		name string
		o    observe.Observation
		got  func(o *observe.Observation) []string
	}{
		{"session and protocol", observe.Observation{Kind: observe.KindEnd, Session: long, Protocol: long, End: &observe.End{}},
			func(o *observe.Observation) []string { return []string{o.Session, o.Protocol} }},
		{"event", observe.Observation{Kind: observe.KindEvent, Event: &observe.Event{Event: mcp.Event{ID: []byte(long), RPCID: []byte(long), RPCMethod: []byte(long)}, DeliveredID: []byte(long)}},
			func(o *observe.Observation) []string {
				e := o.Event
				return []string{string(e.ID), string(e.RPCID), string(e.RPCMethod), string(e.DeliveredID)}
			}},
		{"request", observe.Observation{Kind: observe.KindRequest, Request: &observe.Request{
			Header: http.Header{mcp.HeaderSession: {long}}, LastEventID: long, Messages: msgs, Cancels: []string{long},
			Action: observe.RequestAction{ForwardedLastEventID: long}}},
			func(o *observe.Observation) []string {
				q := o.Request
				m := q.Messages[0]
				return []string{q.Header.Get(mcp.HeaderSession), q.LastEventID, q.Cancels[0], q.Action.ForwardedLastEventID,
					m.ID, m.Method, m.ProgressToken, m.Name, m.TaskID, m.Protocol}
			}},
		{"response", observe.Observation{Kind: observe.KindResponse, Response: &observe.Response{Session: long, Header: http.Header{mcp.HeaderSession: {long}}}},
			func(o *observe.Observation) []string {
				return []string{o.Response.Session, o.Response.Header.Get(mcp.HeaderSession)}
			}},
		{"end", observe.Observation{Kind: observe.KindEnd, End: &observe.End{Messages: msgs}},
			func(o *observe.Observation) []string {
				m := o.End.Messages[0]
				return []string{m.ID, m.Method, m.ProgressToken}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			b := bounded(&o)
			if b == &o {
				t.Fatal("an observation with a long id passed as it is")
			}
			for i, s := range tc.got(b) {
				if s != key {
					t.Errorf("id %d is %d bytes, want its key", i, len(s))
				}
			}
			for i, s := range tc.got(&o) {
				if s != long {
					t.Errorf("the original's id %d was changed", i)
				}
			}
		})
	}
}
