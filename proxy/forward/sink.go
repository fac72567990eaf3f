package forward

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/sse"
)

// sink is a stream's client side, the stage of its pipeline that carries
// out a decision: it writes an event (gathered, through the throttle, in
// fragments, with copies and noise), delays or stalls it, keeps it back
// (the buffer fault), drops it, or ends the client's side (close, reset).
// Before any byte leaves for the client, and before the stream waits, it
// flushes the recorder: an observer has every event before the client can
// act on it (resume, send DELETE), and this is the one place that rule
// lives.
type sink struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	ctx context.Context // the client's request
	// cancel ends the upstream request.
	cancel context.CancelCauseFunc
	clock  Clock
	rec    *recorder
	// rd is the stream's reader: the gathering buffer is as large as one
	// of its reads.
	rd       *sse.Reader
	maxBlock int

	gather  *[]byte // written since the last flush (gather.go)
	pending bool    // written to the client since the last flush
	lim     *rate.Limiter
	sleeper sleeper
	// buffered are the bytes a buffer fault keeps back; buffering says
	// the event being written is to be kept back too.
	buffered  []byte
	buffering bool
	// holding: the client's side ended by a fault that holds the
	// upstream's stream (hold.go): the upstream request goes on.
	holding bool
	// abort: the client's HTTP/2 stream is to be reset by aborting the
	// handler, once the stream's events and end have been observed.
	abort bool
	// out holds an event as modified; scratch, a field's new value.
	out, scratch []byte
}

// outcome is what carrying out a decision did to one event: the one place
// an event's fate is decided.
type outcome struct {
	fate      observe.Fate
	copies    int
	corrupted bool
	// waited: fray waited (a delay, a stall, the throttle) before the
	// event went out, so it left later than it came.
	waited bool
	// goOn: the stream goes on after the event.
	goOn bool
	// buffered: a buffer fault keeps the event back; it is reported
	// when it leaves.
	buffered bool
	// written is the event as the client got it, when fray modified it.
	written []byte
}

// carry carries out act on e, the current event, and returns what came of
// it.
func (s *sink) carry(e *sse.Event, act *faults.EventAction) outcome {
	if act.StallForever {
		s.cancel(errFaultClosed)
		_ = s.flush()
		<-s.ctx.Done()
		return outcome{fate: observe.Stalled}
	}
	waited := act.Stall+act.Delay > 0
	if waited && !s.wait(act.Stall+act.Delay) {
		return outcome{fate: observe.Undelivered, waited: true}
	}
	if act.Hold && (act.Close != faults.CloseNone || act.Lose > 0) {
		s.holding = true
	}
	switch act.Close {
	case faults.CloseBefore:
		s.closeByFault()
		return outcome{fate: observe.Cut, waited: waited}
	case faults.CloseReset:
		s.reset()
		return outcome{fate: observe.Cut, waited: waited}
	}
	if act.Lose > 0 {
		// Taken away as if lost on a dying connection; after the last
		// one the client's side is closed.
		if act.Lose == 1 {
			s.closeByFault()
			return outcome{fate: observe.Lost, waited: waited}
		}
		return outcome{fate: observe.Lost, waited: waited, goOn: true}
	}
	if act.Drop {
		return outcome{fate: observe.Dropped, waited: waited, goOn: true}
	}
	s.mutate(e, act)
	s.buffering = act.Buffer
	out := s.deliver(e, act.Fragment, act.Duplicate, act.Noise)
	s.buffering = false
	out.buffered = act.Buffer && out.fate == observe.Delivered
	out.waited = out.waited || waited
	out.corrupted = act.Corrupt && len(e.Data) > 0
	if out.goOn && act.Close == faults.CloseAfter {
		s.closeByFault()
		out.goOn = false
	}
	return out
}

