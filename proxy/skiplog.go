package proxy

import (
	"context"
	"log/slog"

	"github.com/frayproxy/fray/faults"
)

// logSkip logs a draw that ruled a fault out (--log-faults), beside the
// faults that fired: a fault that never acts says why.
func (e *Engine) logSkip(s faults.Skip) {
	if e.opts.Logger == nil {
		return
	}
	t := s.Traffic
	e.opts.Logger.LogAttrs(context.Background(), slog.LevelInfo, "fault skipped",
		slog.Int("fault", s.Index), slog.String("kind", s.Kind),
		slog.Float64("probability", s.Probability), slog.Uint64("seed", s.Seed),
		slog.Int("session", t.SessionSeq), slog.String("stream", t.Stream.String()),
		slog.String("rpc_method", t.RPCMethod))
}
