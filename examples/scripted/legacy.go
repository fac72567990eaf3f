package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/frayproxy/fray/proxy/sse"
)

// LegacyProtocol is the revision of the HTTP+SSE transport.
const LegacyProtocol = "2024-11-05"

// LegacyServer is an MCP server on the 2024-11-05 HTTP+SSE transport: GET
// /sse opens a session's stream, whose first event names the endpoint to
// POST messages to; every answer comes on the stream. It is an
// http.Handler, safe for concurrent use.
type LegacyServer struct {
	opts     ServerOptions
	mu       sync.Mutex
	sessions map[string]chan string
	dead     map[string]bool // sessions DieOnBadMessage took down
	next     int
}

// NewLegacyServer returns a LegacyServer; opts.Steps and opts.Interval
// shape the tool, the other fields are ignored.
func NewLegacyServer(opts ServerOptions) *LegacyServer {
	return &LegacyServer{opts: NewServer(opts).opts, sessions: map[string]chan string{}, dead: map[string]bool{}}
}

// ServeHTTP answers /sse and /messages.
func (s *LegacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/sse"):
		s.stream(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages"):
		s.message(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *LegacyServer) stream(w http.ResponseWriter, r *http.Request) {
	out := make(chan string, 64)
	s.mu.Lock()
	s.next++
	id := "legacy-" + strconv.Itoa(s.next)
	s.sessions[id] = out
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, id)
		s.mu.Unlock()
	}()
	rc := startSSE(w)
	endpoint := strings.TrimSuffix(r.URL.Path, "/sse") + "/messages?sessionId=" + id
	fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case msg := <-out:
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			if rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

func (s *LegacyServer) message(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	out := s.sessions[r.URL.Query().Get("sessionId")]
	s.mu.Unlock()
	if out == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if s.refuse(w, r) {
		return
	}
	var msg rpc
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, "bad JSON-RPC body: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	send := func(m string) {
		select {
		case out <- m:
		case <-time.After(5 * time.Second): // the stream is gone
		}
	}
	switch {
	case msg.ID == nil:
	case msg.Method == "initialize":
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`, msg.ID, LegacyProtocol))
	case msg.Method == "tools/call":
		go func() {
			for i := 1; i <= s.opts.Steps; i++ {
				time.Sleep(s.opts.Interval) // the tool's work
				send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, msg.ID, i))
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"counted to %d"}]}}`, msg.ID, s.opts.Steps))
		}()
	default:
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID))
	}
}

// RunLegacyClient runs the tool calls over the HTTP+SSE transport: base is
// the server's base URL (the stream is base+"/sse"). When the stream is
// lost, the client starts a new session, as the transport requires, and
// makes the call again.
func RunLegacyClient(ctx context.Context, base string, calls int) (*Result, error) {
	res := &Result{}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	for call := 0; call < calls; {
		done, err := legacySession(ctx, hc, base, calls-call, res)
		call += done
		if err != nil && ctx.Err() != nil {
			return res, err
		}
		if res.Sessions > calls+10 {
			return res, fmt.Errorf("gave up after %d sessions: %w", res.Sessions, err)
		}
	}
	return res, nil
}

// legacySession opens one session and makes up to calls calls in it; it
// returns how many completed.
func legacySession(ctx context.Context, hc *http.Client, base string, calls int, res *Result) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	res.Sessions++
	rd := sse.NewReader(resp.Body, 0)
	next := func() (*sse.Event, error) {
		for {
			e, err := rd.Next()
			if err != nil {
				return nil, err
			}
			if e.Dispatched {
				return e, nil
			}
		}
	}
	e, err := next()
	if err != nil || string(e.Type) != "endpoint" {
		return 0, fmt.Errorf("no endpoint event: %v", err)
	}
	b, _ := url.Parse(base)
	endpoint, err := b.Parse(string(e.Data))
	if err != nil {
		return 0, fmt.Errorf("endpoint %q: %w", e.Data, err)
	}
	post := func(body string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return refusedPost{endpoint.String(), resp.StatusCode}
		}
		return nil
	}
	await := func(id int) error {
		for {
			e, err := next()
			if err != nil {
				return err
			}
			var m rpc
			if json.Unmarshal(e.Data, &m) == nil && string(m.ID) == strconv.Itoa(id) {
				if m.Result == nil {
					return errors.New("error answer")
				}
				return nil
			}
		}
	}
	if err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + LegacyProtocol + `","capabilities":{},"clientInfo":{"name":"scripted","version":"1"}}}`); err != nil {
		return 0, err
	}
	if err := await(1); err != nil {
		return 0, err
	}
	if err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return 0, err
	}
	for i := range calls {
		id := i + 2
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow-count","_meta":{"progressToken":%d}}}`, id, id)
		if err := postAgainIfRefused(post, call); err != nil {
			return i, err
		}
		if err := await(id); err != nil {
			return i, err
		}
		res.Completed++
	}
	return calls, nil
}
