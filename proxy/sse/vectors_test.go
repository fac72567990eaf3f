package sse

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// vector is a case of the parsing note: the stream in the pieces one read
// each delivers, the data of the events dispatched and the last event id.
type vector struct {
	name   string
	pieces []string
	data   []string
	lastID string
	retry  int64
}

var vectors = []vector{
	{name: "1 CRLF split across reads",
		pieces: []string{"data: Hello\r", "\ndata: World\r", "\n\r\ndata: OK\r", "\n", "\r", "\n"},
		data:   []string{"Hello\nWorld", "OK"}},
	{name: "2 CR then CRLF", pieces: []string{"data: one\r", "\r", "\n"}, data: []string{"one"}},
	{name: "3 CR CR", pieces: []string{"data: a\r\r"}, data: []string{"a"}},
	{name: "4 mixed ends and bare data", pieces: []string{"data:test\r\ndata\ndata:test\r\n\r\n"},
		data: []string{"test\n\ntest"}},
	{name: "5 LF then CR", pieces: []string{"data: a\n\rdata: b\n\n"}, data: []string{"a", "b"}},
	{name: "6 CRLF then CR", pieces: []string{"data: a\r\n\rdata: b\r\n\r\n"}, data: []string{"a", "b"}},
	{name: "7 empty data", pieces: []string{"data:\n\ndata\ndata\n\ndata:test\n\n"},
		data: []string{"", "\n", "test"}},
	{name: "8 id with NUL ignored", pieces: []string{"id: 123\nid: bad\x00id\ndata: hello\n\n"},
		data: []string{"hello"}, lastID: "123"},
	{name: "9 bare id resets", pieces: []string{"id: 1\ndata: a\n\nid\n\ndata: b\n\n"},
		data: []string{"a", "b"}},
	{name: "10 type resets", pieces: []string{"event: foo\n\ndata: x\n\n"}, data: []string{"x"}},
	{name: "11 cut block discarded", pieces: []string{"data: a\n\ndata: b\n"}, data: []string{"a"}},
	{name: "12a retry leading zero", pieces: []string{"retry: 02000\n\n"}, retry: 2000},
	{name: "12b retry with letter", pieces: []string{"retry: 1000x\n\n"}},
	{name: "12c bare retry", pieces: []string{"retry\n\n"}},
	{name: "12d retry with sign", pieces: []string{"retry: +5\n\n"}},
	// The note lists vector 13 as "nothing dispatched", but its input has a
	// data line, and by the note's own rule (and vector 7) "data:" makes the
	// buffer "\n", which is dispatched as "". Browsers fire that event; an
	// MCP client skips it as a priming event.
	{name: "13 priming", pieces: []string{"id: 7\ndata:\n\n"}, data: []string{""}, lastID: "7"},

	// More cases in the manner of the web-platform-tests format-* tests.
	{name: "one space stripped", pieces: []string{"data:  two\ndata:\tt\n\n"}, data: []string{" two\n\tt"}},
	{name: "colon in value", pieces: []string{"data: a:b: c\n\n"}, data: []string{"a:b: c"}},
	{name: "comments and unknown fields", pieces: []string{": c\n:\nfoo: 1\n data: x\nDATA: y\ndata: z\n\n"},
		data: []string{"z"}},
	{name: "NUL kept in data", pieces: []string{"data: a\x00b\n\n"}, data: []string{"a\x00b"}},
	{name: "id kept across blocks", pieces: []string{"id: x\n\ndata: 1\n\ndata: 2\n\n"},
		data: []string{"1", "2"}, lastID: "x"},
	{name: "cut id not committed", pieces: []string{"id: 1\ndata: a\n\nid: 2\ndata: b\n"},
		data: []string{"a"}, lastID: "1"},
	{name: "cut retry applied", pieces: []string{"data: a\n\nretry: 5\nretry: 9"}, data: []string{"a"}, retry: 5},
	{name: "only comments", pieces: []string{":ping\r\n\r\n:ping\r\n\r\n"}},
	{name: "empty stream", pieces: []string{""}},
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		input := strings.Join(v.pieces, "")
		feeds := map[string]func() io.Reader{
			"pieces": func() io.Reader { return &piecesReader{pieces: append([]string(nil), v.pieces...)} },
			"whole":  func() io.Reader { return strings.NewReader(input) },
			"1-byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(input)) },
			"2-byte": func() io.Reader { return &chunkReader{data: []byte(input), sizes: []int{2}} },
		}
		for feed, src := range feeds {
			t.Run(v.name+"/"+feed, func(t *testing.T) {
				events, err := readAll(t, src(), 0)
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				if got := rawOf(events); got != input {
					t.Errorf("concatenated Raw = %q, want the input %q", got, input)
				}
				cv := clientView(events)
				var data []string
				for _, m := range cv.Msgs {
					data = append(data, m.Data)
				}
				if !reflect.DeepEqual(data, v.data) {
					t.Errorf("dispatched data = %q, want %q", data, v.data)
				}
				if cv.LastID != v.lastID {
					t.Errorf("last event id = %q, want %q", cv.LastID, v.lastID)
				}
				if cv.Retry != v.retry {
					t.Errorf("retry = %d, want %d", cv.Retry, v.retry)
				}
				if ref := refParse([]byte(input)); !reflect.DeepEqual(cv, ref) {
					t.Errorf("client view %+v, reference parser %+v", cv, ref)
				}
			})
		}
	}
}

