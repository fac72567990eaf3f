package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// StatelessFault is a way the 2026-07-28 server can be told to misbehave.
type StatelessFault uint8

// The stateless server's misbehaviours; the zero value is a correct
// server.
const (
	// StatelessCorrect follows the specification.
	StatelessCorrect StatelessFault = iota
	// KeepSending goes on with a call whose stream closed: its progress
	// and its response go out on every open subscriptions/listen stream
	// (server.silent-after-cancel).
	KeepSending
	// NoAcknowledgement starts subscription streams with
	// notifications/tools/list_changed instead of the acknowledgement
	// (server.listen-acknowledged).
	NoAcknowledgement
	// IgnoreHeaders serves requests whose Mcp-Method or Mcp-Name disagree
	// with the body (server.header-mismatch-rejected).
	IgnoreHeaders
	// NoAccelBuffering starts its SSE streams without X-Accel-Buffering:
	// no (server.x-accel-buffering).
	NoAccelBuffering
	// RefuseVersionWith200 refuses a request of a revision it does not
	// implement with UnsupportedProtocolVersionError under HTTP 200, not
	// 400 (server.unsupported-version-error).
	RefuseVersionWith200
)

// StatelessServerOptions configures NewStatelessServer. The zero value is
// a correct server whose calls take 5 steps of 10ms.
type StatelessServerOptions struct {
	// Fault is the one misbehaviour, if any.
	Fault StatelessFault
	// Steps and Interval shape a tools/call: a progress notification
	// first, then Steps waits of Interval, then the result. 0 means 5
	// and 10ms.
	Steps    int
	Interval time.Duration
	// PollInterval is the pollIntervalMs of the tasks long-count creates;
	// 0 means 50ms.
	PollInterval time.Duration
}

// StatelessServer is an MCP server of revision 2026-07-28 alone: every
// request a POST answered on its own, no sessions, no event ids; GET and
// DELETE are answered 405. A tools/call is answered on an SSE stream
// (progress, then the result); closing that stream cancels the call.
// A request whose _meta names another revision is refused with 400 and
// UnsupportedProtocolVersionError. subscriptions/listen opens a stream
// that begins with its acknowledgement and stays open, with keep-alive comments, until the
// client leaves. It is safe for concurrent use.
type StatelessServer struct {
	opts StatelessServerOptions

	mu       sync.Mutex
	listens  map[chan string]bool // open subscription streams
	tasks    map[string]int       // polls left before each task completes
	nextTask int
}

// NewStatelessServer returns a StatelessServer.
func NewStatelessServer(opts StatelessServerOptions) *StatelessServer {
	if opts.Steps == 0 {
		opts.Steps = 5
	}
	if opts.Interval == 0 {
		opts.Interval = 10 * time.Millisecond
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	return &StatelessServer{opts: opts, listens: map[chan string]bool{}, tasks: map[string]int{}}
}

// statelessParams is what the server reads of a request's params.
type statelessParams struct {
	Name   string `json:"name"`
	URI    string `json:"uri"`
	TaskID string `json:"taskId"`
	Meta   struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Protocol      string          `json:"io.modelcontextprotocol/protocolVersion"`
	} `json:"_meta"`
}

// ServeHTTP answers the MCP endpoint.
func (s *StatelessServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed: 2026-07-28 has no standalone stream and no sessions", http.StatusMethodNotAllowed)
		return
	}
	var msg rpc
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, "bad JSON-RPC body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var p statelessParams
	_ = json.Unmarshal(msg.Params, &p)
	name, hasName := p.Name, p.Name != ""
	if msg.Method == "resources/read" {
		name, hasName = p.URI, p.URI != ""
	}
	if bad := mcp.RoutingMismatch(r.Header, msg.Method, name, hasName); bad != "" && s.opts.Fault != IgnoreHeaders {
		writeJSON(w, http.StatusBadRequest, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, msg.ID, mcp.ErrHeaderMismatch, "Header mismatch: "+bad))
		return
	}
	if v := p.Meta.Protocol; v != "" && v != mcp.RevStateless {
		status := http.StatusBadRequest
		if s.opts.Fault == RefuseVersionWith200 {
			status = http.StatusOK
		}
		writeJSON(w, status, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"Unsupported protocol version","data":{"supported":[%q],"requested":%q}}}`, msg.ID, mcp.ErrUnsupportedVersion, mcp.RevStateless, v))
		return
	}
	switch msg.Method {
	case "server/discover":
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":[%q],"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"scripted-stateless","version":"1"}}}`, msg.ID, mcp.RevStateless))
	case mcp.MethodListen:
		s.listen(w, r, msg.ID)
	case "tools/call":
		if p.Name == "long-count" {
			s.createTask(w, msg.ID)
			return
		}
		s.call(w, r, msg.ID, p.Meta.ProgressToken)
	case "tasks/get":
		s.getTask(w, msg.ID, p.TaskID)
	default:
		writeJSON(w, http.StatusNotFound, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID))
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// startStream answers with an SSE stream.
func (s *StatelessServer) startStream(w http.ResponseWriter) *http.ResponseController {
	if s.opts.Fault != NoAccelBuffering {
		w.Header().Set(mcp.HeaderAccelBuffering, "no")
	}
	return startSSE(w)
}

