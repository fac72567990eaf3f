package faults

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// selectorKeys are the keys every fault may carry besides its kind's
// parameters. "after" is the run-time schedule except in kinds that take
// their own "after" parameter; "run_after" always means the schedule.
var selectorKeys = []string{
	"stream", "method", "path", "request_method", "request_name", "stream_seq", "event", "rpc_kind", "rpc_method",
	"priming", "nth", "after", "run_after", "for", "every",
	"stream_after", "probability", "first", "times", "times_scope",
}

// eventSelectorKeys only make sense where a fault looks at events.
var eventSelectorKeys = []string{"event", "priming", "nth", "stream_after"}

// tri is an optional boolean.
type tri uint8

const (
	triAny tri = iota
	triNo
	triYes
)

// selector says which traffic a fault hits. Its zero value matches all.
type selector struct {
	streams     uint8 // bit per mcp.StreamType; 0 = any
	methods     []string
	paths       []string
	reqMethods  []string // globs on the client's JSON-RPC method
	reqNames    []string // globs on the name the client's request targets
	streamSeq   int      // the exchange's StreamSeq; 0 = any
	events      []string // exact SSE event types
	eventGlobs  []string // event types with * or ?
	anyEvent    bool     // events or eventGlobs is set
	rpcKinds    uint8    // bit per mcp.RPCKind; 0 = any
	rpcMethods  []string
	priming     tri
	nth         int // -1 = any
	streamAfter time.Duration
	sched       schedule
	probability float64
	first       bool  // probability 1 until the fault first acts in the run (moot without probability)
	times       int64 // 0 = unlimited
	perSession  bool
}

// selectorContext tells readSelector what the fault's effect looks at.
type selectorContext struct {
	ownsAfter bool // the kind takes "after" as its own parameter
	events    bool // the effect decides at events
	rpcEvents bool // rpc_kind and rpc_method look at events, not the request
}

func readSelector(a *Args, c selectorContext) selector {
	s := selector{nth: -1, probability: 1}
	s.streams = readStreams(a)
	for _, m := range a.Strings("method") {
		s.methods = append(s.methods, strings.ToUpper(m))
	}
	s.paths = a.Strings("path")
	for _, p := range s.paths {
		if _, err := path.Match(p, ""); err != nil {
			a.Fail("path", ErrType, "%q is not a valid path pattern", p)
		}
	}
	s.reqMethods = a.Strings("request_method")
	s.reqNames = a.Strings("request_name")
	s.streamSeq = int(a.Int("stream_seq", 0, 1, 1<<31-1))
	for _, e := range a.Strings("event") {
		if strings.ContainsAny(e, "*?") {
			s.eventGlobs = append(s.eventGlobs, e)
		} else {
			s.events = append(s.events, e)
		}
		s.anyEvent = true
	}
	s.rpcKinds = readRPCKinds(a)
	s.rpcMethods = a.Strings("rpc_method")
	if a.Has("priming") {
		s.priming = triNo
		if a.Bool("priming", false) {
			s.priming = triYes
		}
	}
	s.nth = int(a.Int("nth", -1, 0, 1<<31-1))
	s.streamAfter = a.Duration("stream_after", 0)
	s.sched = readSchedule(a, afterKey(a, c))
	s.probability = a.Float("probability", 1, 0, 1)
	s.first = a.Bool("first", false)
	s.times = a.Int("times", 0, 1, 1<<62)
	switch scope := a.String("times_scope", "run"); scope {
	case "run":
	case "session":
		s.perSession = true
	default:
		a.Fail("times_scope", ErrRange, "%q is not \"run\" or \"session\"", scope)
	}
	if a.Has("times_scope") && !a.Has("times") {
		a.Fail("times_scope", ErrConflict, "times_scope needs times")
	}
	if !c.events {
		for _, k := range eventSelectorKeys {
			if a.Has(k) {
				a.Fail(k, ErrConflict, "%s selects events, but this %q fault acts before any event", k, a.kind)
			}
		}
	}
	return s
}

func afterKey(a *Args, c selectorContext) string {
	if a.Has("after") && a.Has("run_after") && !c.ownsAfter {
		a.Fail("run_after", ErrConflict, "run_after and after are the same key; give one")
	}
	if c.ownsAfter || a.Has("run_after") {
		return "run_after"
	}
	return "after"
}

func readStreams(a *Args) uint8 {
	var mask uint8
	for _, name := range a.Strings("stream") {
		t, ok := mcp.ParseStreamType(name)
		if !ok {
			a.Fail("stream", ErrRange, "%q is not one of post, get, resume, legacy, other, any", name)
			continue
		}
		if t == mcp.StreamAny {
			return 0
		}
		mask |= 1 << t
	}
	return mask
}

func readRPCKinds(a *Args) uint8 {
	var mask uint8
	for _, name := range a.Strings("rpc_kind") {
		k, found := mcp.ParseRPCKind(name)
		if found {
			mask |= 1 << k
		} else {
			a.Fail("rpc_kind", ErrRange, "%q is not one of request, response, notification, error, none", name)
		}
	}
	return mask
}

// matchExchange reports whether ex is traffic of this selector; with rpc,
// rpc_kind and rpc_method look at the client's message.
func (s *selector) matchExchange(ex *mcp.Exchange, rpc bool) bool {
	if s.streams != 0 && s.streams&(1<<ex.Stream) == 0 {
		return false
	}
	if s.methods != nil && !slices.Contains(s.methods, ex.Method) {
		return false
	}
	if s.paths != nil && !anyPath(s.paths, ex.Path) {
		return false
	}
	if s.reqMethods != nil && !anyGlob(s.reqMethods, ex.RPCMethod) {
		return false
	}
	if s.reqNames != nil && !anyGlob(s.reqNames, ex.RPCName) {
		return false
	}
	if s.streamSeq != 0 && ex.StreamSeq != s.streamSeq {
		return false
	}
	return !rpc || matchRPC(s, ex.RPCKind, ex.RPCMethod)
}

func anyGlob[S ~string | ~[]byte](patterns []string, s S) bool {
	for _, p := range patterns {
		if glob(p, s) {
			return true
		}
	}
	return false
}

// matchEvent reports whether ev is an event of this selector, the schedule
// included; with rpc, rpc_kind and rpc_method look at the event's message.
func (s *selector) matchEvent(ev *mcp.Event, rpc bool) bool {
	if s.nth >= 0 && ev.Index != s.nth {
		return false
	}
	if s.priming != triAny && ev.Priming != (s.priming == triYes) {
		return false
	}
	if ev.SinceStream < s.streamAfter {
		return false
	}
	if s.anyEvent && !s.matchEventType(ev.Type) {
		return false
	}
	if rpc && !matchRPC(s, ev.RPCKind, ev.RPCMethod) {
		return false
	}
	return s.sched.on(ev.SinceRun)
}

func matchRPC[S ~string | ~[]byte](s *selector, kind mcp.RPCKind, method S) bool {
	if s.rpcKinds != 0 && s.rpcKinds&(1<<kind) == 0 {
		return false
	}
	return s.rpcMethods == nil || anyGlob(s.rpcMethods, method)
}

func anyPath(patterns []string, p string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, p); ok {
			return true
		}
	}
	return false
}

// matchEventType matches an SSE event type; "message" also matches an
// event without a type, as a client dispatches it as "message".
func (s *selector) matchEventType(t []byte) bool {
	if len(t) == 0 {
		t = messageType
	}
	for _, e := range s.events {
		if string(t) == e {
			return true
		}
	}
	return anyGlob(s.eventGlobs, t)
}

var messageType = []byte("message")
