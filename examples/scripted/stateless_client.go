package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/sse"
)

// StatelessClientFault is a way the 2026-07-28 client can be told to
// misbehave.
type StatelessClientFault uint8

// The stateless client's misbehaviours; the zero value is a correct
// client.
const (
	// StatelessClientCorrect follows the specification.
	StatelessClientCorrect StatelessClientFault = iota
	// ReissueSameID re-issues a call whose stream broke with the id it
	// had (client.reissues-cut-request).
	ReissueSameID
	// GiveUp abandons a call whose stream broke, and goes on with the
	// next one (client.reissues-cut-request).
	GiveUp
	// BadRoutingHeaders sends Mcp-Name with another name than the body's
	// (client.routing-headers).
	BadRoutingHeaders
	// PollTooFast polls tasks every 5ms, whatever pollIntervalMs says
	// (client.task-poll-interval).
	PollTooFast
)

// StatelessClientOptions configures RunStatelessClient. The zero value
// needs only URL.
type StatelessClientOptions struct {
	// URL is the MCP endpoint.
	URL string
	// Calls is the number of tool calls, one after the other; 0 means 2.
	Calls int
	// Fault is the one misbehaviour, if any.
	Fault StatelessClientFault
	// Backoff is the first wait after a broken stream or a refused
	// request; it doubles with each failure in a row, up to 1s. 0 means
	// 20ms.
	Backoff time.Duration
	// MaxAttempts bounds the attempts per call and the listens; 0 means
	// 20.
	MaxAttempts int
	// NoListen: the client opens no subscriptions/listen stream.
	NoListen bool
	// Tasks: each call is long-count, which the server answers with a
	// task that the client polls with tasks/get until it completes.
	Tasks bool
	// Version is the revision every request names, in its
	// Mcp-Protocol-Version header and its _meta; "" means 2026-07-28.
	Version string
	// HTTP is the client used; nil means a fresh one.
	HTTP *http.Client
}

// StatelessResult says what a stateless client run did.
type StatelessResult struct {
	// Completed counts the tool calls that got their result; Failed those
	// answered with an error; Abandoned those given up (GiveUp).
	Completed, Failed, Abandoned int
	// Reissues counts the calls sent again after a broken stream; Listens
	// the subscriptions/listen requests sent.
	Reissues, Listens int
}

// RunStatelessClient speaks 2026-07-28: it opens a subscriptions/listen
// stream and waits for its acknowledgement (listening again, with
// backoff, whenever the stream is lost), then makes the tool calls one
// after the other, re-issuing each call whose stream breaks before its
// result as a new request with a new id, after a growing backoff. It
// closes the listen stream when the calls are done.
func RunStatelessClient(ctx context.Context, opts StatelessClientOptions) (*StatelessResult, error) {
	if opts.Calls == 0 {
		opts.Calls = 2
	}
	if opts.Backoff == 0 {
		opts.Backoff = 20 * time.Millisecond
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 20
	}
	if opts.Version == "" {
		opts.Version = mcp.RevStateless
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Transport: &http.Transport{}}
		defer opts.HTTP.CloseIdleConnections()
	}
	c := &statelessClient{opts: opts, res: &StatelessResult{}, next: 1}
	var wg sync.WaitGroup
	lctx, stop := context.WithCancel(ctx)
	if !opts.NoListen {
		acked := make(chan struct{})
		wg.Go(func() { c.listen(lctx, acked) })
		select {
		case <-acked:
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
		}
	}
	var err error
	for i := range opts.Calls {
		call := c.call
		if opts.Tasks {
			call = c.taskCall
		}
		if err = call(ctx, i); err != nil {
			err = fmt.Errorf("tool call %d: %w", i+1, err)
			break
		}
	}
	stop()
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.res, err
}

type statelessClient struct {
	opts StatelessClientOptions
	mu   sync.Mutex
	res  *StatelessResult
	next int // the next request id
}

// newID returns a request id never used before.
func (c *statelessClient) newID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next
}

func (c *statelessClient) count(f func(r *StatelessResult)) {
	c.mu.Lock()
	f(c.res)
	c.mu.Unlock()
}

