package forward_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/forward"
	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/trace"
)

// serveFray serves h with forward.Serve, as `fray proxy` does, on a loopback
// port, and returns the address. The server is shut down, and waited for,
// when the test ends.
func serveFray(t *testing.T, h http.Handler, tlsConfig *tls.Config) string {
	t.Helper()
	return serveOn(t, listen(t), h, tlsConfig)
}

// serveOn is serveFray on a listener of the test's own.
func serveOn(t *testing.T, ln net.Listener, h http.Handler, tlsConfig *tls.Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- forward.Serve(ctx, ln, h, tlsConfig, time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// sendRaw sends req as written on a new connection to addr and reads
// one response; the body is read whole.
func sendRaw(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	conn := dialSend(t, addr, req)
	defer conn.Close()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("response to %q: %v", req, err)
	}
	body, _ := readBody(resp)
	return resp, body
}

// TestOnlyTheUpstreamIsReached: whatever the request target, the Host or
// the method, fray connects to its upstream and nowhere else. A second
// loopback listener stands in for another host of the network: it must
// never see a connection.
func TestOnlyTheUpstreamIsReached(t *testing.T) {
	checkNoLeaks(t)
	other := listen(t)
	elsewhere := other.Addr().String()

	type seen struct{ host, uri string }
	var reached list[seen]
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		reached.add(seen{r.Host, r.RequestURI})
		_, _ = io.WriteString(w, "upstream")
	})
	upHost := strings.TrimPrefix(up, "http://")
	fray, logs := front(t, up)
	frayHost := strings.TrimPrefix(fray, "http://")

	for _, tc := range []struct {
		name, req string
		status    int
		reach     *seen // what the upstream saw, nil for nothing
	}{
		{"absolute-form for another host", "GET http://" + elsewhere + "/steal HTTP/1.1\r\nHost: " + elsewhere + "\r\n\r\n",
			421, nil},
		{"absolute-form for another host, Host naming fray", "GET http://" + elsewhere + "/steal HTTP/1.1\r\nHost: " + frayHost + "\r\n\r\n",
			421, nil},
		{"absolute-form POST", "POST http://" + elsewhere + "/mcp HTTP/1.1\r\nHost: " + frayHost + "\r\nContent-Length: 2\r\n\r\n{}",
			421, nil},
		{"absolute-form for a name", "GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n", 421, nil},
		{"absolute-form with fray as user info", "GET http://" + frayHost + "@" + elsewhere + "/ HTTP/1.1\r\nHost: " + frayHost + "\r\n\r\n",
			421, nil},
		{"CONNECT", "CONNECT " + elsewhere + " HTTP/1.1\r\nHost: " + elsewhere + "\r\n\r\n", 405, nil},
		{"Host naming another host", "GET /mcp HTTP/1.1\r\nHost: " + elsewhere + "\r\n\r\n",
			200, &seen{elsewhere, "/mcp"}},
		{"path that looks like an authority", "GET //" + elsewhere + "/x HTTP/1.1\r\nHost: " + frayHost + "\r\n\r\n",
			200, &seen{upHost, "//" + elsewhere + "/x"}},
		{"absolute-form naming fray", "GET http://" + frayHost + "/mcp HTTP/1.1\r\nHost: " + elsewhere + "\r\n\r\n",
			200, &seen{upHost, "/mcp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(reached.all())
			resp, body := sendRaw(t, frayHost, tc.req)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %q", resp.StatusCode, tc.status, body)
			}
			if tc.status >= 400 && (!strings.HasPrefix(body, "fray") || strings.Count(body, "\n") != 1) {
				t.Errorf("refusal %q is not one line saying why", body)
			}
			got := reached.all()[before:]
			switch {
			case tc.reach == nil && len(got) > 0:
				t.Errorf("the upstream saw %v", got)
			case tc.reach != nil && (len(got) != 1 || got[0] != *tc.reach):
				t.Errorf("the upstream saw %v, want %v", got, *tc.reach)
			}
		})
	}
	if recs := logs.find("request names another host; refused, fray forwards only to its upstream"); len(recs) != 5 ||
		recs[0]["host"] != elsewhere || recs[0]["level"] != "WARN" {
		t.Errorf("want a warning per absolute-form refusal naming the host, got %v", recs)
	}
	// Every answer is in: any connection fray made would be queued by now.
	_ = other.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if c, err := other.Accept(); err == nil {
		c.Close()
		t.Fatal("the other host saw a connection")
	} else if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("accept on the other host: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestHeaderTooLarge431: a request head (request line, header fields and
// the empty line) of exactly forward.MaxHeaderBytes is forwarded, and one
// byte more is answered 431 and never forwarded, whatever its shape: one
// large field, many small ones, a long request target.
func TestHeaderTooLarge431(t *testing.T) {
	checkNoLeaks(t)
	up, hits := recordingUpstream(t, urlPath)
	addr := rawFray(t, up)
	// head returns a head of exactly size bytes, padded in the given shape.
	head := func(shape string, size int) string {
		pre := "GET /" + shape + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\n"
		pad := size - len(pre) - len("\r\n")
		switch shape {
		case "one-field":
			return pre + "X-Big: " + strings.Repeat("b", pad-len("X-Big: \r\n")) + "\r\n\r\n"
		case "many-fields":
			var b strings.Builder
			b.WriteString(pre)
			for i := 0; pad > 0; i++ {
				f := fmt.Sprintf("X-F%d: v\r\n", i)
				if pad-len(f) < len("X-Fnnnnn: v\r\n") {
					f = fmt.Sprintf("X-F%d: %s\r\n", i, strings.Repeat("v", pad-len(f)+1))
				}
				b.WriteString(f)
				pad -= len(f)
			}
			return b.String() + "\r\n"
		default: // a long target
			return strings.Replace(pre, "/"+shape, "/"+shape+"?q="+strings.Repeat("t", pad-len("?q=")), 1) + "\r\n"
		}
	}
	for _, shape := range []string{"one-field", "many-fields", "long-target"} {
		for _, tc := range []struct {
			size, status int
		}{{forward.MaxHeaderBytes, 200}, {forward.MaxHeaderBytes + 1, 431}} {
			req := head(shape, tc.size)
			if len(req) != tc.size {
				t.Fatalf("%s: built a %d-byte head, want %d", shape, len(req), tc.size)
			}
			resp, body := sendRaw(t, addr, req)
			if resp.StatusCode != tc.status {
				t.Fatalf("%s, %d-byte head: status %d, want %d: %q", shape, tc.size, resp.StatusCode, tc.status, body)
			}
			if tc.status == 431 && !strings.Contains(body, "Request Header Fields Too Large") {
				t.Errorf("431 body %q", body)
			}
		}
		if got := <-hits; got != "/"+shape {
			t.Errorf("the upstream saw %q, want /%s", got, shape)
		}
	}
	select {
	case got := <-hits:
		t.Errorf("an oversized head reached the upstream (%s)", got)
	default:
	}
}

// TestMaxExchanges: past the limit of exchanges in flight, a new one is
// answered 503 with Retry-After and one line saying why, and never
// forwarded; once one ends, new ones are admitted again.
func TestMaxExchanges(t *testing.T) {
	checkNoLeaks(t)
	release := make(chan struct{})
	var forwarded atomic.Int32
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		forwarded.Add(1)
		if r.URL.Path == "/quick" {
			return
		}
		sseHeader(w)
		writePieces(w, "data: open\n\n")
		until(r, release)
	})
	defer close(release)
	fray, logs := front(t, up, func(o *proxyOptions) { o.MaxExchanges = 2 })

	var open []*http.Response
	for range 2 {
		resp := get(t, fray+"/stream")
		firstLine(t, resp.Body, "data: open\n")
		open = append(open, resp)
	}
	for range 3 {
		resp := get(t, fray+"/quick")
		body, _ := readBody(resp)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
			body[len(body)-1] != '\n' || strings.Count(body, "\n") != 1 || !strings.Contains(body, "2 exchanges in flight") {
			t.Fatalf("past the limit: %d, Retry-After %q, %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	if n := forwarded.Load(); n != 2 {
		t.Errorf("%d requests forwarded, want the 2 admitted", n)
	}
	if recs := logs.find("too many exchanges in flight; refusing new ones with 503"); len(recs) != 3 ||
		recs[0]["level"] != "WARN" || recs[1]["level"] != "DEBUG" || recs[0]["limit"] != "2" {
		t.Errorf("want one warning then debug lines, got %v", recs)
	}

	open[0].Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := get(t, fray+"/quick")
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d after a stream ended", resp.StatusCode)
		}
	}
	open[1].Body.Close()
}

