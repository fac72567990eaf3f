package trace

import (
	"strings"
	"testing"
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
		r, err := NewReader(strings.NewReader(src), "t.jsonl", ReadOptions{})
		if err != nil {
			t.Fatalf("format %s: %v", tc.version, err)
		}
		o, err := r.Next()
		if err != nil {
			t.Fatalf("format %s: %v", tc.version, err)
		}
		m := o.Request.Messages[0]
		if m.NameUnknown != tc.unknown || m.HasName {
			t.Errorf("format %s: NameUnknown %v, HasName %v; want %v, false", tc.version, m.NameUnknown, m.HasName, tc.unknown)
		}
	}
}
