package scale

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SoakUpstream is a small resumable MCP server for long runs. It keeps no
// state per session or stream: every event of a call's stream is a
// function of the session, the request's id and the event's index, all
// written in the event id, so a resumption replays exactly what followed
// the id it names, and the server's memory stays flat however long it runs.
//
//	POST initialize      JSON answer with a new Mcp-Session-Id
//	POST tools/call      SSE: a priming event (id, retry, no data), Progress
//	                     notifications Pace apart, then the response
//	POST anything else   202
//	GET  Last-Event-ID   of a call's stream: the rest of it, at once
//	GET                  the standalone stream: a notification every
//	                     StandalonePace for StandaloneLife, then it ends
//	DELETE               200
//
// The zero value is not usable: set every field, or use NewSoakUpstream.
// It is safe for concurrent use.
type SoakUpstream struct {
	Progress       int
	Pace           time.Duration
	Retry          time.Duration
	StandalonePace time.Duration
	StandaloneLife time.Duration

	sessions atomic.Int64
}

// NewSoakUpstream returns a SoakUpstream whose calls last ~200 ms and whose
// standalone streams last 3 s.
func NewSoakUpstream() *SoakUpstream {
	return &SoakUpstream{Progress: 10, Pace: 20 * time.Millisecond, Retry: 200 * time.Millisecond,
		StandalonePace: 100 * time.Millisecond, StandaloneLife: 3 * time.Second}
}

func (u *SoakUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		u.post(w, r)
	case http.MethodGet:
		if id := r.Header.Get("Last-Event-ID"); strings.HasPrefix(id, "c/") {
			u.replay(w, r, id)
			return
		}
		u.standalone(w, r)
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (u *SoakUpstream) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return
	}
	switch {
	case bytes.Contains(body, []byte(`"method":"initialize"`)):
		w.Header().Set("Mcp-Session-Id", "s"+strconv.FormatInt(u.sessions.Add(1), 10))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"soak","version":"1"}}}`, jsonID(body))
	case bytes.Contains(body, []byte(`"method":"tools/call"`)):
		u.call(w, r, r.Header.Get("Mcp-Session-Id"), jsonID(body), 0, true)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// call writes events from..Progress+1 of a call's stream: 0 is the
// priming event, Progress+1 the response. paced spaces them Pace apart.
func (u *SoakUpstream) call(w http.ResponseWriter, r *http.Request, session, rpcID string, from int, paced bool) {
	sseHead(w)
	f := w.(http.Flusher)
	buf := make([]byte, 0, 256)
	var tick *time.Ticker
	if paced {
		tick = time.NewTicker(u.Pace)
		defer tick.Stop()
	}
	for i := from; i <= u.Progress+1; i++ {
		if tick != nil && i > 0 {
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
		}
		buf = append(buf[:0], "id: c/"...)
		buf = append(buf, session...)
		buf = append(buf, '/')
		buf = append(buf, rpcID...)
		buf = append(buf, '/')
		buf = strconv.AppendInt(buf, int64(i), 10)
		switch {
		case i == 0:
			buf = append(buf, "\nretry: "...)
			buf = strconv.AppendInt(buf, u.Retry.Milliseconds(), 10)
			buf = append(buf, "\ndata:\n\n"...)
		case i <= u.Progress:
			buf = append(buf, "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":"...)
			buf = append(buf, rpcID...)
			buf = append(buf, ",\"progress\":"...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, "}}\n\n"...)
		default:
			buf = append(buf, "\ndata: {\"jsonrpc\":\"2.0\",\"id\":"...)
			buf = append(buf, rpcID...)
			buf = append(buf, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n"...)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		f.Flush()
	}
}

// replay resumes a call's stream after the event id names.
func (u *SoakUpstream) replay(w http.ResponseWriter, r *http.Request, id string) {
	parts := strings.Split(strings.TrimPrefix(id, "c/"), "/")
	if len(parts) == 3 {
		if i, err := strconv.Atoi(parts[2]); err == nil {
			u.call(w, r, parts[0], parts[1], i+1, false)
			return
		}
	}
	http.Error(w, "unknown event id", http.StatusBadRequest)
}

func (u *SoakUpstream) standalone(w http.ResponseWriter, r *http.Request) {
	sseHead(w)
	f := w.(http.Flusher)
	f.Flush()
	tick := time.NewTicker(u.StandalonePace)
	defer tick.Stop()
	end := time.NewTimer(u.StandaloneLife)
	defer end.Stop()
	buf := make([]byte, 0, 160)
	for n := 0; ; n++ {
		select {
		case <-tick.C:
		case <-end.C:
			return
		case <-r.Context().Done():
			return
		}
		buf = append(buf[:0], "id: g/"...)
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"tick\"}}\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		f.Flush()
	}
}

func sseHead(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// jsonID returns the raw "id" of a JSON-RPC request body: the digits after
// `"id":` (the soak client's ids are numbers), "0" when there are none.
func jsonID(body []byte) string {
	_, rest, _ := bytes.Cut(body, []byte(`"id":`))
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return "0"
	}
	return string(rest[:n])
}

// SoakCounts is what soak clients did, counted across all of them. Failed
// counts the sessions whose initialize failed and the calls left
// unanswered. Its fields are safe for concurrent use.
type SoakCounts struct {
	Sessions, Calls, Answered, Resumptions, Failed, Standalone atomic.Int64
}

// SoakClient plays one MCP client for a long run: it opens a session, keeps
// a standalone GET stream open (reopening it whenever it ends), makes
// Calls tools/call requests one after the other, resuming each stream cut
// before its response with Last-Event-ID (waiting as retry and
// Retry-After say), then deletes the session and starts again, until ctx
// is done. The zero value is not usable: set URL, HTTP, Calls and Counts.
type SoakClient struct {
	URL   string
	HTTP  *http.Client
	Calls int
	// FirstCalls is the calls of the first session, 0 meaning Calls: many
	// clients started at once, given first sessions of different lengths,
	// do not all end their sessions at the same moment ever after.
	FirstCalls int
	Counts     *SoakCounts
	// Gate, when set, is held for reading for each session: whoever holds
	// it for writing has every client between sessions.
	Gate *sync.RWMutex
}

// Run plays sessions until ctx is done.
func (c *SoakClient) Run(ctx context.Context) {
	calls := c.Calls
	if c.FirstCalls > 0 {
		calls = c.FirstCalls
	}
	for ctx.Err() == nil {
		c.session(ctx, calls)
		calls = c.Calls
	}
}

func (c *SoakClient) session(ctx context.Context, calls int) {
	if c.Gate != nil {
		c.Gate.RLock()
		defer c.Gate.RUnlock()
	}
	sid, err := c.initialize(ctx)
	if err != nil {
		c.Counts.Failed.Add(1)
		wait(ctx, 100*time.Millisecond)
		return
	}
	c.Counts.Sessions.Add(1)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.standalone(sctx, sid)
	}()
	for id := 2; id < 2+calls && ctx.Err() == nil; id++ {
		c.call(ctx, sid, id)
	}
	cancel()
	<-done
	if resp, err := c.do(ctx, http.MethodDelete, sid, "", ""); err == nil {
		drain(resp)
	}
}

func (c *SoakClient) initialize(ctx context.Context) (string, error) {
	resp, err := c.do(ctx, http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, "")
	if err != nil {
		return "", err
	}
	defer drain(resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: %s", resp.Status)
	}
	if resp, err := c.do(ctx, http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""); err == nil {
		drain(resp)
	}
	return sid, nil
}

// call makes one tools/call and follows its stream to the response.
func (c *SoakClient) call(ctx context.Context, sid string, id int) {
	c.Counts.Calls.Add(1)
	resp, err := c.do(ctx, http.MethodPost, sid, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/call","params":{"name":"slow"}}`, "")
	var st streamState
	if err == nil {
		st = readStream(resp)
	}
	for attempt := 0; !st.answered && attempt < 20 && ctx.Err() == nil; attempt++ {
		if st.lastID == "" {
			break // nothing to resume from
		}
		wait(ctx, st.retry)
		c.Counts.Resumptions.Add(1)
		resp, err := c.do(ctx, http.MethodGet, sid, "", st.lastID)
		if err != nil {
			continue
		}
		next := readStream(resp)
		st.answered = next.answered
		st.retry = next.retry
		if next.lastID != "" {
			st.lastID = next.lastID
		}
	}
	if st.answered {
		c.Counts.Answered.Add(1)
	} else if ctx.Err() == nil {
		c.Counts.Failed.Add(1)
	}
}