// request sends one request of 2026-07-28, its routing headers and
// protocol version mirrored from the body.
func (c *statelessClient) request(ctx context.Context, id int, method, name, params string) (*http.Response, error) {
	meta := fmt.Sprintf(`"_meta":{%q:%q,"io.modelcontextprotocol/clientInfo":{"name":"scripted-stateless","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`, mcp.MetaProtocolVersion, c.opts.Version)
	if method == "tools/call" {
		meta += fmt.Sprintf(`,"progressToken":"call-%d"`, id)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}%s}}`, id, method, meta, params)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.opts.URL, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocol, c.opts.Version)
	req.Header.Set(mcp.HeaderMethod, method)
	if name != "" {
		if c.opts.Fault == BadRoutingHeaders {
			name += "-other"
		}
		req.Header.Set(mcp.HeaderName, name)
	}
	return c.opts.HTTP.Do(req)
}

// call makes one tool call until its result or an error answers it.
func (c *statelessClient) call(ctx context.Context, n int) error {
	const name = "slow-count"
	params := fmt.Sprintf(`,"name":%q,"arguments":{"count":%d}`, name, n+1)
	id := c.newID()
	failures := 0
	for attempt := 0; attempt < c.opts.MaxAttempts; attempt++ {
		if attempt > 0 {
			c.count(func(r *StatelessResult) { r.Reissues++ })
		}
		resp, err := c.request(ctx, id, "tools/call", name, params)
		var outcome callOutcome
		switch {
		case err != nil:
			outcome = broken
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			resp.Body.Close()
			outcome = broken
		default:
			outcome = readAnswer(resp, id)
			resp.Body.Close()
		}
		switch outcome {
		case completed:
			c.count(func(r *StatelessResult) { r.Completed++ })
			return nil
		case failed:
			c.count(func(r *StatelessResult) { r.Failed++ })
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if c.opts.Fault == GiveUp {
			c.count(func(r *StatelessResult) { r.Abandoned++ })
			return nil
		}
		if c.opts.Fault != ReissueSameID {
			id = c.newID()
		}
		if !sleepCtx(ctx, backoff(c.opts.Backoff, &failures)) {
			return ctx.Err()
		}
	}
	return errors.New("gave up after too many re-issues")
}

// callOutcome is what became of one attempt at a call.
type callOutcome uint8

const (
	broken    callOutcome = iota // the stream broke before the answer
	completed                    // the result came
	failed                       // an error answered the call
)

// readAnswer reads an answer to request id: a JSON body or an SSE stream
// that ends with the response.
func readAnswer(resp *http.Response, id int) callOutcome {
	want := fmt.Sprint(id)
	judge := func(b []byte) (callOutcome, bool) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(bytes.TrimSpace(b), &m) != nil || string(m.ID) != want {
			return broken, false
		}
		if m.Error != nil {
			return failed, true
		}
		return completed, m.Result != nil
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return broken
		}
		if o, ok := judge(b); ok {
			return o
		}
		return failed
	}
	rd := sse.NewReader(resp.Body, 0)
	for {
		e, err := rd.Next()
		if err != nil {
			return broken
		}
		if !e.Complete || !e.Dispatched {
			continue
		}
		if o, ok := judge(e.Data); ok {
			return o
		}
	}
}

// listen keeps a subscriptions/listen stream open until ctx ends: each
// new stream is a new request, sent after a growing backoff when the last
// one was lost or refused. acked is closed at the first acknowledgement.
func (c *statelessClient) listen(ctx context.Context, acked chan struct{}) {
	failures := 0
	once := sync.OnceFunc(func() { close(acked) })
	for attempt := 0; attempt < c.opts.MaxAttempts && ctx.Err() == nil; attempt++ {
		c.count(func(r *StatelessResult) { r.Listens++ })
		resp, err := c.request(ctx, c.newID(), mcp.MethodListen, "", `,"notifications":{"toolsListChanged":true}`)
		if err == nil {
			if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				rd := sse.NewReader(resp.Body, 0)
				for {
					e, rerr := rd.Next()
					if rerr != nil {
						break
					}
					if e.Complete && e.Dispatched && bytes.Contains(e.Data, []byte(mcp.MethodListenAcknowledged)) {
						failures = 0
						once()
					}
				}
			}
			resp.Body.Close()
		}
		if !sleepCtx(ctx, backoff(c.opts.Backoff, &failures)) {
			return
		}
	}
}

// taskCall makes a long-count call and polls its task until it completes,
// waiting the pollIntervalMs of each answer between polls.
func (c *statelessClient) taskCall(ctx context.Context, n int) error {
	resp, err := c.request(ctx, c.newID(), "tools/call", "long-count", fmt.Sprintf(`,"name":"long-count","arguments":{"count":%d}`, n+1))
	if err != nil {
		return err
	}
	task, poll, done, err := readTask(resp)
	for polls := 0; !done && err == nil; polls++ {
		if polls >= 100 {
			return errors.New("the task never completed")
		}
		if c.opts.Fault == PollTooFast {
			poll = 5 * time.Millisecond
		}
		if !sleepCtx(ctx, poll) {
			return ctx.Err()
		}
		if resp, err = c.request(ctx, c.newID(), "tasks/get", "", fmt.Sprintf(`,"taskId":%q`, task)); err != nil {
			return err
		}
		_, poll, done, err = readTask(resp)
	}
	if err == nil {
		c.count(func(r *StatelessResult) { r.Completed++ })
	}
	return err
}

// readTask reads a task's state from a JSON answer.
func readTask(resp *http.Response) (task string, poll time.Duration, done bool, err error) {
	defer resp.Body.Close()
	var m struct {
		Result struct {
			TaskID         string `json:"taskId"`
			Status         string `json:"status"`
			PollIntervalMs int64  `json:"pollIntervalMs"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m.Error != nil || m.Result.TaskID == "" {
		return "", 0, false, fmt.Errorf("not a task (status %d): %v %s", resp.StatusCode, err, m.Error)
	}
	r := m.Result
	return r.TaskID, time.Duration(r.PollIntervalMs) * time.Millisecond, r.Status == "completed", nil
}