// TestUpstreamThatNeverAnswers: an upstream that accepts the request and
// never sends a response head. The client gets 504 with one line saying
// why within the configured timeout, and the upstream connection is
// closed, leaving no goroutine behind.
func TestUpstreamThatNeverAnswers(t *testing.T) {
	checkNoLeaks(t)
	closed := make(chan error, 1)
	addr := tcpServer(t, func(c net.Conn) {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		_, err := io.Copy(io.Discard, c) // reads the request, answers nothing
		closed <- err
	})
	fray, logs := front(t, "http://"+addr, func(o *proxyOptions) { o.ResponseHeaderTimeout = 200 * time.Millisecond })
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Post(fray+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := readBody(resp)
	if resp.StatusCode != http.StatusGatewayTimeout || strings.Count(body, "\n") != 1 ||
		!strings.Contains(body, "no response head within 200ms") {
		t.Fatalf("got %d %q, want 504 saying the head did not come within 200ms", resp.StatusCode, body)
	}
	if err := <-closed; err != nil {
		t.Fatalf("the upstream connection ended with %v, want a close", err)
	}
	if recs := logs.find("upstream failed"); len(recs) != 1 || !strings.Contains(recs[0]["error"], "no response head") {
		t.Errorf("log: %v", recs)
	}
}

// secret marks every credential the secrets test sends; no log line at
// info level or above may carry it.
const secret = "SeCrEt"

// TestSecretsStayOutOfInfoLogs drives every path that logs at info, warn
// or error, with session ids and Last-Event-IDs on every request and in
// legacy endpoint URLs, and checks that none of those values appears in
// such a line. Debug lines may show them.
func TestSecretsStayOutOfInfoLogs(t *testing.T) {
	checkNoLeaks(t)
	sid, leid, legacySID := "sid-"+secret+"-1", "ev-"+secret+"-2", "legacy-"+secret+"-3"
	endpoint := func(url string) string {
		return "event: endpoint\ndata: " + url + "?sessionId=" + legacySID + "\n\n"
	}
	streams := map[string][]string{ // the event streams, by path
		"/mcp": {"id: " + leid + "\ndata:\n\n",
			"id: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"},
		"/big":            {"id: " + leid + "\ndata: " + strings.Repeat("x", 8<<10) + "\n\n"},
		"/legacy-away":    {endpoint("http://other.example/messages")},
		"/legacy-bad":     {endpoint("http://[::1/messages")},
		"/legacy-ok":      {endpoint("/base/messages")},
		"/legacy-outside": {endpoint("/elsewhere/messages")},
	}
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", sid)
		path := strings.TrimPrefix(r.URL.Path, "/base")
		if pieces, ok := streams[path]; ok {
			sseHeader(w)
			writePieces(w, pieces...)
			return
		}
		switch path {
		case "/gzip":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, "id: "+leid+"\ndata: x\n\n")
			_ = zw.Close()
		case "/fail":
			sseHeader(w)
			writePieces(w, "id: "+leid+"\ndata: x\n\n")
			panic(http.ErrAbortHandler)
		case "/json-fail":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			writePieces(w, `{"jsonrpc":"2.0",`)
			panic(http.ErrAbortHandler)
		}
	})
	fired := []faults.Firing{{Index: 0, Kind: "test"}}
	plan := &scriptPlan{
		exchange: func(*mcp.Exchange) faults.ExchangeAction { return faults.ExchangeAction{Fired: fired} },
		start:    faults.StreamAction{Fired: fired},
		event:    always(faults.EventAction{Fired: fired}),
	}
	rec := &logRecorder{}
	logTo := func(o *proxyOptions) { o.Logger = slog.New(rec) }
	fray, _ := front(t, up+"/base", logTo, func(o *proxyOptions) {
		o.Faults, o.LogFaults, o.MaxBlock, o.MaxRequestBody = plan, true, 1024, 64
	})
	frayDead, _ := front(t, "http://"+deadAddr(t), logTo)

	send := func(base, method, path, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		// A 2024-11-05 client sends neither header on its stream.
		if !strings.HasPrefix(path, "/legacy") {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Last-Event-ID", leid)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	send(fray, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	send(fray, "GET", "/mcp", "")
	for _, path := range []string{"/gzip", "/big", "/fail", "/json-fail", "/legacy-away", "/legacy-bad", "/legacy-outside", "/legacy-ok"} {
		send(fray, "GET", path, "")
	}
	send(fray, "POST", "/mcp?sessionId="+legacySID, strings.Repeat("x", 100))
	sendRaw(t, strings.TrimPrefix(fray, "http://"), "GET http://other.example/mcp?sessionId="+legacySID+" HTTP/1.1\r\n"+
		"Host: other.example\r\nMcp-Session-Id: "+sid+"\r\nLast-Event-ID: "+leid+"\r\n\r\n")
	send(frayDead, "POST", "/mcp?sessionId="+legacySID, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)

	// The exchange limit of 1, with one stream held open.
	hold := make(chan struct{})
	holdUp := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, ": open\n\n")
		until(r, hold)
	})
	defer close(hold)
	frayFull, _ := front(t, holdUp, logTo, func(o *proxyOptions) { o.MaxExchanges = 1 })
	open := get(t, frayFull+"/mcp")
	firstLine(t, open.Body, ": open\n")
	send(frayFull, "GET", "/mcp?sessionId="+legacySID, "")
	open.Body.Close()

	seen := map[string]bool{}
	debugShows := false
	for _, r := range rec.recs.all() {
		line := renderRecord(r)
		if r.Level < slog.LevelInfo {
			debugShows = debugShows || strings.Contains(line, secret)
			continue
		}
		seen[r.Message] = true
		if strings.Contains(line, secret) {
			t.Errorf("a credential in a %s line: %s", r.Level, line)
		}
	}
	if !debugShows {
		t.Error("no debug line shows a credential: the test sent none where fray looks")
	}
	for _, msg := range []string{
		"fault",
		"event stream has a content coding; passing it through unparsed",
		"event block exceeds the limit; passing the rest of the stream through unparsed",
		"upstream stream failed; aborting the client's response",
		"upstream body failed; aborting the client's response",
		"legacy endpoint points away from the upstream; the client's POSTs will bypass fray",
		"legacy endpoint event has an unparseable URL; left as is",
		"legacy endpoint lies outside the upstream's base path; the client's POSTs will bypass fray",
		"request body too large",
		"request names another host; refused, fray forwards only to its upstream",
		"upstream failed",
		"too many exchanges in flight; refusing new ones with 503",
	} {
		if !seen[msg] {
			t.Errorf("no %q line: the test missed a path that logs", msg)
		}
	}
}

