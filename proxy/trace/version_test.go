package trace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// TestFormatOneNamesAreUnknown: a format 1 trace never recorded the name a
// request's body gives, so its requests read back with the name unknown;
// a format 2 trace's absent name means the body names none.
func TestFormatOneNamesAreUnknown(t *testing.T) {
	const request = `{"kind":"request","at_us":1500,"exchange":1,"stream":"post","protocol":"2026-07-28","request":{"method":"POST","path":"/mcp","header":{"Mcp-Name":["add"]},"messages":[{"kind":"request","method":"tools/call","id":"1"}]}}` + "\n"
	for _, tc := range []struct {
		version string
		unknown bool
	}{{"1", true}, {"2", false}} {
		src := `{"fray_trace":` + tc.version + `,"started":"2026-07-28T10:00:00Z"}` + "\n" + request
		_, o := firstOf(t, strings.NewReader(src), "format-"+tc.version+".jsonl")
		m := o.Request.Messages[0]
		if m.NameUnknown != tc.unknown || m.HasName {
			t.Errorf("format %s: NameUnknown %v, HasName %v; want %v, false", tc.version, m.NameUnknown, m.HasName, tc.unknown)
		}
	}
}

// TestFormatFourLeavesOutWhatIsFoundAgain: format 4 writes an event the
// proxy delivered as it came with no message, no delivered_at_us and no
// delivered_id, and a reader finds all three again; the same members
// absent from a format 3 line still mean no message, no delivery time and
// no id, as they did when it was written. A client that got no id where
// the event had one is said so.
func TestFormatFourLeavesOutWhatIsFoundAgain(t *testing.T) {
	obs := sample()
	note := obs[len(obs)-1]
	// obs[3]'s strip-id fault left the client no id.
	out := string(encodeAll(t, WriterOptions{NoRedact: true}, []*observe.Observation{note, obs[3]}))
	lines := strings.Split(out, "\n")
	for _, m := range []string{`"message"`, `"delivered_at_us"`, `"delivered_id"`} {
		if strings.Contains(lines[1], m) {
			t.Errorf("format 4 wrote %s for an event delivered as it came:\n%s", m, lines[1])
		}
	}
	if !strings.Contains(lines[2], `"delivered_no_id":true`) {
		t.Errorf("the event the client got with no id does not say so:\n%s", lines[2])
	}
	read := func(version string) *observe.Event {
		t.Helper()
		src := strings.Replace(out, fmt.Sprintf(`{"fray_trace":%d,`, Version), `{"fray_trace":`+version+`,`, 1)
		_, o := firstOf(t, strings.NewReader(src), "format-"+version+".jsonl")
		return o.Event
	}
	got, want := read("4"), note.Event
	if got.RPCKind != want.RPCKind || string(got.RPCMethod) != string(want.RPCMethod) || !got.Scanned ||
		got.DeliveredAt != want.DeliveredAt || string(got.DeliveredID) != string(want.DeliveredID) || !got.DeliveredHasID {
		t.Errorf("format 4 read back kind %v method %q scanned %v, delivered at %v with id %q (%v); want %v %q true, %v with %q (true)",
			got.RPCKind, got.RPCMethod, got.Scanned, got.DeliveredAt, got.DeliveredID, got.DeliveredHasID,
			want.RPCKind, want.RPCMethod, want.DeliveredAt, want.DeliveredID)
	}
	old := read("3")
	if old.RPCKind != mcp.RPCNone || old.Scanned || old.DeliveredAt != 0 || old.DeliveredHasID {
		t.Errorf("the same line in format 3 read as kind %v scanned %v, delivered at %v, with an id %v; want none of them",
			old.RPCKind, old.Scanned, old.DeliveredAt, old.DeliveredHasID)
	}
}
