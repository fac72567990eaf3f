package faults

// keepaliveNoiseKind injects `lines` SSE comment lines (default 1) before
// every matching event: keep-alives that carry no id and make no progress.
var keepaliveNoiseKind = kindDef{
	name: "keepalive-noise", target: onStream, params: []string{"lines"},
	summary: "injects comment lines before matching events",
	build: func(a *args) any {
		return noiseEffect{lines: int(a.integer("lines", 1, 1, 1000))}
	},
}

type noiseEffect struct{ lines int }

func (noiseEffect) applies(*Event, *streamState) bool { return true }

func (n noiseEffect) event(_ *Event, _ *rng, a *EventAction) { a.Noise += n.lines }
