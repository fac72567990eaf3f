package trace

import (
	"strconv"

	"github.com/frayproxy/fray/proxy/observe"
)

// encodeObservation appends o as one JSON object.
func encodeObservation(e *enc, o *observe.Observation, red *redactor) {
	b := append(e.b, `{"kind":`...)
	b = appendName(b, o.Kind.String())
	b = append(b, `,"at_us":`...)
	e.b, e.first = strconv.AppendInt(b, o.At.Microseconds(), 10), false
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
		e.b = appendEvent(e.b, o.Event, o.At, red)
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

func encodeEnd(e *enc, end *observe.End) {
	e.object("end")
	e.str("cause", end.Cause.String())
	encodeMessages(e, end.Messages)
	e.strNonEmpty("error", end.Error)
	e.flag("unread", end.Unread)
	e.close()
}
