package timeline

import (
	"slices"
	"strings"

	"github.com/frayproxy/fray/proxy/observe"
	"github.com/frayproxy/fray/proxy/report"
)

// checkAnswered is the verifier's check whose findings name the requests
// never answered.
const checkAnswered = "e2e.every-request-answered"

// unanswered lists every JSON-RPC request whose response did not reach
// the client in its session, with the verifier's finding when one names
// it.
func (b *builder) unanswered(r *report.Report) {
	m := b.m
	answered := map[idKey]bool{}
	for li, old := range b.order {
		for _, id := range b.lanes[old].responses {
			answered[idKey{m.Lanes[li].Session, id}] = true
		}
	}
	evidence := map[uint64][]string{}
	if r != nil {
		for _, c := range r.Checks {
			if c.ID != checkAnswered {
				continue
			}
			for _, e := range c.Evidence {
				evidence[e.Exchange] = append(evidence[e.Exchange], e.Message)
			}
		}
	}
	m.Unanswered = []Unanswered{}
	for li, old := range b.order {
		l := &m.Lanes[li]
		for _, q := range b.lanes[old].requests {
			if answered[idKey{l.Session, q.ID}] {
				continue
			}
			m.Unanswered = append(m.Unanswered, Unanswered{Lane: li, AtUS: l.StartUS, ID: q.ID, Method: q.Method,
				Finding: pickEvidence(evidence[l.Exchange], q.ID)})
		}
	}
}

// pickEvidence returns the message of msgs (the findings about one
// exchange) that names request id, or the only one.
func pickEvidence(msgs []string, id string) string {
	for _, msg := range msgs {
		if strings.Contains(msg, "request "+id+" ") {
			return msg
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return ""
}

// windows finds the streams that ended before their response and draws
// their retry window. A stream owes the responses to the requests of its
// POST; a resumption owes what the stream it resumes still owed; a
// standalone GET (or legacy) stream owes the session's traffic, so any end
// the client did not choose counts. The retry is the last one delivered on
// the stream, or else the one the client held when it reconnected (an
// EventSource keeps it across reconnections).
func (b *builder) windows() {
	m := b.m
	n := len(m.Lanes)
	pred := make([]int, n)
	for i := range pred {
		pred[i] = -1
	}
	resumedBy := make([][]Link, n)
	for _, k := range m.Links {
		if k.Event < 0 {
			continue
		}
		t := m.Events.Lane[k.Event]
		if pred[k.Lane] < 0 && t != k.Lane {
			pred[k.Lane] = t
		}
		resumedBy[t] = append(resumedBy[t], k)
	}
	owed := make([][]string, n)
	retry := make([]int64, n)
	retryLane := make([]int, n)
	standalone := make([]bool, n)
	m.Windows = []Window{}
	for li := range m.Lanes {
		l, st := &m.Lanes[li], b.lanes[b.order[li]]
		var left []string
		standalone[li] = l.Stream == "get" || l.Stream == "legacy"
		retry[li], retryLane[li] = l.Retry, li
		if p := pred[li]; p >= 0 {
			left = append(left, owed[p]...)
			standalone[li] = standalone[li] || standalone[p]
			if l.Retry == 0 {
				retry[li], retryLane[li] = retry[p], retryLane[p]
			}
		}
		for _, q := range st.requests {
			left = append(left, q.ID)
		}
		left = slices.DeleteFunc(left, func(id string) bool { return slices.Contains(st.responses, id) })
		owed[li] = left
		isStream := st.stream || l.Events > 0
		if !l.Ended || !isStream || l.Cause == observe.ClientGone.String() || retry[li] <= 0 {
			continue
		}
		if len(left) == 0 && !standalone[li] {
			continue
		}
		w := Window{Lane: li, FromUS: l.EndUS, ToUS: l.EndUS + retry[li]*1000, RetryMS: retry[li], RetryLane: retryLane[li], Reconnect: -1}
		for _, k := range resumedBy[li] {
			if k.Lane != li {
				w.Reconnect, w.ReconnectUS = k.Lane, k.AtUS
				break
			}
		}
		if w.Reconnect < 0 && standalone[li] {
			w.Reconnect, w.ReconnectUS = nextStandalone(m.Lanes, li)
		}
		if w.Reconnect >= 0 {
			w.Early = w.ReconnectUS-w.FromUS < w.RetryMS*1000
			if pred[w.Reconnect] < 0 {
				pred[w.Reconnect] = li
			}
		}
		m.Windows = append(m.Windows, w)
	}
}

// nextStandalone finds the GET that reopened the standalone stream of
// lane li after it ended: the next GET of its session to start at or after
// the end. Lanes are in session and start order.
func nextStandalone(lanes []Lane, li int) (int, int64) {
	l := lanes[li]
	for j := li + 1; j < len(lanes) && lanes[j].Session == l.Session; j++ {
		if s := lanes[j].Stream; (s == "get" || s == "resume" || s == "legacy") && lanes[j].StartUS >= l.EndUS {
			return j, lanes[j].StartUS
		}
	}
	return -1, 0
}
