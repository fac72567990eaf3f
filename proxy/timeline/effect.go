package timeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/observe"
)

// The effects are read back from what the observation records, not from
// the profile: they say what the fault did to this traffic, which is what
// a reader of the timeline wants to know. Where two faults acted on one
// event, each says its own part (a delay and a stall both hold the event,
// and the time held is their sum).

// eventEffect says what a fault of kind did to the event e that arrived at
// at.
func eventEffect(kind string, e *observe.Event, at time.Duration) string {
	held := ""
	if e.Fate == observe.Delivered && e.DeliveredAt > at {
		held = " " + shortDur(e.DeliveredAt-at)
	}
	switch kind {
	case "drop", "drop-priming":
		return "dropped the event"
	case "delay":
		return "held the event" + held
	case "duplicate":
		return fmt.Sprintf("wrote the event %d times", e.Copies)
	case "strip-retry":
		if e.HasRetry {
			return fmt.Sprintf("removed retry: %d ms", e.Retry)
		}
		return "removed retry"
	case "set-retry":
		if e.DeliveredHasRetry && e.HasRetry {
			return fmt.Sprintf("set retry to %d ms (was %d ms)", e.DeliveredRetry, e.Retry)
		}
		if e.DeliveredHasRetry {
			return fmt.Sprintf("set retry to %d ms", e.DeliveredRetry)
		}
		return "set retry"
	case "strip-id":
		return "removed the id " + quoteID(e.ID)
	case "rewrite-id":
		if e.DeliveredHasID {
			return "rewrote the id " + quoteID(e.ID) + " to " + quoteID(e.DeliveredID)
		}
		return "rewrote the id " + quoteID(e.ID)
	case "corrupt":
		return "broke the JSON of its data"
	case "close":
		if e.Fate == observe.Delivered {
			return "closed the stream after the event"
		}
		return "closed the stream instead of writing the event"
	case "reset":
		return "reset the connection instead of writing the event"
	case "lose":
		return "swallowed the event, as a dying connection would, then closed the stream; the server believes it delivered"
	case "stall":
		if e.Fate == observe.Stalled {
			return "stalled the stream for ever before the event"
		}
		return "stalled the stream" + held + " before the event"
	case "fragment":
		return "wrote the event in pieces"
	case "keepalive-noise":
		return "wrote comment lines before the event"
	}
	return "acted on the event (" + e.Fate.String() + ")"
}

// streamEffect says what a fault of kind armed when the stream of r
// started.
func streamEffect(kind string, r *observe.Response) string {
	switch kind {
	case "throttle":
		if r.Throttle > 0 {
			return fmt.Sprintf("throttled the stream to %d bytes/s", r.Throttle)
		}
	case "close":
		if r.CloseAfter > 0 {
			return "closed the stream " + shortDur(r.CloseAfter) + " after it began"
		}
		return "closed the stream before its first event"
	case "reset":
		return "reset the connection before the first event"
	}
	return "acted on the stream as it started"
}

// requestEffect says what a fault of kind did to the request r; status is
// filled in when the exchange's response is known ("%d" stands for it).
func requestEffect(kind string, r *observe.Request) string {
	a := r.Action
	switch kind {
	case "latency":
		return "held the request " + shortDur(a.Latency) + " before forwarding it"
	case "status":
		return "answered %d instead of forwarding the request"
	case "drop-request":
		if a.Hang {
			return "swallowed the request and left the client waiting"
		}
		return "swallowed the request and answered %d"
	case "strip-last-event-id":
		return "removed Last-Event-ID " + quoteID([]byte(r.LastEventID))
	case "rewrite-last-event-id":
		if a.HasForwardedLastEventID {
			return "rewrote Last-Event-ID " + quoteID([]byte(r.LastEventID)) + " to " + quoteID([]byte(a.ForwardedLastEventID))
		}
		return "rewrote Last-Event-ID " + quoteID([]byte(r.LastEventID))
	case "strip-header":
		if len(a.StrippedHeaders) > 0 {
			return "removed the header " + strings.Join(a.StrippedHeaders, ", ")
		}
		return "removed a response header"
	}
	return "acted on the request"
}

// withStatus fills a request effect's status once the response is known.
func withStatus(effect string, status int) string {
	if !strings.Contains(effect, "%d") {
		return effect
	}
	if status == 0 {
		return strings.ReplaceAll(effect, " %d", "")
	}
	return strings.ReplaceAll(effect, "%d", strconv.Itoa(status))
}

// quoteID quotes an id for a tooltip, shortened when long.
func quoteID(id []byte) string {
	const max = 48
	if len(id) > max {
		return strconv.Quote(string(id[:max])) + "…"
	}
	return strconv.Quote(string(id))
}

// shortDur writes d as people read it: 150ms, 2s, 1.5s, 830µs.
func shortDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64) + "s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d.Round(100*time.Microsecond))/float64(time.Millisecond), 'f', -1, 64) + "ms"
	}
	return strconv.FormatInt(d.Microseconds(), 10) + "µs"
}
