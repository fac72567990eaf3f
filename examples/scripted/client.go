package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/sse"
)

// ClientFault is a way the client can be told to misbehave.
type ClientFault uint8

// The client's misbehaviours; the zero value is a correct client.
const (
	// ClientCorrect follows the specification.
	ClientCorrect ClientFault = iota
	// IgnoreRetry reconnects at once, whatever retry said
	// (client.retry-honoured).
	IgnoreRetry
	// NoLastEventID reconnects with a GET without Last-Event-ID
	// (client.last-event-id).
	NoLastEventID
	// StaleLastEventID sends the first id of the stream rather than the
	// last (client.last-event-id).
	StaleLastEventID
	// LoopAfter404 keeps sending the dead session's id after a 404, three
	// times, before it initializes again (client.new-session-after-404).
	LoopAfter404
)

// ClientOptions configures RunClient. The zero value needs only URL.
type ClientOptions struct {
	// URL is the MCP endpoint.
	URL string
	// Calls is the number of tool calls, one after the other; 0 means 2.
	Calls int
	// Fault is the one misbehaviour, if any.
	Fault ClientFault
	// Backoff is the first wait after a failure when the server gave no
	// retry; it doubles with each failure in a row, up to 1s. 0 means 20ms.
	Backoff time.Duration
	// MaxAttempts bounds the reconnections per call; 0 means 20.
	MaxAttempts int
	// Idle bounds the wait for the next event of a stream; 0 means 3s.
	// Any block resets it, comments included, as real clients do.
	Idle time.Duration
	// CallTimeout bounds each tool call as a whole; 0 means no bound
	// beyond the context's. A call that times out is cancelled with
	// notifications/cancelled, as the specification asks, before the
	// client leaves its stream.
	CallTimeout time.Duration
	// HTTP is the client used; nil means a fresh one.
	HTTP *http.Client
	// Listen opens the session's standalone GET stream before the calls
	// and keeps it open, resuming it with Last-Event-ID whenever it ends,
	// until the calls are done.
	Listen bool
	// KeepSession leaves the session open at the end, with no DELETE, as
	// many clients do.
	KeepSession bool
}

// Result says what a client run did.
type Result struct {
	// Completed counts the tool calls that got their result.
	Completed int
	// Sessions counts the sessions the client initialized.
	Sessions int
	// Resumes lists the Last-Event-ID of each reconnection ("" when sent
	// without one), in order.
	Resumes []string
}

// RunClient initializes a session, makes the tool calls (resuming each
// stream that ends before its result), and deletes the session.
func RunClient(ctx context.Context, opts ClientOptions) (*Result, error) {
	if opts.Calls == 0 {
		opts.Calls = 2
	}
	if opts.Backoff == 0 {
		opts.Backoff = 20 * time.Millisecond
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 20
	}
	if opts.Idle == 0 {
		opts.Idle = 3 * time.Second
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Transport: &http.Transport{}}
		defer opts.HTTP.CloseIdleConnections()
	}
	c := &client{opts: opts, res: &Result{}}
	ctx, c.teardown = context.WithCancelCause(ctx)
	defer c.teardown(nil)
	if err := c.initialize(ctx); err != nil {
		return c.res, err
	}
	stopListening := func() {}
	if opts.Listen {
		lctx, stop := context.WithCancel(ctx)
		primed, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			c.listen(lctx, c.session, primed)
		}()
		stopListening = sync.OnceFunc(func() { stop(); <-done })
		defer stopListening()
		select {
		case <-primed:
		case <-ctx.Done():
		}
	}
	for i := range opts.Calls {
		if err := c.timedCall(ctx, i+2); err != nil {
			return c.res, fmt.Errorf("tool call %d: %w", i+1, err)
		}
		c.res.Completed++
	}
	stopListening()
	if opts.KeepSession {
		return c.res, nil
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, opts.URL, nil)
	headers(req, c.session)
	if resp, err := opts.HTTP.Do(req); err == nil {
		resp.Body.Close()
	}
	return c.res, nil
}

type client struct {
	opts    ClientOptions
	res     *Result
	session string
	loops   int // requests sent on a dead session (LoopAfter404)
	dead    bool
	prev    string   // the last id of the previous call's stream (PreviousStreamID)
	shared  sharedID // the last id of any stream (SharedLastEventID)
	// teardown ends every call (TearDownOnGETFailure).
	teardown context.CancelCauseFunc
}

// headers names session on req, unless it is "" (before initialize).
func headers(req *http.Request, session string) {
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", Protocol)
	}
}

