package faults

// fragmentKind writes every matching event in pieces of at most max_piece
// bytes, each flushed on its own, so clients must reassemble lines and
// events across reads.
var fragmentKind = kindDef{
	name: "fragment", target: onStream, params: []string{"max_piece"},
	summary: "writes matching events in pieces of at most max_piece bytes",
	build: func(a *args) any {
		a.require("max_piece", "an integer number of bytes")
		return fragmentEffect{max: int(a.integer("max_piece", 1, 1, 1<<20))}
	},
}

type fragmentEffect struct{ max int }

func (fragmentEffect) applies(*Event, *streamState) bool { return true }

func (f fragmentEffect) event(_ *Event, _ *rng, a *EventAction) {
	if a.Fragment == 0 || f.max < a.Fragment {
		a.Fragment = f.max
	}
}