// deliver writes noise comment blocks, then the event 1+dup times.
// What fray inserts goes between whole blocks: after the event's prefix
// (the stream's BOM, or the LF that completes the previous block's CR),
// written once, and, between copies of a CRLF block dispatched at its CR,
// after the LF that completes it. So a client reads the same events, plus
// the noise and the copies, whatever parser it uses.
func (s *sink) deliver(e *sse.Event, fragment, dup, noise int) outcome {
	out := outcome{fate: observe.Delivered, goOn: true}
	b := e.Raw
	if e.Modified() {
		s.out = e.AppendTo(s.out[:0])
		b, out.written = s.out, s.out
	}
	if noise > 0 || dup > 0 {
		pre := e.Prefix()
		ok, w := s.write(b[:pre], 0)
		out.waited = out.waited || w
		nb := noiseBlock(e)
		for i := 0; ok && i < noise; i++ {
			ok, w = s.write(nb, 0)
			out.waited = out.waited || w
		}
		if !ok {
			return outcome{fate: observe.Undelivered, waited: out.waited}
		}
		b = b[pre:]
	}
	for i := range 1 + dup {
		if i > 0 && e.CRLF() && len(b) > 0 && b[len(b)-1] == '\r' {
			ok, w := s.write(lf, 0)
			out.waited = out.waited || w
			if !ok {
				out.goOn = false
				return out
			}
		}
		ok, w := s.write(b, fragment)
		out.waited = out.waited || w
		if !ok {
			if out.copies == 0 {
				out.fate = observe.Undelivered
			}
			out.goOn = false
			return out
		}
		out.copies++
	}
	return out
}

// passRaw writes bytes fray does not parse as they came.
func (s *sink) passRaw(b []byte) outcome {
	if ok, _ := s.write(b, 0); !ok {
		return outcome{fate: observe.Undelivered}
	}
	return outcome{fate: observe.Delivered, copies: 1, goOn: true}
}

// mutate applies the field changes of a decision to e.
func (s *sink) mutate(e *sse.Event, act *faults.EventAction) {
	if act.StripRetry {
		e.RemoveField("retry")
	}
	if act.StripID {
		e.RemoveField("id")
	}
	if act.HasSetRetry {
		s.scratch = strconv.AppendInt(s.scratch[:0], act.SetRetry, 10)
		e.SetField("retry", s.scratch)
	}
	if act.RewriteID != nil {
		e.SetField("id", act.RewriteID)
	}
	if act.Corrupt && len(e.Data) > 0 {
		// Half the JSON and a stray brace: no JSON parser accepts it, and
		// the event is still a well-formed SSE block.
		s.scratch = append(append(s.scratch[:0], e.Data[:len(e.Data)/2]...), "}{"...)
		e.SetField("data", s.scratch)
	}
}

// The comment blocks keepalive-noise writes, one per line-end style.
var (
	noiseLF   = []byte(": keepalive\n\n")
	noiseCRLF = []byte(": keepalive\r\n\r\n")
	noiseCR   = []byte(": keepalive\r\r")
	lf        = []byte("\n")
)

// noiseBlock is an SSE comment block in the line-end style of e's lines,
// not of its last bytes: a CRLF block dispatched at its CR ends in a CR,
// and a bare-CR comment there would merge the events that follow for a
// parser that splits lines on LF.
func noiseBlock(e *sse.Event) []byte {
	switch {
	case e.CRLF():
		return noiseCRLF
	case e.CR():
		return noiseCR
	}
	return noiseLF
}

