package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
)

// The ways a trace can be unreadable; an *Error wraps one of them.
var (
	// ErrNotTrace: the file is not a fray trace (no header line).
	ErrNotTrace = errors.New("not a fray trace")
	// ErrNewer: the trace's format version is newer than Version.
	ErrNewer = errors.New("trace format newer than this fray reads")
	// ErrTruncated: the trace stops before its end line: the last line is
	// cut, the gzip stream is cut, or the file simply stops.
	ErrTruncated = errors.New("truncated trace")
	// ErrSyntax: a line is not what the format says.
	ErrSyntax = errors.New("malformed trace line")
)

// Error is a problem with a trace, at a line.
type Error struct {
	// File is the name the Reader was given; Line counts from 1 (0 when
	// the problem is with no particular line).
	File string
	Line int
	// Msg says what is wrong; Err is one of the sentinel errors above.
	Msg string
	Err error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("trace %s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("trace %s: %s", e.File, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ReadOptions configures a Reader. The zero value refuses a truncated
// trace.
type ReadOptions struct {
	// Partial reads a truncated trace up to its last complete line and
	// reports what was dropped (Reader.Truncation) instead of failing.
	Partial bool
}

// Truncation says what a partial read of a truncated trace left out.
type Truncation struct {
	// Line is the line that was cut (0 when the trace stops at a line
	// boundary), Bytes how much of it was there and dropped.
	Line  int
	Bytes int
	// Why says how the trace ends.
	Why string
	// Observations counts the complete observations read.
	Observations uint64
}

func (t *Truncation) String() string {
	if t.Line > 0 {
		return fmt.Sprintf("%s; dropped the incomplete line %d (%d bytes) and whatever came after it; read %d observations",
			t.Why, t.Line, t.Bytes, t.Observations)
	}
	return fmt.Sprintf("%s; whatever came after it is lost; read %d observations", t.Why, t.Observations)
}

// maxHeaderLine bounds the first line, which holds the profile's text (at
// most 1 MiB, escaped); a longer first line is not a trace's header.
const maxHeaderLine = 8 << 20

// MaxLine bounds a trace line: an event block of up to the proxy's largest
// block size, written twice (as received and as delivered), escaped.
const MaxLine = 64 << 20

// Reader reads a trace back into observations, in the order they were
// written. It is not safe for concurrent use.
type Reader struct {
	name   string
	opts   ReadOptions
	br     *bufio.Reader
	closer io.Closer
	line   int
	long   []byte
	header Header
	count  uint64
	end    End
	last   time.Duration // latest observation time read
	ended  bool
	trunc  *Truncation
	err    error // sticky: io.EOF or the error returned
}

// Open opens the trace at path (gzip-compressed or not, whatever its
// name) and reads its header.
func Open(path string, opts ReadOptions) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r, err := newReader(f, path, opts, f)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return r, nil
}

// NewReader reads a trace from src, gzip-compressed or not; name is the
// file name used in errors. It reads the header line before returning.
func NewReader(src io.Reader, name string, opts ReadOptions) (*Reader, error) {
	return newReader(src, name, opts, nil)
}

func newReader(src io.Reader, name string, opts ReadOptions, closer io.Closer) (*Reader, error) {
	r := &Reader{name: name, opts: opts, closer: closer}
	br := bufio.NewReaderSize(src, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return nil, r.errorf(1, ErrTruncated, "the gzip stream is cut before its first line")
			}
			return nil, r.errorf(0, ErrNotTrace, "not a fray trace: gzip: %v", err)
		}
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	r.br = br
	if err := r.readHeader(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reader) errorf(line int, sentinel error, format string, args ...any) *Error {
	return &Error{File: r.name, Line: line, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.header }

// End returns how the end line says the run ended, and whether the end
// line has been read (Next returned io.EOF on a complete trace).
func (r *Reader) End() (End, bool) { return r.end, r.ended }

// Truncation says what a partial read dropped; nil when the trace was
// complete or has not been read to its end.
func (r *Reader) Truncation() *Truncation { return r.trunc }

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// readLine returns the next line without its line end. complete is false
// for a last line with no line end; err is io.EOF at a clean end of the
// input, or the input's error.
func (r *Reader) readLine(limit int) (line []byte, complete bool, err error) {
	r.long = r.long[:0]
	for {
		b, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.long = append(r.long, b...)
			if len(r.long) > limit {
				return r.long, false, errTooLong
			}
			continue
		}
		if len(r.long) > 0 {
			r.long = append(r.long, b...)
			b = r.long
		}
		if err == nil {
			return b[:len(b)-1], true, nil
		}
		return b, false, err
	}
}

var errTooLong = errors.New("line too long")

func (r *Reader) readHeader() error {
	line, complete, err := r.readLine(maxHeaderLine)
	r.line = 1
	switch {
	case errors.Is(err, errTooLong):
		return r.errorf(0, ErrNotTrace, "not a fray trace: the first %d bytes hold no line", maxHeaderLine)
	case err != nil && err != io.EOF:
		if len(line) == 0 && isCut(err) {
			return r.errorf(1, ErrTruncated, "the gzip stream is cut before its first line")
		}
		if !isCut(err) {
			return r.errorf(1, ErrNotTrace, "reading: %v", err)
		}
	case len(line) == 0 && !complete:
		return r.errorf(0, ErrNotTrace, "not a fray trace: the file is empty")
	}
	var h wireHeader
	if jerr := json.Unmarshal(line, &h); jerr != nil || h.Version == nil {
		if !complete && bytes.HasPrefix(line, []byte(`{"fray_trace":`)) {
			return r.errorf(1, ErrTruncated, "the header line is cut after %d bytes", len(line))
		}
		return r.errorf(1, ErrNotTrace, "not a fray trace: the first line is not a {\"fray_trace\": N, ...} header")
	}
	switch v := *h.Version; {
	case v > Version:
		return r.errorf(1, ErrNewer, "trace format version %d is newer than this fray reads (up to %d); use a newer fray", v, Version)
	case v < 1:
		return r.errorf(1, ErrNotTrace, "not a fray trace: format version %d", v)
	}
	started, perr := time.Parse(time.RFC3339Nano, h.Started)
	if perr != nil {
		return r.errorf(1, ErrSyntax, "started %q is not an RFC 3339 time", h.Started)
	}
	sev, serr := decodeChecks(h.Checks)
	if serr != nil {
		return r.errorf(1, ErrSyntax, "header %v", serr)
	}
	r.header = Header{Version: *h.Version, Started: started, Profile: h.Profile, Seed: h.Seed, ProfileText: h.ProfileText, Checks: sev, Redact: h.Redact}
	if !complete {
		// A header and nothing else, not even its line end.
		return r.truncated(0, 0, "the trace stops after its header line", err)
	}
	return nil
}

// isCut reports whether err means the input stopped early: a gzip stream
// without its end.
func isCut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader)
}

