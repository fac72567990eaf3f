package faults

// throttleKind limits the bytes per second written to the client for the
// whole stream; burst (default bytes_per_second) is the limiter's bucket.
// When several apply, the slowest wins.
var throttleKind = kindDef{
	name: "throttle", target: onStream, params: []string{"bytes_per_second", "burst"},
	summary: "limits the stream to bytes_per_second, with an optional burst",
	build: func(a *args) any {
		a.require("bytes_per_second", "an integer")
		bps := int(a.integer("bytes_per_second", 1, 1, 1<<30))
		return throttleEffect{bps: bps, burst: int(a.integer("burst", int64(bps), 1, 1<<30))}
	},
}

type throttleEffect struct{ bps, burst int }

func (t throttleEffect) start(a *StreamAction) {
	if a.Throttle == 0 || t.bps < a.Throttle {
		a.Throttle, a.ThrottleBurst = t.bps, t.burst
	}
}