// standalone keeps the session's GET stream open until ctx is done.
func (c *SoakClient) standalone(ctx context.Context, sid string) {
	for ctx.Err() == nil {
		c.Counts.Standalone.Add(1)
		resp, err := c.do(ctx, http.MethodGet, sid, "", "")
		if err != nil {
			wait(ctx, 100*time.Millisecond)
			continue
		}
		st := readStream(resp)
		wait(ctx, st.retry)
	}
}

func (c *SoakClient) do(ctx context.Context, method, sid, body, lastEventID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.URL, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return c.HTTP.Do(req)
}

// streamState is what a client keeps of a stream: the last event id, the
// wait before reconnecting, and whether the response came.
type streamState struct {
	lastID   string
	retry    time.Duration
	answered bool
}

// readStream reads an answer to its end. A 503's Retry-After and an SSE
// retry field set the wait before the next attempt; an error status counts
// as a stream that carried nothing.
func readStream(resp *http.Response) streamState {
	defer drain(resp)
	st := streamState{retry: 100 * time.Millisecond}
	if resp.StatusCode != http.StatusOK {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			st.retry = time.Duration(s) * time.Second
		}
		return st
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		switch {
		case strings.HasPrefix(line, "id: "):
			st.lastID = strings.TrimSpace(line[4:])
		case strings.HasPrefix(line, "retry: "):
			if ms, err := strconv.Atoi(strings.TrimSpace(line[7:])); err == nil {
				st.retry = time.Duration(ms) * time.Millisecond
			}
		case strings.HasPrefix(line, `data: {"jsonrpc":"2.0","id":`):
			st.answered = true
		}
		if err != nil {
			return st
		}
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// wait waits d or until ctx is done: the pauses a client takes between
// attempts, part of the load it generates.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