// truncated ends the read of a truncated trace: an error, or with Partial
// a clean end and a Truncation.
func (r *Reader) truncated(line, dropped int, why string, cause error) error {
	if cause != nil && cause != io.EOF && isCut(cause) {
		why += " (" + cause.Error() + ")"
	}
	if !r.opts.Partial {
		if line > 0 {
			r.err = r.errorf(line, ErrTruncated, "%s: line %d is cut after %d bytes", why, line, dropped)
		} else {
			r.err = r.errorf(r.line, ErrTruncated, "%s", why)
		}
		return r.err
	}
	r.trunc = &Truncation{Line: line, Bytes: dropped, Why: why, Observations: r.count}
	r.err = io.EOF
	return nil
}

// Next returns the next observation, freshly allocated (the caller may
// keep it), or io.EOF after the end line. Any other error is an *Error
// naming the file and line; Next keeps returning it.
func (r *Reader) Next() (*observe.Observation, error) {
	for r.err == nil {
		if o := r.step(); o != nil {
			return o, nil
		}
	}
	return nil, r.err
}

// step reads one line: it returns an observation, or nil after reading the
// end line, a blank line, or when the read is over (r.err set).
func (r *Reader) step() *observe.Observation {
	line, complete, err := r.readLine(MaxLine)
	r.line++
	switch {
	case errors.Is(err, errTooLong):
		r.err = r.errorf(r.line, ErrSyntax, "longer than %d bytes", MaxLine)
		return nil
	case err != nil && err != io.EOF && !isCut(err):
		r.err = r.errorf(r.line, ErrSyntax, "reading: %v", err)
		return nil
	case !complete:
		return r.lastLine(line, err)
	case len(bytes.TrimSpace(line)) == 0:
		return nil
	}
	return r.parse(line)
}

