package trace

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
)

// WriterOptions configures a Writer. The zero value writes a header with
// no profile and redacts DefaultRedact.
type WriterOptions struct {
	// Header is written as the first line; its Version and Redact are
	// filled in by the Writer.
	Header Header
	// RedactHeaders are header names redacted on top of DefaultRedact,
	// in any case.
	RedactHeaders []string
	// NoRedact keeps every header value, secrets included.
	NoRedact bool
}

// Writer is an observe.Observer that streams each observation to a trace
// as one JSON line. It buffers; Close (or Finish) flushes. It is safe for
// concurrent use. A write error is kept: later observations are
// discarded, and Err, Close and Finish return it.
type Writer struct {
	mu     sync.Mutex
	out    io.Writer
	closer []io.Closer // closed in order after the last flush
	red    redactor
	// e.b holds the lines not yet written to out: each observation is
	// encoded where it will be written from, with no copy in between.
	e     enc
	last  time.Duration
	count uint64
	err   error
	done  bool
}

var _ observe.Observer = (*Writer)(nil)

// Create creates (or truncates) the file at path and returns a Writer on
// it, gzip-compressed when path ends in ".gz". A file it creates gets mode
// 0600: a trace keeps session ids and, by default, the headers it does not
// redact. A file that exists keeps its mode.
func Create(path string, opts WriterOptions) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	var out io.Writer = f
	closers := []io.Closer{f}
	if strings.HasSuffix(path, ".gz") {
		zw := gzip.NewWriter(f)
		out = zw
		closers = []io.Closer{zw, f}
	}
	w, err := newWriter(out, opts, closers)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	return w, nil
}

// NewWriter returns a Writer that writes the header to out at once. Close
// flushes but does not close out.
func NewWriter(out io.Writer, opts WriterOptions) (*Writer, error) {
	return newWriter(out, opts, nil)
}

func newWriter(out io.Writer, opts WriterOptions, closers []io.Closer) (*Writer, error) {
	w := &Writer{out: out, closer: closers, red: redactor{names: map[string]bool{}}}
	w.e.b = make([]byte, 0, writeSize+4<<10)
	h := opts.Header
	h.Version = Version
	h.Redact = nil
	if !opts.NoRedact {
		for _, n := range append(append([]string(nil), DefaultRedact...), opts.RedactHeaders...) {
			c := http.CanonicalHeaderKey(strings.TrimSpace(n))
			if c != "" && !w.red.names[c] {
				w.red.names[c] = true
				h.Redact = append(h.Redact, c)
			}
		}
	}
	if w.red.names[sessionHeader] {
		w.red.sessions = map[string]string{}
	}
	w.writeHeader(&h)
	if len(w.e.b) >= writeSize {
		// A header with a long profile text is written at once, as a
		// buffered writer would.
		if _, err := out.Write(w.e.b); err != nil {
			return nil, err
		}
		w.e.b = w.e.b[:0]
	}
	return w, nil
}

// writeSize is what the Writer writes at a time, as a bufio.Writer of
// this size would: few system calls, each of a whole number of pages at
// an offset that is one too.
const writeSize = 64 << 10

// write writes the lines gathered so far to out: all of them, or, with
// all unset, as many times writeSize bytes as there are, keeping the
// rest. w.mu is held.
func (w *Writer) write(all bool) {
	n := len(w.e.b)
	if !all {
		n -= n % writeSize
	}
	if n == 0 {
		return
	}
	if _, err := w.out.Write(w.e.b[:n]); err != nil && w.err == nil {
		w.err = fmt.Errorf("trace: %w", err)
	}
	w.e.b = w.e.b[:copy(w.e.b, w.e.b[n:])]
}

func (w *Writer) writeHeader(h *Header) {
	e := &w.e
	e.open()
	e.int("fray_trace", int64(h.Version))
	started := h.Started
	if started.IsZero() {
		started = time.Now()
	}
	e.str("started", started.UTC().Format(time.RFC3339Nano))
	e.str("profile", h.Profile)
	e.uint("seed", h.Seed)
	e.str("profile_text", h.ProfileText)
	e.checks(h.Checks)
	if len(h.Redact) > 0 {
		e.strings("redact", h.Redact)
	}
	e.close()
	e.b = append(e.b, '\n')
}

// Observe writes o as one line.
func (w *Writer) Observe(o *observe.Observation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observe(o)
}

// ObserveRun writes a run of observations, a line each, in order, under
// one lock (observe.RunObserver).
func (w *Writer) ObserveRun(run []observe.Observation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range run {
		w.observe(&run[i])
	}
}

// observe writes o; w.mu is held.
func (w *Writer) observe(o *observe.Observation) {
	if w.err != nil || w.done {
		return
	}
	w.last = max(w.last, o.At)
	w.count++
	encodeObservation(&w.e, o, &w.red)
	w.e.b = append(w.e.b, '\n')
	w.write(false)
}

// Flush writes what is buffered to the file (through gzip's own buffer
// when compressed).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && !w.done {
		w.write(true)
	}
	return w.err
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close is Finish of a drained run at the time of the latest observation
// written.
func (w *Writer) Close() error {
	w.mu.Lock()
	at := w.last
	w.mu.Unlock()
	return w.Finish(End{At: at, Drained: true})
}

// Finish writes the end line, which records how the run ended, flushes and
// closes what Create opened. Observations after it are discarded; a second
// call returns the first one's result.
func (w *Writer) Finish(end End) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return w.err
	}
	w.done = true
	if w.err == nil {
		e := &w.e
		e.open()
		e.int("fray_trace_end", Version)
		e.int("at_us", end.At.Microseconds())
		e.uint("observations", w.count)
		e.flag("drained", end.Drained)
		if end.Command != nil {
			e.strings("command", end.Command)
			e.int("exit_code", int64(end.ExitCode))
			e.strNonEmpty("command_error", end.CommandError)
		}
		e.close()
		e.b = append(e.b, '\n')
		w.write(true)
	}
	w.e.b = nil
	var errs []error
	for _, c := range w.closer {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if w.err == nil && len(errs) > 0 {
		w.err = fmt.Errorf("trace: %w", errors.Join(errs...))
	}
	return w.err
}
