package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/frayproxy/fray/proxy/observe"
)

// fuzzName is the file name FuzzReader's traces are read under.
const fuzzName = "fuzz.jsonl"

// FuzzReader reads any bytes as a trace, plain or gzip-compressed, whole or
// partial. For every input: no panic; every error is an *Error that names
// the file (and, past the header, the line), and Next keeps returning it;
// no more observations than lines; and what was read, written again and
// read back, is the same observations.
func FuzzReader(f *testing.F) {
	whole := encodeAll(f, WriterOptions{Header: testHeader, NoRedact: true}, sample())
	f.Add(whole, false, false)
	f.Add(whole, true, true)
	f.Add(whole[:len(whole)*2/3], false, true)
	f.Fuzz(func(t *testing.T, data []byte, zip, partial bool) {
		input := data
		if zip {
			input = gzipped(data)
		}
		obs, err := readTrace(t, input, partial)
		if err != nil {
			return
		}
		if lines := bytes.Count(data, []byte("\n")) + 1; len(obs) > lines {
			t.Fatalf("%d observations from %d lines", len(obs), lines)
		}
		again := encodeAll(t, WriterOptions{NoRedact: true}, obs)
		back, err := readTrace(t, again, false)
		if err != nil {
			t.Fatalf("a trace written from what was read does not read back: %v\n%s", err, again)
		}
		if len(back) != len(obs) {
			t.Fatalf("%d observations read back, %d written", len(back), len(obs))
		}
		for i := range obs {
			if !reflect.DeepEqual(back[i], obs[i]) {
				t.Fatalf("observation %d read back as\n%s\nwritten as\n%s", i, dump(back[i]), dump(obs[i]))
			}
		}
	})
}

// readTrace reads every observation of input, checking the shape of any
// error on the way.
func readTrace(t *testing.T, input []byte, partial bool) ([]*observe.Observation, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(input), fuzzName, ReadOptions{Partial: partial})
	if err != nil {
		checkError(t, err, 0)
		return nil, err
	}
	var obs []*observe.Observation
	for {
		o, err := r.Next()
		if err == io.EOF {
			return obs, nil
		}
		if err != nil {
			checkError(t, err, 1)
			if _, again := r.Next(); again != err {
				t.Fatalf("error %v, then %v: not sticky", err, again)
			}
			return nil, err
		}
		if o == nil {
			t.Fatal("Next returned neither an observation nor an error")
		}
		obs = append(obs, o)
	}
}

// checkError requires an *Error naming the file, at least at minLine.
func checkError(t *testing.T, err error, minLine int) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if te.File != fuzzName || !strings.Contains(err.Error(), fuzzName) || te.Line < minLine || te.Err == nil {
		t.Fatalf("error %q: file %q, line %d, sentinel %v", err, te.File, te.Line, te.Err)
	}
}

// readFrom reads the trace src, named name, to its end, failing t on any
// error; it returns the Reader too, for its End.
func readFrom(t testing.TB, src io.Reader, name string) (*Reader, []*observe.Observation) {
	t.Helper()
	r, err := NewReader(src, name, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var obs []*observe.Observation
	for {
		o, err := r.Next()
		if err == io.EOF {
			return r, obs
		}
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o)
	}
}

// firstOf reads the trace src, named name, to its first observation,
// failing t when it cannot; it returns the Reader too, to read on.
func firstOf(t testing.TB, src io.Reader, name string) (*Reader, *observe.Observation) {
	t.Helper()
	r, err := NewReader(src, name, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return r, o
}

// gzipped is b gzip-compressed.
func gzipped(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return z.Bytes()
}

// writerTo is NewWriter(out, opts), failing tb when it cannot make one.
func writerTo(tb testing.TB, out io.Writer, opts WriterOptions) *Writer {
	tb.Helper()
	w, err := NewWriter(out, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// encodeAll writes obs through a Writer made with opts and returns the
// trace it wrote, closed.
func encodeAll(tb testing.TB, opts WriterOptions, obs []*observe.Observation) []byte {
	tb.Helper()
	var b bytes.Buffer
	w := writerTo(tb, &b, opts)
	for _, o := range obs {
		w.Observe(o)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