// lastLine handles input that stops without a line end: a clean stop
// after the end line, a last line whole but for its line end, or a cut.
func (r *Reader) lastLine(line []byte, cause error) *observe.Observation {
	cut := isCut(cause)
	if len(line) == 0 {
		r.line--
		switch {
		case r.ended && !cut:
			r.err = io.EOF
		case cut:
			_ = r.truncated(0, 0, "the gzip stream is cut", cause)
		default:
			_ = r.truncated(0, 0, "the trace stops before its end line", nil)
		}
		return nil
	}
	if !cut && json.Valid(line) {
		return r.parse(line)
	}
	why := "the last line is cut"
	if cut {
		why = "the gzip stream is cut"
	}
	_ = r.truncated(r.line, len(line), why, cause)
	return nil
}

// parse decodes one complete line: an observation, or nil for the end
// line or an error (r.err set).
func (r *Reader) parse(line []byte) *observe.Observation {
	if r.ended {
		r.err = r.errorf(r.line, ErrSyntax, "a line after the end line")
		return nil
	}
	var w wireObs
	if err := json.Unmarshal(line, &w); err != nil {
		// A header's members do not fit an observation's: say what the
		// line is rather than which member did not fit.
		var h wireHeader
		if json.Unmarshal(line, &h) == nil && h.Version != nil {
			r.err = r.errorf(r.line, ErrSyntax, "a second header line")
			return nil
		}
		r.err = r.errorf(r.line, ErrSyntax, "not a JSON object: %v", err)
		return nil
	}
	switch {
	case w.EndMark != nil:
		var h wireHeader
		_ = json.Unmarshal(line, &h)
		if h.Observations != r.count {
			r.err = r.errorf(r.line, ErrSyntax, "the end line counts %d observations, the trace holds %d", h.Observations, r.count)
			return nil
		}
		r.ended = true
		r.end = End{At: time.Duration(h.AtUS) * time.Microsecond, Drained: h.Drained, Command: h.Command, ExitCode: h.ExitCode, CommandError: h.CommandError}
		return nil
	case w.Version != nil:
		r.err = r.errorf(r.line, ErrSyntax, "a second header line")
		return nil
	}
	o, err := decodeObservation(&w, r.header.Version)
	if err != nil {
		r.err = r.errorf(r.line, ErrSyntax, "%v", err)
		return nil
	}
	if r.header.Version < versionNames && o.Request != nil {
		// Format 1 did not record the name a request's body gives: its
		// absence there says nothing about the body.
		for i := range o.Request.Messages {
			o.Request.Messages[i].NameUnknown = true
		}
	}
	r.count++
	r.last = max(r.last, o.At)
	return o
}

// Trace is a whole trace read into memory.
type Trace struct {
	Header       Header
	Observations []*observe.Observation
	// End is how the run ended: the end line's, or for a partial read the
	// latest observation's time, not drained (the run did not end well).
	End End
	// Truncation is what a partial read dropped; nil for a complete trace.
	Truncation *Truncation
}

// ReadFile reads every observation of the trace at path.
func ReadFile(path string, opts ReadOptions) (*Trace, error) {
	r, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t := &Trace{Header: r.Header()}
	for {
		o, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		t.Observations = append(t.Observations, o)
	}
	t.Truncation = r.Truncation()
	t.End = End{At: r.last}
	if end, ok := r.End(); ok {
		t.End = end
	}
	return t, nil
}