// renderRecord writes a record as a text handler would, groups included.
func renderRecord(r slog.Record) string {
	var b strings.Builder
	h := slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})
	_ = h.Handle(context.Background(), r)
	return b.String()
}

// TestHTTP2HeaderListLimit: over HTTP/2 the head is bounded as HTTP/2
// counts it (each field's name and value, plus 32 bytes), by the
// SETTINGS_MAX_HEADER_LIST_SIZE fray advertises: 61,760 bytes.
func TestHTTP2HeaderListLimit(t *testing.T) {
	serverTLS, _ := testTLS(t)
	h := dialH2(t, serveFray(t, http.NotFoundHandler(), serverTLS), 0)
	f, err := readH2Frame(h.conn)
	if err != nil {
		t.Fatal(err)
	}
	if f.typ != frameSettings {
		t.Fatalf("first frame of type %d, want SETTINGS", f.typ)
	}
	for p := f.payload; len(p) >= 6; p = p[6:] {
		if binary.BigEndian.Uint16(p) == 0x6 { // MAX_HEADER_LIST_SIZE
			if v := binary.BigEndian.Uint32(p[2:]); v != 61760 {
				t.Errorf("SETTINGS_MAX_HEADER_LIST_SIZE %d, want 61760", v)
			}
			return
		}
	}
	t.Errorf("no SETTINGS_MAX_HEADER_LIST_SIZE in %x", f.payload)
}

