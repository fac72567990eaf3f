package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/frayproxy/fray/proxy/report"
)

func TestJSONRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.json", buf.Bytes())
	got, err := report.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()
	for i := range want.Checks {
		if want.Checks[i].Evidence == nil {
			want.Checks[i].Evidence = []report.Evidence{}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, want)
	}
}

// TestJSONEmptyListsAreArrays: a reader can iterate without nil checks.
func TestJSONEmptyListsAreArrays(t *testing.T) {
	r := report.Report{Schema: report.SchemaVersion, Verdict: report.VerdictPass,
		Checks: []report.Check{{ID: "a.b", Status: report.StatusSkip}}}
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["faults"].([]any); !ok {
		t.Errorf("faults = %#v, want an empty array", raw["faults"])
	}
	ev := raw["checks"].([]any)[0].(map[string]any)["evidence"]
	if _, ok := ev.([]any); !ok {
		t.Errorf("evidence = %#v, want an empty array", ev)
	}
	if r.Checks[0].Evidence != nil {
		t.Error("WriteJSON modified its argument")
	}
	if !strings.Contains(buf.String(), "\n  \"verdict\": \"pass\"") {
		t.Errorf("not indented:\n%s", buf.String())
	}
}

func TestReadJSONRefusesOtherSchemas(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"newer", `{"schema": 2, "verdict": "pass"}`, "version 2, this fray reads version 1"},
		{"none", `{"verdict": "pass"}`, "not a fray report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := report.ReadJSON(strings.NewReader(tc.in))
			if !errors.Is(err, report.ErrSchema) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrSchema saying %q", err, tc.want)
			}
		})
	}
	if _, err := report.ReadJSON(strings.NewReader(`{"schema": 1,`)); err == nil {
		t.Error("a truncated report was read")
	}
}

func TestReadJSONIgnoresNewFields(t *testing.T) {
	r, err := report.ReadJSON(strings.NewReader(`{"schema": 1, "verdict": "fail", "shiny": [1]}`))
	if err != nil || r.Verdict != report.VerdictFail {
		t.Fatalf("got %+v, %v", r, err)
	}
}

// TestWriteFileIsAtomic rewrites a report many times while readers read
// it: every read must see a whole report, the old or the new one.
func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	big := sample()
	for range 200 {
		big.Checks = append(big.Checks, big.Checks[0])
	}
	write := func(r report.Report) error {
		return report.WriteFile(path, func(w io.Writer) error { return report.WriteJSON(w, r) })
	}
	if err := write(big); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 1)
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			f, err := os.Open(path)
			if err != nil {
				errs <- err
				return
			}
			_, err = report.ReadJSON(f)
			f.Close()
			if err != nil {
				errs <- err
				return
			}
		}
	})
	for i := range 50 {
		big.DurationMS = int64(i)
		if err := write(big); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("a reader saw a broken report: %v", err)
	default:
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", info.Mode(), err)
	}
}

func TestWriteFileKeepsOldFileOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := report.WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("boom")
	})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("file now %q, want the old content", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileNamesAMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "r.json")
	err := report.WriteFile(path, func(io.Writer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming %s", err, path)
	}
}