func TestVectorDetails(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		ok          func(e []snap) bool
		want        string
	}{
		{"9 ids per message", "id: 1\ndata: a\n\nid\n\ndata: b\n\n", func(e []snap) bool {
			return reflect.DeepEqual(clientView(e).Msgs, []msg{{Type: "message", Data: "a", LastID: "1"}, {Type: "message", Data: "b", LastID: ""}})
		}, "message a with last id 1, then b with none"},
		{"10 type is message", "event: foo\n\ndata: x\n\n", func(e []snap) bool {
			return len(e) == 2 && !e[0].Dispatched && e[0].Type == "foo" && e[1].Type == ""
		}, "an undispatched foo block and an untyped x"},
		{"11 cut block", "data: a\n\ndata: b\n", func(e []snap) bool {
			return len(e) == 2 && !e[1].Complete && !e[1].Dispatched && e[1].Data == "b"
		}, "the cut block last, not complete, not dispatched"},
		{"13 priming", "id: 7\ndata:\n\n", func(e []snap) bool {
			return len(e) == 1 && e[0].Priming && !e[0].DataNil
		}, "one priming event with empty, non-nil data"},
		{"13 priming without data line", "id: 7\n\n", func(e []snap) bool {
			return len(e) == 1 && e[0].Priming && !e[0].Dispatched && e[0].DataNil
		}, "one undispatched priming event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if events, _ := readAll(t, strings.NewReader(tc.input), 0); !tc.ok(events) {
				t.Errorf("events = %+v, want %s", events, tc.want)
			}
		})
	}
}

// lastReader delivers its pieces and then fails the test if it is read
// again: a block ended by a CR at the end of a read must not wait for more.
type lastReader struct {
	t      *testing.T
	pieces []string
}

func (l *lastReader) Read(p []byte) (int, error) {
	if len(l.pieces) == 0 {
		l.t.Errorf("Read called again after the block's final CR was delivered")
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, l.pieces[0])
	l.pieces = l.pieces[1:]
	return n, nil
}

func TestCREndsBlockAtOnce(t *testing.T) {
	for _, pieces := range [][]string{
		{"data: a\r\r"},
		{"data: a\r", "\r"},
		{"d", "ata: a", "\r", "\r"},
		{"data: a\r\n\r"},
	} {
		r := NewReader(&lastReader{t: t, pieces: pieces}, 0)
		e, err := r.Next()
		if err != nil {
			t.Fatalf("%q: Next: %v", pieces, err)
		}
		if !e.Dispatched || string(e.Data) != "a" {
			t.Errorf("%q: got data %q dispatched=%v, want \"a\" dispatched", pieces, e.Data, e.Dispatched)
		}
		if got, want := string(e.Raw), strings.Join(pieces, ""); got != want {
			t.Errorf("%q: Raw = %q, want %q", pieces, got, want)
		}
	}
}

func TestSwallowedLFStartsNextRaw(t *testing.T) {
	r := NewReader(&piecesReader{pieces: []string{"data: a\r", "\r", "\ndata: b\n\n"}}, 0)
	var raws []string
	eachEvent(t, r, func(e *Event) {
		raws = append(raws, string(e.Raw))
		if e.prefix > 0 && !bytes.Equal(e.Lines[0].Raw, []byte("data: b\n")) {
			t.Errorf("first line after the LF = %q", e.Lines[0].Raw)
		}
	})
	want := []string{"data: a\r\r", "\ndata: b\n\n"}
	if !reflect.DeepEqual(raws, want) {
		t.Errorf("Raws = %q, want %q", raws, want)
	}
}