// write sends b to the client, in pieces of at most fragment bytes when
// fragment > 0, through the throttle when there is one; while a buffer
// fault keeps the event back, it keeps b instead. Pieces of a fragmented event
// are flushed one by one; a whole event is flushed before fray next waits.
// It reports whether the client is still there, and whether it waited for
// the throttle.
func (s *sink) write(b []byte, fragment int) (ok, waited bool) {
	if s.buffering {
		// A buffer of a count of events keeps events of any size: past
		// MaxBuffered bytes what it keeps goes out early.
		if len(s.buffered)+len(b) > max(MaxBuffered, s.maxBlock) && !s.unbuffer() {
			return false, false
		}
		s.buffered = append(s.buffered, b...)
		return true, false
	}
	if len(s.buffered) > 0 && !s.unbuffer() {
		return false, false
	}
	piece := len(b)
	if fragment > 0 {
		piece = fragment
	}
	if s.lim != nil {
		piece = min(piece, s.lim.Burst())
	}
	for len(b) > 0 {
		n := min(piece, len(b))
		if s.lim != nil {
			now := s.clock.Now()
			if d := s.lim.ReserveN(now, n).DelayFrom(now); d > 0 {
				waited = true
				if !s.wait(d) {
					return false, waited
				}
			}
		}
		if err := s.send(b[:n]); err != nil {
			s.cancel(err)
			return false, waited
		}
		if fragment > 0 && s.flush() != nil {
			return false, waited
		}
		b = b[n:]
	}
	return true, waited
}

// MaxBuffered bounds the bytes a buffer fault holds on one stream (or one
// --max-block, when that is larger): the event that would take it past
// lets what is kept go first, then is kept itself.
const MaxBuffered = 4 << 20

// unbuffer writes what a buffer fault kept back, ahead of what comes next,
// and has the recorder report those events delivered now; it reports
// whether the client is still there.
func (s *sink) unbuffer() bool {
	if len(s.buffered) == 0 {
		return true
	}
	err := s.send(s.buffered)
	s.buffered = s.buffered[:0]
	s.rec.unbuffer(err == nil)
	if err != nil {
		s.cancel(err)
		return false
	}
	return true
}

// end lets what is kept back go and flushes: the stream's end, however it
// came, ends a buffer. What a client that went away never got is reported
// undelivered.
func (s *sink) end() {
	if len(s.buffered) > 0 && s.ctx.Err() == nil {
		s.unbuffer()
	}
	s.buffered = s.buffered[:0]
	s.rec.unbuffer(false)
	_ = s.flush()
}

// flush sends what was written to the client, if anything, the recorder
// flushed first.
func (s *sink) flush() error {
	s.rec.flush()
	if !s.pending {
		return nil
	}
	s.pending = false
	if err := s.drain(); err != nil {
		s.cancel(err)
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.cancel(err)
		return err
	}
	return nil
}

// wait flushes, then sleeps d on the clock; it reports whether the client
// is still there.
func (s *sink) wait(d time.Duration) bool {
	if s.flush() != nil {
		return false
	}
	// One timer serves the whole stream, so that a delay fault firing
	// costs no allocation.
	return s.sleeper.sleep(s.ctx, s.clock, d)
}

// closeByFault ends the stream on purpose: the upstream request is
// cancelled (unless held) and the client's response ends cleanly.
func (s *sink) closeByFault() {
	s.rec.cause = observe.FaultClosed
	if !s.holding {
		s.cancel(errFaultClosed)
	}
}

// reset aborts the client's connection with a TCP RST (SO_LINGER 0) where
// the connection can be taken over (HTTP/1.x), and resets the stream
// otherwise (HTTP/2): there the handler is aborted once the stream's last
// event and its end have been observed (see pump.abortIfAsked), so that
// fray's own reset is recorded on every protocol path. The upstream request
// is cancelled first.
func (s *sink) reset() {
	// What was written before the reset was on the wire before it.
	_ = s.flush()
	s.rec.cause = observe.FaultReset
	if !s.holding {
		s.cancel(errFaultClosed)
	}
	conn, _, err := s.rc.Hijack()
	if err != nil {
		s.abort = true
		return
	}
	if tc := tcpConn(conn); tc != nil {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func tcpConn(c net.Conn) *net.TCPConn {
	for {
		switch v := c.(type) {
		case *net.TCPConn:
			return v
		case *tls.Conn:
			c = v.NetConn()
		default:
			return nil
		}
	}
}