// send writes one message as an SSE event without an id and flushes it.
func send(w io.Writer, rc *http.ResponseController, data string) error {
	if _, err := io.WriteString(w, "data: "+data+"\n\n"); err != nil {
		return err
	}
	return rc.Flush()
}

// call answers a tools/call: progress, the work, the result. A closed
// stream cancels it (KeepSending: the rest goes to the listen streams).
func (s *StatelessServer) call(w http.ResponseWriter, r *http.Request, id, token json.RawMessage) {
	rc := s.startStream(w)
	if token == nil {
		token = json.RawMessage(`"p-` + string(id) + `"`)
	}
	progress := func(n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d}}`, token, n, s.opts.Steps)
	}
	result := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"counted to %d"}]}}`, id, s.opts.Steps)
	if send(w, rc, progress(0)) != nil {
		s.abandoned(progress(0), result)
		return
	}
	t := time.NewTimer(s.opts.Interval)
	defer t.Stop()
	for n := range s.opts.Steps {
		select {
		case <-r.Context().Done():
			s.abandoned(progress(n+1), result)
			return
		case <-t.C:
			t.Reset(s.opts.Interval)
		}
	}
	_ = send(w, rc, result)
}

// abandoned is what the server does once a call's stream closed: nothing,
// unless it misbehaves.
func (s *StatelessServer) abandoned(msgs ...string) {
	if s.opts.Fault != KeepSending {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.listens {
		for _, m := range msgs {
			select {
			case ch <- m:
			default:
			}
		}
	}
}

// listen answers subscriptions/listen: the acknowledgement, then what
// the server has to say, and keep-alive comments until the client leaves.
func (s *StatelessServer) listen(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
	rc := s.startStream(w)
	first := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{"toolsListChanged":true}}}`, mcp.MethodListenAcknowledged, id)
	if s.opts.Fault == NoAcknowledgement {
		first = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	}
	// Registered before the acknowledgement goes out, so that a client
	// that waits for it and then calls finds its messages here.
	ch := make(chan string, 16)
	s.mu.Lock()
	s.listens[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listens, ch)
		s.mu.Unlock()
	}()
	if send(w, rc, first) != nil {
		return
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case m := <-ch:
			err = send(w, rc, m)
		case <-tick.C:
			if _, err = io.WriteString(w, ": keep-alive\n\n"); err == nil {
				err = rc.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// createTask answers a long-count call with a task that completes after
// three polls.
func (s *StatelessServer) createTask(w http.ResponseWriter, id json.RawMessage) {
	s.mu.Lock()
	s.nextTask++
	task := fmt.Sprintf("task-%d", s.nextTask)
	s.tasks[task] = 3
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"task","taskId":%q,"status":"working","ttlMs":60000,"pollIntervalMs":%d}}`, id, task, s.opts.PollInterval.Milliseconds()))
}

// getTask answers tasks/get: working until the task's polls run out, then
// completed with its result.
func (s *StatelessServer) getTask(w http.ResponseWriter, id json.RawMessage, task string) {
	s.mu.Lock()
	left, ok := s.tasks[task]
	if ok && left > 0 {
		s.tasks[task] = left - 1
	}
	s.mu.Unlock()
	switch {
	case !ok:
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown task"}}`, id))
	case left > 0:
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","taskId":%q,"status":"working","pollIntervalMs":%d}}`, id, task, s.opts.PollInterval.Milliseconds()))
	default:
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","taskId":%q,"status":"completed","result":{"content":[{"type":"text","text":"done"}]}}}`, id, task))
	}
}