func (c *client) initialize(ctx context.Context) error {
	c.session, c.dead, c.loops = "", false, 0
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + Protocol + `","capabilities":{},"clientInfo":{"name":"scripted","version":"1"}}}`
	resp, err := c.post(ctx, c.session, body)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("initialize: status %d", resp.StatusCode)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	c.res.Sessions++
	resp, err = c.post(ctx, c.session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	resp.Body.Close()
	return nil
}

// post sends body, a JSON-RPC message, in session.
func (c *client) post(ctx context.Context, session, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.opts.URL, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	headers(req, session)
	return c.opts.HTTP.Do(req)
}

// streamState is what the client knows of a stream it may resume.
type streamState struct {
	lastID   string
	hasID    bool
	firstID  string
	retry    time.Duration
	hasRetry bool
	forgot   bool // ForgetIDOnEmptyResume lost lastID
}

// timedCall makes one tool call within the call timeout, if any. At the
// timeout it sends notifications/cancelled for the call, then leaves the
// call's stream.
func (c *client) timedCall(ctx context.Context, id int) error {
	if c.opts.CallTimeout <= 0 {
		return c.call(ctx, id)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fired := make(chan struct{})
	session := c.session // the timer's goroutine reads no field the call may change
	timer := time.AfterFunc(c.opts.CallTimeout, func() {
		defer close(fired)
		c.cancelCall(ctx, session, id)
		cancel(errCallTimeout)
	})
	err := c.call(cctx, id)
	if !timer.Stop() {
		<-fired
	}
	if errors.Is(context.Cause(cctx), errCallTimeout) {
		return errCallTimeout
	}
	return err
}

// cancelCall tells the server of session the client no longer waits for
// call id.
func (c *client) cancelCall(ctx context.Context, session string, id int) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"no result within the call timeout"}}`, id)
	if resp, err := c.post(ctx, session, body); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

var errCallTimeout = errors.New("no result within the call timeout")

// call makes one tool call until its result arrives.
func (c *client) call(ctx context.Context, id int) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow-count","arguments":{"count":5},"_meta":{"progressToken":%d}}}`, id, id)
	var st streamState
	resume := false
	failures := 0
	for attempt := 0; attempt <= c.opts.MaxAttempts; attempt++ {
		var resp *http.Response
		var err error
		sctx, cancel := context.WithCancel(ctx)
		if resume {
			resp, err = c.resume(sctx, &st)
		} else {
			resp, err = c.post(sctx, c.session, body)
		}
		var wait time.Duration
		switch {
		case err != nil:
			wait = backoff(c.opts.Backoff, &failures)
		case resp.StatusCode == http.StatusNotFound && c.session != "":
			resp.Body.Close()
			if c.opts.Fault == LoopAfter404 && c.loops < 3 {
				c.loops++
				wait = backoff(c.opts.Backoff, &failures)
				break
			}
			if err := c.initialize(ctx); err != nil {
				cancel()
				return err
			}
			st, resume = streamState{}, false
			cancel()
			continue
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			resp.Body.Close()
			if resume && c.opts.Fault == GiveUpOnTransient {
				cancel()
				return fmt.Errorf("reconnection answered %d", resp.StatusCode)
			}
			wait = backoff(c.opts.Backoff, &failures)
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
				wait = time.Duration(s) * time.Second
			}
		case resp.StatusCode != http.StatusOK:
			resp.Body.Close()
			cancel()
			return fmt.Errorf("status %d", resp.StatusCode)
		default:
			done, progress, rerr := c.read(sctx, cancel, resp, id, &st)
			resp.Body.Close()
			if rerr != nil {
				cancel()
				return rerr
			}
			if done {
				c.prev = st.lastID
				cancel()
				return nil
			}
			if progress {
				failures = 0
			}
			if resume && !progress && c.opts.Fault == ForgetIDOnEmptyResume {
				st.forgot = true
			}
			wait = backoff(c.opts.Backoff, &failures)
			if st.hasRetry && c.opts.Fault != IgnoreRetry {
				wait = c.retryWait(st.retry, wait, resume && !progress)
			}
			if resume && !progress && c.opts.Fault == LoopOnEmptyResume {
				failures = 0
				attempt--
			}
			if c.opts.Fault == IgnoreRetry {
				wait = 0
			}
			if c.opts.Fault == NoBackoff {
				wait, failures = 0, 0
				attempt--
			}
		}
		cancel()
		resume = st.hasID && st.lastID != ""
		if !sleepCtx(ctx, wait) {
			return ctx.Err()
		}
	}
	return errors.New("gave up after too many reconnections")
}

// backoff is the wait after a failure that nothing else sets: first,
// doubled with each failure in a row that failures counts, up to 1s.
func backoff(first time.Duration, failures *int) time.Duration {
	d := first << min(*failures, 10)
	*failures++
	return min(d, time.Second)
}

// resume sends the GET that resumes st.
func (c *client) resume(ctx context.Context, st *streamState) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opts.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	headers(req, c.session)
	lei := st.lastID
	switch c.opts.Fault {
	case NoLastEventID:
		lei = ""
	case StaleLastEventID:
		lei = st.firstID
	case ForgetIDOnEmptyResume:
		if st.forgot {
			lei = ""
		}
	case PreviousStreamID:
		if c.prev != "" {
			lei = c.prev
		}
	}
	if lei != "" {
		req.Header.Set("Last-Event-ID", lei)
	}
	c.res.Resumes = append(c.res.Resumes, lei)
	return c.opts.HTTP.Do(req)
}

// read reads an answer to the call: a JSON body or an SSE stream. It
// reports whether the result arrived and whether any event came.
func (c *client) read(ctx context.Context, cancel context.CancelFunc, resp *http.Response, id int, st *streamState) (done, progress bool, err error) {
	want := strconv.Itoa(id)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, false, nil
		}
		var m rpc
		if json.Unmarshal(b, &m) == nil && string(m.ID) == want && m.Result != nil {
			return true, true, nil
		}
		return false, false, fmt.Errorf("unexpected answer %q", b)
	}
	idle := time.AfterFunc(c.opts.Idle, cancel)
	defer idle.Stop()
	rd := sse.NewReader(resp.Body, 0)
	for {
		e, err := rd.Next()
		if err != nil {
			return false, progress, nil
		}
		idle.Reset(c.opts.Idle)
		if err := c.choke(e); err != nil {
			return false, progress, err
		}
		if e.HasRetry {
			st.retry, st.hasRetry = time.Duration(e.Retry)*time.Millisecond, true
		}
		if !e.Complete {
			continue
		}
		if e.HasID {
			st.lastID, st.hasID = string(e.ID), true
			c.noteID(st.lastID)
			if st.firstID == "" {
				st.firstID = st.lastID
			}
			progress = true
		}
		if !e.Dispatched {
			continue
		}
		var m rpc
		if json.Unmarshal(bytes.TrimSpace(e.Data), &m) == nil && string(m.ID) == want && m.Result != nil {
			return true, true, nil
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
