package faults

// throttleKind limits the bytes per second written to the client for the
// whole stream; burst (default bytes_per_second) is the limiter's bucket.
// When several apply, the slowest wins.
var throttleKind = Kind{
	Name: "throttle", On: OnStream, Params: []string{"bytes_per_second", "burst"},
	Summary: "limits the stream to bytes_per_second, with an optional burst",
	Traits:  Delays,
	Build: func(a *Args) Effect {
		a.Require("bytes_per_second", "an integer")
		bps := int(a.Int("bytes_per_second", 1, 1, 1<<30))
		return Effect{Start: throttleEffect{bps: bps, burst: int(a.Int("burst", int64(bps), 1, 1<<30))}}
	},
}

type throttleEffect struct{ bps, burst int }

func (t throttleEffect) Start(a *StreamAction) {
	if a.Throttle == 0 || t.bps < a.Throttle {
		a.Throttle, a.ThrottleBurst = t.bps, t.burst
	}
}
