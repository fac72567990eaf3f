package verify

import (
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
)

// TestEventHash: the hash of an event's joined data equals the hash of
// its raw block, whatever its line ends and data lines, so a corrupted
// event (hashed from its block) and its replay (from its data) agree.
func TestEventHash(t *testing.T) {
	for _, tt := range []struct{ raw, data string }{
		{"id: 1\ndata: {\"a\":1}\n\n", `{"a":1}`},
		{"data:x\r\ndata: y\r\nid: 2\r\n\r\n", "x\ny"},
		{"data\rdata:  z\r\r", "\n z"},
		{"\xef\xbb\xbfdata: bom\n\n", "bom"},
		{": comment\nid: 3\n\n", ""},
		{"data:\ndata:\n\n", "\n"},
	} {
		live := eventHash(hashEvent(tt.data, "", false))
		raw := eventHash(hashEvent("rewritten", tt.raw, true))
		if live != raw {
			t.Errorf("%q: the hash of its data %q and of its block differ", tt.raw, tt.data)
		}
	}
	if eventHash(hashEvent("a", "", false)) == eventHash(hashEvent("b", "", false)) {
		t.Error("different data, same hash")
	}
}

func hashEvent(data, raw string, corrupted bool) *observe.Event {
	e := &observe.Event{Corrupted: corrupted}
	e.Data, e.Raw = []byte(data), []byte(raw)
	return e
}
