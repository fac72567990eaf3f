package faults

import "time"

// idleCloseKind ends a stream cleanly once silence has passed without a
// byte from the server, as a CDN or a reverse proxy with a read timeout
// does (a keep-alive comment counts as a byte: it is what keeps such a
// stream open). The silence is counted from the stream's start and from
// each read; the proxy's clock measures it. A GET that carries no session
// gets its decisions at its first event (until then fray cannot tell it
// from a legacy stream), so its silence is counted from that event.
var idleCloseKind = Kind{
	Name: "idle-close", On: OnStream, Once: true, Params: []string{"silence"},
	Summary: "ends the stream cleanly after silence without a byte from the server, as an idle timeout does",
	Traits:  EndsStream | Armed,
	Build: func(a *Args) Effect {
		a.Require("silence", `a duration, e.g. "125s"`)
		d := a.Duration("silence", 0)
		if a.Has("silence") && d <= 0 {
			a.Fail("silence", ErrRange, "silence must be positive, got %v", d)
			return Effect{}
		}
		return Effect{Start: idleClose{silence: d}}
	},
}

type idleClose struct{ silence time.Duration }

// Start keeps the shortest silence of the idle closes that apply: the
// first intermediary to time out ends the stream.
func (c idleClose) Start(a *StreamAction) {
	if a.CloseIdle == 0 || c.silence < a.CloseIdle {
		a.CloseIdle = c.silence
	}
}

// IdleExpired decides, when an idle timer armed for silence fires, whether
// the stream has been silent long enough: it returns 0 when it has (close
// it now), else how much longer to wait, counted from the last read. now
// and last are times on the proxy's clock.
func IdleExpired(silence time.Duration, last, now time.Time) time.Duration {
	if quiet := now.Sub(last); quiet < silence {
		return silence - quiet
	}
	return 0
}
