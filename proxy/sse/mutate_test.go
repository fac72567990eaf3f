package sse

import (
	"reflect"
	"strings"
	"testing"
)

// mutateAll reads input, applies edit to every event and returns what
// AppendTo writes.
func mutateAll(t testing.TB, input string, sizes []int, edit func(*Event)) string {
	t.Helper()
	r := NewReader(&chunkReader{data: []byte(input), sizes: sizes}, 0)
	var out []byte
	eachEvent(t, r, func(e *Event) {
		edit(e)
		out = e.AppendTo(out)
	})
	return string(out)
}

func TestMutations(t *testing.T) {
	stripRetry := func(e *Event) { e.RemoveField("retry") }
	stripID := func(e *Event) { e.RemoveField("id") }
	set := func(name, value string) func(*Event) { return func(e *Event) { e.SetField(name, []byte(value)) } }
	tests := []struct {
		name  string
		input string
		edit  func(*Event)
		want  string
	}{
		{name: "strip retry", edit: stripRetry,
			input: "retry: 10\ndata: a\nretry\nretry:5\n\n",
			want:  "data: a\n\n"},
		{name: "strip retry keeps comments and similar names", edit: stripRetry,
			input: ":retry\nretryx: 1\nRetry: 2\n retry: 3\nretry\n\n",
			want:  ":retry\nretryx: 1\nRetry: 2\n retry: 3\n\n"},
		{name: "untouched blocks byte-identical", edit: stripRetry,
			input: "\xEF\xBB\xBF: c\r\nid: 1\r\ndata: x\r\n\r\nevent: e\rdata: y\r\r",
			want:  "\xEF\xBB\xBF: c\r\nid: 1\r\ndata: x\r\n\r\nevent: e\rdata: y\r\r"},
		{name: "strip id", edit: stripID,
			input: "id: 1\ndata: a\n\nid\n\n",
			want:  "data: a\n\n\n"},
		{name: "set retry replaces the first and removes the rest", edit: set("retry", "3000"),
			input: "data: a\r\nretry: 1\r\nid: 2\r\nretry\r\n\r\n",
			want:  "data: a\r\nretry: 3000\r\nid: 2\r\n\r\n"},
		{name: "set retry appends in the block's style", edit: set("retry", "5"),
			input: "data: a\r\n\r\ndata: b\rid: 1\n\r",
			want:  "data: a\r\nretry: 5\r\n\r\ndata: b\rid: 1\nretry: 5\r\r"},
		{name: "set retry on an empty block uses its end's style", edit: set("retry", "5"),
			input: "\r\n",
			want:  "retry: 5\r\n\r\n"},
		{name: "set data multi-line", edit: set("data", "x\ny\r\nz\r"),
			input: "event: e\ndata: a\ndata: b\nid: 1\n\n",
			want:  "event: e\ndata: x\ndata: y\ndata: z\ndata: \nid: 1\n\n"},
		{name: "set id cuts at a line end", edit: set("id", "7\ndata: injected"),
			input: "data: a\n\n",
			want:  "data: a\nid: 7\n\n"},
		{name: "BOM kept on the first block", edit: set("retry", "1"),
			input: "\xEF\xBB\xBFdata: a\n\n",
			want:  "\xEF\xBB\xBFdata: a\nretry: 1\n\n"},
		{name: "cut line stays last", edit: set("retry", "1"),
			input: "data: a\n\ndata: b\ndat",
			want:  "data: a\nretry: 1\n\ndata: b\nretry: 1\ndat"},
		{name: "bare CR before an LF end is kept a line end", edit: stripRetry,
			input: "data: a\rretry: 1\n\n",
			want:  "data: a\r\n\n"},
		{name: "swallowed LF prefix kept", edit: stripRetry,
			input: "data: a\r\r\nretry: 1\ndata: b\n\n",
			want:  "data: a\r\r\ndata: b\n\n"},
	}
	for _, tt := range tests {
		for _, sizes := range [][]int{nil, {1}, {2}} {
			got := mutateAll(t, tt.input, sizes, tt.edit)
			// The line-end style is that of the first line end seen, so a
			// CRLF split between reads may be written as CR; only whole
			// reads pin the bytes, the others must mean the same.
			if sizes == nil && got != tt.want {
				t.Errorf("%s: wrote %q, want %q", tt.name, got, tt.want)
			}
			if g, w := refParse([]byte(got)), refParse([]byte(tt.want)); !reflect.DeepEqual(g, w) {
				t.Errorf("%s (reads of %v): wrote %q, read by a client as %+v, want %+v", tt.name, sizes, got, g, w)
			}
		}
	}
}

func TestMutationUpdatesView(t *testing.T) {
	r := NewReader(strings.NewReader("id: 1\nretry: 5\ndata: a\ndata: b\nretry\n\n"), 0)
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if n := e.RemoveField("retry"); n != 2 || e.HasRetry || !e.Modified() {
		t.Errorf("RemoveField(retry) = %d, HasRetry %v, Modified %v; want 2, false, true", n, e.HasRetry, e.Modified())
	}
	if n := e.RemoveField("retry"); n != 0 {
		t.Errorf("second RemoveField(retry) = %d, want 0", n)
	}
	if n := e.RemoveField("id"); n != 1 || e.HasID || e.ID != nil {
		t.Errorf("RemoveField(id) = %d, HasID %v", n, e.HasID)
	}
	if string(e.Data) != "a\nb" || !e.Dispatched {
		t.Errorf("Data = %q, want %q", e.Data, "a\nb")
	}
	e.SetField("retry", []byte("250"))
	if !e.HasRetry || e.Retry != 250 {
		t.Errorf("after SetField(retry): HasRetry %v Retry %d", e.HasRetry, e.Retry)
	}
	e.SetField("data", e.Data) // Data aliases the Event's own scratch buffer
	if string(e.Data) != "a\nb" {
		t.Errorf("after SetField(data, Data): Data = %q", e.Data)
	}
	e.SetField("event", []byte("ping"))
	if string(e.Type) != "ping" {
		t.Errorf("Type = %q, want ping", e.Type)
	}
	if n := e.RemoveField("data"); n != 2 || e.Data != nil || e.Dispatched {
		t.Errorf("RemoveField(data) = %d, Data %q, Dispatched %v", n, e.Data, e.Dispatched)
	}
	e.SetField("id", []byte("9"))
	if !e.Priming() {
		t.Error("a block with an id and no data is not Priming")
	}
}

func TestSetFieldInvalidName(t *testing.T) {
	for _, name := range []string{"", "a:b", "a\nb", "a\r"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetField(%q) did not panic", name)
				}
			}()
			var e Event
			e.SetField(name, nil)
		}()
	}
}

func TestUnparsedIgnoresMutation(t *testing.T) {
	r := NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 16)
	e, err := r.Next()
	if err != nil || !e.Unparsed {
		t.Fatalf("Next = %+v, %v; want an Unparsed event", e, err)
	}
	raw := string(e.Raw)
	e.SetField("retry", []byte("1"))
	if e.RemoveField("data") != 0 || string(e.AppendTo(nil)) != raw {
		t.Error("a mutation changed an Unparsed event")
	}
}