// TestLongSessionIDsStayBounded: 2,000 requests, each with its own
// 60,000-byte Mcp-Session-Id, leave fray's live heap less than 8 MiB
// larger: the session table holds a long id by a digest, not whole.
func TestLongSessionIDsStayBounded(t *testing.T) {
	checkNoLeaks(t)
	const requests, idLen = 2000, 60000
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	fray, _ := front(t, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	before := liveHeap()
	pad := strings.Repeat("s", idLen-8)
	for i := range requests {
		req, _ := http.NewRequest("POST", fray+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(mcp.HeaderSession, fmt.Sprintf("%08d", i)+pad)
		resp := do(t, client, req)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	client.CloseIdleConnections()
	grown := liveHeap() - before
	t.Logf("%d sessions of %d-byte ids: the live heap grew %d KiB", requests, idLen, grown>>10)
	if grown > 8<<20 {
		t.Errorf("the live heap grew %d MiB: the session table holds the ids whole", grown>>20)
	}
}

// TestLegacyEndpointRedactedInTraces: with session ids redacted, the query
// values of a legacy endpoint URL (its session id, an api_key) appear in
// neither the raw nor the delivered bytes a trace holds; the session's
// stand-in takes the session id's place, as in the rest of the trace.
func TestLegacyEndpointRedactedInTraces(t *testing.T) {
	checkNoLeaks(t)
	up := sseServer(t, "event: endpoint\ndata: /messages?sessionId=SECRET-SESSION-1&api_key=SECRET-KEY-2\n\n")
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, trace.WriterOptions{RedactHeaders: []string{mcp.HeaderSession}})
	if err != nil {
		t.Fatal(err)
	}
	fray, _ := front(t, up, func(o *proxyOptions) { o.Observer = tw })
	resp, body, err := fetch(t, fray+"/sse")
	if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), "sessionId=SECRET-SESSION-1") {
		t.Fatalf("the client must get the endpoint as sent: %v, %q", err, body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"SECRET-SESSION-1", "SECRET-KEY-2"} {
		if strings.Contains(out, secret) {
			t.Errorf("the trace holds %s:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, `sessionId=session-1`) || !strings.Contains(out, `api_key=[redacted]`) {
		t.Errorf("the endpoint's values are not replaced by the stand-in and the redaction mark:\n%s", out)
	}
}

// TestConnectInAnyCaseAndH2CPreface: a CONNECT in any letter case, and
// the preface of plain-text HTTP/2 (h2c, which fray does not serve), are
// refused and never reach the upstream.
func TestConnectInAnyCaseAndH2CPreface(t *testing.T) {
	checkNoLeaks(t)
	up, hits := recordingUpstream(t, func(r *http.Request) string { return r.Method })
	addr := rawFray(t, up)
	for _, tc := range []struct {
		req    string
		status int
	}{
		// net/http refuses an authority-form target with any method but CONNECT.
		{"connect " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n", 400},
		{"Connect /x HTTP/1.1\r\nHost: " + addr + "\r\n\r\n", 405},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505},
	} {
		resp, body := sendRaw(t, addr, tc.req)
		if resp.StatusCode != tc.status {
			t.Errorf("%q: %d, want %d: %q", tc.req, resp.StatusCode, tc.status, body)
		}
	}
	select {
	case m := <-hits:
		t.Errorf("a %q request reached the upstream", m)
	default:
	}
}
