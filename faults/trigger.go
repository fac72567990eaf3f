package faults

import "time"

// trigger says when close and reset act on a stream; exactly one is given.
type trigger struct {
	mode  trigMode
	n     int           // after_events
	after time.Duration // after
}

type trigMode uint8

const (
	trigNone trigMode = iota
	// trigEvents counts the events that match the fault's selector.
	trigEvents
	// trigAfter is a time since the stream began.
	trigAfter
	// trigPriming is the first priming event.
	trigPriming
	// trigResponse is the first event carrying a JSON-RPC response.
	trigResponse
)

var triggerKeys = []string{"after_events", "after", "after_priming", "before_response"}

func readTrigger(a *Args) trigger {
	switch key := a.OneOf(triggerKeys...); key {
	case "after_events":
		return trigger{mode: trigEvents, n: int(a.Int(key, 0, 0, 1<<31-1))}
	case "after":
		return trigger{mode: trigAfter, after: a.Duration(key, 0)}
	case "after_priming", "before_response":
		if !a.Bool(key, false) {
			a.Fail(key, ErrRange, "%s = false triggers nothing; remove it and give another trigger", key)
			return trigger{}
		}
		if key == "after_priming" {
			return trigger{mode: trigPriming}
		}
		return trigger{mode: trigResponse}
	}
	return trigger{}
}

// atStart reports whether the trigger fires as the stream starts, before
// any event: after_events = 0 or after = "0s".
func (t trigger) atStart() bool {
	return (t.mode == trigEvents && t.n == 0) || (t.mode == trigAfter && t.after == 0)
}
