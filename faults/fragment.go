package faults

import "github.com/frayproxy/fray/proxy/mcp"

// fragmentKind writes every matching event in pieces of at most max_piece
// bytes, each flushed on its own, so clients must reassemble lines and
// events across reads.
var fragmentKind = Kind{
	Name: "fragment", On: OnStream, Params: []string{"max_piece"},
	Summary: "writes matching events in pieces of at most max_piece bytes",
	Traits:  Delays,
	Build: func(a *Args) Effect {
		a.Require("max_piece", "an integer number of bytes")
		return Effect{Event: fragmentEffect{max: int(a.Int("max_piece", 1, 1, 1<<20))}}
	},
}

type fragmentEffect struct{ max int }

func (fragmentEffect) Applies(*mcp.Event, *StreamState) bool { return true }

func (f fragmentEffect) Event(_ *mcp.Event, _ *Rand, a *EventAction) {
	if a.Fragment == 0 || f.max < a.Fragment {
		a.Fragment = f.max
	}
}
