package trace

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
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
	mu  sync.Mutex
	out io.Writer
	// e.b holds the lines not yet written to out: each observation is
	// encoded where it will be written from, with no copy in between.
	closer []io.Closer // closed in order after the last flush
	red    redactor
	e      enc
	last   time.Duration
	count  uint64
	err    error
	done   bool
}

var _ observe.Observer = (*Writer)(nil)

// Create creates (or truncates) the file at path and returns a Writer on
// it, gzip-compressed when path ends in ".gz".
func Create(path string, opts WriterOptions) (*Writer, error) {
	f, err := os.Create(path)
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

// writeSize is how much the Writer gathers before it writes: few system
// calls, each of them large.
const writeSize = 64 << 10

// write writes the lines gathered so far to out; with all unset, only
// once there are writeSize bytes of them. w.mu is held.
func (w *Writer) write(all bool) {
	if len(w.e.b) == 0 || !all && len(w.e.b) < writeSize {
		return
	}
	if _, err := w.out.Write(w.e.b); err != nil && w.err == nil {
		w.err = fmt.Errorf("trace: %w", err)
	}
	w.e.b = w.e.b[:0]
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

// encodeObservation appends o as one JSON object.
func encodeObservation(e *enc, o *observe.Observation, red *redactor) {
	e.lit(`{"kind":`)
	e.name(o.Kind.String())
	e.lit(`,"at_us":`)
	e.b = strconv.AppendInt(e.b, o.At.Microseconds(), 10)
	e.exchangeHead(o.Exchange, o.Stream, red.session(o.Session), o.SessionSeq, o.Protocol)
	if len(o.Fired) > 0 {
		e.key("fired")
		e.b = append(e.b, '[')
		for i, f := range o.Fired {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.open()
			e.int("index", int64(f.Index))
			e.str("kind", f.Kind)
			e.strings("traits", f.Traits.Names())
			e.close()
		}
		e.b = append(e.b, ']')
	}
	switch {
	case o.Request != nil:
		encodeRequest(e, o.Request, red)
	case o.Response != nil:
		encodeResponse(e, o.Response, red)
	case o.Event != nil:
		encodeEvent(e, o.Event, red)
	case o.End != nil:
		encodeEnd(e, o.End)
	case o.Profile != nil:
		encodeProfile(e, o.Profile)
	}
	e.close()
}

func encodeProfile(e *enc, p *observe.ProfileChange) {
	e.object("profile")
	e.str("action", p.Action)
	e.str("name", p.Name)
	e.uint("seed", p.Seed)
	e.strNonEmpty("text", p.Text)
	if p.Action != observe.ProfileSwap {
		e.int("fault", int64(p.Fault))
	}
	e.int("faults", int64(p.Faults))
	e.checks(p.Checks)
	e.close()
}

func encodeRequest(e *enc, r *observe.Request, red *redactor) {
	e.object("request")
	e.str("method", r.Method)
	e.str("path", r.Path)
	if len(r.Header) > 0 {
		e.header("header", r.Header, red)
	}
	if r.HasLastEventID {
		e.str("last_event_id", r.LastEventID)
	}
	encodeMessages(e, r.Messages)
	if len(r.Cancels) > 0 {
		e.strings("cancels", r.Cancels)
	}
	a := &r.Action
	if a.Latency != 0 || a.Answered || a.Dropped || a.Hang || a.LastEventIDChanged || len(a.StrippedHeaders) > 0 || len(a.SetHeaders) > 0 {
		e.object("action")
		e.intNonZero("latency_us", a.Latency.Microseconds())
		e.flag("answered", a.Answered)
		e.flag("dropped", a.Dropped)
		e.flag("hang", a.Hang)
		e.flag("last_event_id_changed", a.LastEventIDChanged)
		if a.HasForwardedLastEventID {
			e.str("forwarded_last_event_id", a.ForwardedLastEventID)
		}
		if len(a.StrippedHeaders) > 0 {
			e.strings("stripped_headers", a.StrippedHeaders)
		}
		if len(a.SetHeaders) > 0 {
			set := make([]string, len(a.SetHeaders))
			for i, h := range a.SetHeaders {
				set[i] = h.Name + ": " + h.Value
			}
			e.strings("set_headers", set)
		}
		e.close()
	}
	e.close()
}

func encodeMessages(e *enc, ms []observe.Message) {
	if len(ms) == 0 {
		return
	}
	e.key("messages")
	e.b = append(e.b, '[')
	for i := range ms {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		m := &ms[i]
		e.open()
		e.str("kind", m.Kind.String())
		e.strNonEmpty("method", m.Method)
		e.strNonEmpty("id", m.ID)
		e.strNonEmpty("progress_token", m.ProgressToken)
		e.strNonEmpty("protocol", m.Protocol)
		if m.HasName {
			e.str("name", m.Name)
		}
		e.flag("name_unknown", m.NameUnknown)
		e.intNonZero("error_code", int64(m.ErrorCode))
		if m.Params != 0 {
			e.uint("params_digest", m.Params)
		}
		e.strNonEmpty("task_id", m.TaskID)
		e.intNonZero("poll_ms", m.PollMS)
		e.close()
	}
	e.b = append(e.b, ']')
}

func encodeResponse(e *enc, r *observe.Response, red *redactor) {
	e.object("response")
	e.int("status", int64(r.Status))
	e.str("origin", r.Origin.String())
	if len(r.Header) > 0 {
		e.header("header", r.Header, red)
	}
	e.flag("event_stream", r.EventStream)
	e.strNonEmpty("session", red.session(r.Session))
	e.intNonZero("throttle", int64(r.Throttle))
	e.intNonZero("close_after_us", r.CloseAfter.Microseconds())
	e.close()
}

// encodeEvent writes the members of an event, the most of a trace, with
// each member's name and punctuation as one constant: the event is never
// the first member of its observation, nor any member of the event but
// its index the first of the event.
func encodeEvent(e *enc, ev *observe.Event, red *redactor) {
	raw, delivered := ev.Raw, ev.Delivered
	if string(ev.Type) == "endpoint" {
		// A legacy endpoint's URL carries the session id in its query.
		raw = red.endpoint(raw)
		if delivered != nil {
			delivered = red.endpoint(delivered)
		}
	}
	e.lit(`,"event":{"index":`)
	e.b = strconv.AppendInt(e.b, int64(ev.Index), 10)
	e.bytesAs(`,"raw":`, `,"raw_b64":"`, raw)
	if ev.Parsed {
		e.lit(`,"parsed":true`)
	}
	if len(ev.Type) > 0 {
		e.bytesAs(`,"type":`, `,"type_b64":"`, ev.Type)
	}
	if ev.HasID {
		e.bytesAs(`,"id":`, `,"id_b64":"`, ev.ID)
	}
	if ev.HasRetry {
		e.lit(`,"retry":`)
		e.b = strconv.AppendInt(e.b, ev.Retry, 10)
	}
	if ev.Priming {
		e.lit(`,"priming":true`)
	}
	if ev.Dispatched {
		e.lit(`,"dispatched":true`)
	}
	if ev.RPCKind != 0 || len(ev.RPCMethod) > 0 || len(ev.RPCID) > 0 {
		e.lit(`,"message":{"kind":`)
		e.name(ev.RPCKind.String())
		if len(ev.RPCMethod) > 0 {
			e.bytesAs(`,"method":`, `,"method_b64":"`, ev.RPCMethod)
		}
		if len(ev.RPCID) > 0 {
			e.bytesAs(`,"id":`, `,"id_b64":"`, ev.RPCID)
		}
		e.lit("}")
	}
	e.lit(`,"fate":`)
	e.name(ev.Fate.String())
	if at := ev.DeliveredAt.Microseconds(); at != 0 {
		e.lit(`,"delivered_at_us":`)
		e.b = strconv.AppendInt(e.b, at, 10)
	}
	if delivered != nil {
		e.bytesAs(`,"delivered":`, `,"delivered_b64":"`, delivered)
	}
	if ev.DeliveredHasID {
		e.bytesAs(`,"delivered_id":`, `,"delivered_id_b64":"`, ev.DeliveredID)
	}
	if ev.DeliveredHasRetry {
		e.lit(`,"delivered_retry":`)
		e.b = strconv.AppendInt(e.b, ev.DeliveredRetry, 10)
	}
	if ev.Copies != 0 {
		e.lit(`,"copies":`)
		e.b = strconv.AppendInt(e.b, int64(ev.Copies), 10)
	}
	if ev.Corrupted {
		e.lit(`,"corrupted":true`)
	}
	e.lit("}")
}

func encodeEnd(e *enc, end *observe.End) {
	e.object("end")
	e.str("cause", end.Cause.String())
	encodeMessages(e, end.Messages)
	e.strNonEmpty("error", end.Error)
	e.close()
}
