package faults

import "github.com/frayproxy/fray/proxy/mcp"

// keepaliveNoiseKind injects `lines` SSE comment lines (default 1) before
// every matching event: keep-alives that carry no id and make no progress.
var keepaliveNoiseKind = Kind{
	Name: "keepalive-noise", On: OnStream, Params: []string{"lines"},
	Summary: "injects comment lines before matching events",
	Traits:  InsertsBytes,
	Build: func(a *Args) Effect {
		return Effect{Event: noiseEffect{lines: int(a.Int("lines", 1, 1, 1000))}}
	},
}

type noiseEffect struct{ lines int }

func (noiseEffect) Applies(*mcp.Event, *StreamState) bool { return true }

func (n noiseEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) { a.Noise += n.lines }
