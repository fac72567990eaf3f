package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/frayproxy/fray/proxy/jsonrpc"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/observe"
)

// Tasks (SEP-2663, the tasks extension of 2026-07-28) move long work out
// of a request: the server answers with a task id and a pollIntervalMs,
// and the client polls tasks/get no more often than that.

const (
	// maxTasks bounds the tasks followed; the oldest is forgotten first.
	maxTasks = 4096
	// pollTolerance is how much sooner than pollIntervalMs a poll may
	// come before it is held against the client (timers and scheduling),
	// and at most a fifth of the interval.
	pollTolerance = 50 * time.Millisecond
)

// taskRec is one task as the client was told of it.
type taskRec struct {
	id   string
	poll time.Duration // the last pollIntervalMs delivered for it
	// since is when the interval runs from: the client's last tasks/get
	// for it, or the delivery of the answer that created it.
	since  time.Duration
	polled bool
	ex     uint64 // the exchange of the last poll, or of the creation
}

// task returns the task followed as id, nil for none; it makes the task
// ledger on first use.
func (st *stateless) task(id string) *taskRec {
	if st.tasks == nil {
		st.tasks = make(map[string]*taskRec)
	}
	return st.tasks[id]
}

// taskAnswered records a pollIntervalMs the client was delivered for a
// task, at delivered.
func (v *Verifier) taskAnswered(id string, pollMS int64, ex uint64, delivered time.Duration) {
	if id == "" || pollMS <= 0 {
		return
	}
	st := v.sl()
	t := st.task(id)
	if t == nil {
		if len(st.tasks) >= maxTasks {
			v.forgetTask(st.taskOrder[0])
		}
		t = &taskRec{id: id, since: delivered, ex: ex}
		st.tasks[id] = t
		st.taskOrder = append(st.taskOrder, id)
	}
	t.poll = time.Duration(pollMS) * time.Millisecond
}

// forgetTask stops following a task.
func (v *Verifier) forgetTask(id string) {
	st := v.stateless
	delete(st.tasks, id)
	if i := slices.Index(st.taskOrder, id); i >= 0 {
		st.taskOrder = slices.Delete(st.taskOrder, i, i+1)
	}
}

// judgeTaskPoll judges a tasks/get as the client sent it: no sooner than
// the pollIntervalMs last delivered for the task after the previous poll
// (or after the answer that created the task), less pollTolerance or a
// fifth of the interval, whichever is less (client.task-poll-interval).
func (v *Verifier) judgeTaskPoll(x *exch, m observe.Message) {
	if m.Method != "tasks/get" || m.TaskID == "" || v.stateless == nil {
		return
	}
	t := v.stateless.task(m.TaskID)
	if t == nil {
		return
	}
	v.apply(cTaskPoll)
	gap := x.at - t.since
	if gap < t.poll-min(pollTolerance, t.poll/5) {
		what := "the answer that created it"
		if t.polled {
			what = "the previous poll"
		}
		ev := evidence(fmt.Sprintf("the client polled task %s %v after %s; the server asked for %v between polls", t.id, gap.Round(time.Millisecond), what, t.poll), x.sess, x.num, x.at)
		ev.Related = related(t.ex)
		v.find(cTaskPoll, levelError, ev)
	}
	t.since, t.polled, t.ex = x.at, true, x.num
}

// taskEvent reads a task's pollIntervalMs from a response the upstream
// sent on a stream of 2026-07-28, when the client got it.
func (v *Verifier) taskEvent(x *exch, e *observe.Event) {
	if e.RPCKind != mcp.RPCResponse || e.Fate != observe.Delivered || e.Corrupted {
		return
	}
	m := jsonrpc.Scan(e.Data)
	id := m.TaskID()
	if id == nil {
		return
	}
	if poll, ok := m.PollIntervalMs(); ok {
		v.taskAnswered(jsonrpc.Unquote(id), poll, x.num, e.DeliveredAt)
	}
}
