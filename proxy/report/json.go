package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrSchema is wrapped by the errors of ReadJSON and Merge when a report is
// not of SchemaVersion.
var ErrSchema = errors.New("report schema")

// WriteJSON writes r as indented JSON followed by a newline. Lists that are
// empty are written as [] rather than null, so that a reader can always
// iterate over checks, faults and evidence.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(normalized(r)); err != nil {
		return fmt.Errorf("report: write JSON: %w", err)
	}
	return nil
}

// ReadJSON reads one JSON report. Fields it does not know are ignored (a
// newer fray of the same schema may add some); a report of another schema
// version is refused with an error wrapping ErrSchema.
func ReadJSON(rd io.Reader) (Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return Report{}, fmt.Errorf("report: read JSON: %w", err)
	}
	if r.Schema != SchemaVersion {
		if r.Schema == 0 {
			return Report{}, fmt.Errorf("report: read JSON: no \"schema\" field: not a fray report (%w %d expected)", ErrSchema, SchemaVersion)
		}
		return Report{}, fmt.Errorf("report: read JSON: %w version %d, this fray reads version %d", ErrSchema, r.Schema, SchemaVersion)
	}
	return normalized(r), nil
}

// normalized returns r with nil lists made empty; the checks are copied
// (none make an empty list), so r is not modified.
func normalized(r Report) Report {
	checks := make([]Check, len(r.Checks))
	copy(checks, r.Checks)
	for i := range checks {
		if checks[i].Evidence == nil {
			checks[i].Evidence = []Evidence{}
		}
	}
	r.Checks = checks
	if r.Faults == nil {
		r.Faults = []FaultCount{}
	}
	return r
}

// WriteFile writes a file through write, atomically: the bytes go to a
// temporary file in the same directory, which is synced and then renamed
// over path, so a reader sees the old file or the new one whole, never a
// part. The file gets mode 0644.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	steps := []func() error{
		func() error { return write(f) },
		func() error { return f.Chmod(0o644) },
		f.Sync,
		f.Close,
		func() error { return os.Rename(f.Name(), path) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("report: write %s: %w", path, err)
		}
	}
	return nil
}
