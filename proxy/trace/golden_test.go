package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenObservations are the sample observations and a seeded set of
// random ones with hostile texts (invalid UTF-8, controls, U+2028, long
// runs of quotes), in the order the golden trace holds them.
func goldenObservations() []*observe.Observation {
	r := rand.New(rand.NewPCG(1, 7))
	obs := sample()
	for range 60 {
		obs = append(obs, randomObservation(r))
	}
	return obs
}

// TestEncoderGolden pins the trace format byte for byte: the Writer must
// write testdata/golden.jsonl.gz, with and without the default redaction,
// as it did when the file was made (go test -run TestEncoderGolden
// ./proxy/trace/ -update rewrites it, for a change of format that bumps
// Version). fray check, fray replay, the timeline and users' tools read
// these bytes.
func TestEncoderGolden(t *testing.T) {
	obs := goldenObservations()
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var got bytes.Buffer
	for _, opts := range []WriterOptions{
		{Header: Header{Started: start}, NoRedact: true},
		{Header: Header{Started: start}, RedactHeaders: []string{"x-api-key", "mcp-session-id"}},
	} {
		got.Write(encodeAll(t, opts, obs))
	}
	for i, line := range bytes.SplitAfter(got.Bytes(), []byte("\n")) {
		if len(line) > 0 && !json.Valid(line) {
			t.Fatalf("line %d is not JSON: %q", i+1, line)
		}
	}
	path := filepath.Join("testdata", "golden.jsonl.gz")
	if *update {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(got.Bytes())
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, z.Bytes())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got.Bytes(), want) {
		return
	}
	gl, wl := strings.SplitAfter(got.String(), "\n"), strings.SplitAfter(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("line %d is\n%q\nthe golden trace has\n%q", i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%d lines, the golden trace has %d", len(gl), len(wl))
}
