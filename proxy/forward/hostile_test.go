package forward_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/mcp"
)

// dropAll is a plan that drops every event it is asked about: a body fray
// parsed as SSE would lose its events, a body it passed unparsed would not.
func dropAll() *scriptPlan {
	return &scriptPlan{event: always(faults.EventAction{Drop: true})}
}

// fetch GETs url with a client that leaves content codings alone and
// returns the response with its whole body.
func fetch(t *testing.T, url string) (*http.Response, []byte, error) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp := do(t, client, must(http.NewRequest(http.MethodGet, url, nil)))
	body, err := readBody(resp)
	return resp, []byte(body), err
}

// TestSSEBodyWithoutEventStreamType: SSE bytes under another content type
// (or none) are not parsed: they pass untouched even under a plan that
// drops every event.
func TestSSEBodyWithoutEventStreamType(t *testing.T) {
	checkNoLeaks(t)
	const body = "id: 1\ndata: one\n\nid: 2\ndata: two\n\n"
	for _, ct := range []string{"application/json", "text/plain", "application/octet-stream", "text/event-stream-x", ""} {
		t.Run(ct, func(t *testing.T) {
			up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{ct}
				if ct == "" {
					w.Header()["Content-Type"] = nil // no sniffing either
				}
				writePieces(w, body[:10], body[10:])
			})
			fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = dropAll() })
			resp, got, err := fetch(t, fray+"/mcp")
			if err != nil || string(got) != body || resp.Header.Get("Content-Type") != ct {
				t.Fatalf("got %q (type %q, err %v), want %q untouched", got, resp.Header.Get("Content-Type"), err, body)
			}
		})
	}
}

// TestEventStreamThatIsNotSSE: bodies labelled text/event-stream that are
// HTML, JSON or random bytes (CR, LF, NUL and invalid UTF-8 among them)
// are parsed as SSE, since that is what a client does, and pass byte for
// byte when no fault touches them.
func TestEventStreamThatIsNotSSE(t *testing.T) {
	checkNoLeaks(t)
	rng := rand.New(rand.NewPCG(7, 11))
	random := make([]byte, 256<<10)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	for name, body := range map[string][]byte{
		"html":   []byte("<!doctype html>\r\n<html><body>\n<p>502 Bad Gateway</p>\r\n\r\n</body></html>\n"),
		"json":   []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\nb"}]}}`),
		"random": random,
	} {
		t.Run(name, func(t *testing.T) {
			up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
				sseHeader(w)
				for b := body; len(b) > 0; {
					n := min(len(b), 1+int(b[0])*13) // pieces that break anywhere
					writePieces(w, string(b[:n]))
					b = b[n:]
				}
			})
			fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = &scriptPlan{} })
			_, got, err := fetch(t, fray+"/mcp")
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%d bytes out (err %v) for %d in; first difference at %d", len(got), err, len(body), firstDiff(got, body))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestGzipEventStreamPassesThrough: an event stream with a content coding
// is passed as it came, compressed, with its Content-Encoding, and fray
// says in its log that it did not parse it.
func TestGzipEventStreamPassesThrough(t *testing.T) {
	checkNoLeaks(t)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = io.WriteString(zw, "id: 1\ndata: one\n\nid: 2\ndata: two\n\n")
	_ = zw.Close()
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		sseHeader(w)
		writePieces(w, zipped.String()[:7], zipped.String()[7:])
	})
	fray, logs := front(t, up, func(o *proxyOptions) { o.Faults = dropAll() })
	resp, got, err := fetch(t, fray+"/mcp")
	if err != nil || !bytes.Equal(got, zipped.Bytes()) || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("got %q, encoding %q, err %v; want the gzip bytes as sent", got, resp.Header.Get("Content-Encoding"), err)
	}
	recs := logs.find("event stream has a content coding; passing it through unparsed")
	if len(recs) != 1 || recs[0]["level"] != "WARN" || recs[0]["content_encoding"] != "gzip" {
		t.Fatalf("want one warning naming gzip, got %v\n%s", recs, logs.text())
	}
}

// brokenUpstream answers /ok properly and everything else with a head and
// a body whose chunked encoding breaks after a first good chunk.
func brokenUpstream(t *testing.T) string {
	t.Helper()
	return "http://" + tcpServer(t, func(c net.Conn) {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			ct := "text/event-stream"
			if strings.HasPrefix(req.URL.Path, "/json") {
				ct = "application/json"
			}
			head := "HTTP/1.1 200 OK\r\nContent-Type: " + ct + "\r\nTransfer-Encoding: chunked\r\n\r\n"
			good := "10\r\ndata: 0123456789\r\n" // 16 bytes
			switch strings.TrimPrefix(req.URL.Path, "/json") {
			case "/ok":
				_, _ = io.WriteString(c, head+good+"2\r\n\n\n\r\n0\r\n\r\n")
				continue
			case "/bad-size":
				_, _ = io.WriteString(c, head+good+"zz\r\nmore\r\n")
			case "/short":
				_, _ = io.WriteString(c, head+good+"100\r\nonly a few bytes")
			case "/no-crlf":
				_, _ = io.WriteString(c, head+good+"4\r\nabcdXY0\r\n\r\n")
			}
			return
		}
	})
}

// TestBrokenChunkedUpstream: a body whose chunked encoding breaks aborts
// the client's response (it never ends cleanly) and fray goes on serving.
func TestBrokenChunkedUpstream(t *testing.T) {
	checkNoLeaks(t)
	fray, logs := front(t, brokenUpstream(t))
	for _, path := range []string{"/bad-size", "/short", "/no-crlf", "/json/bad-size", "/json/short", "/json/no-crlf"} {
		t.Run(path, func(t *testing.T) {
			resp, got, err := fetch(t, fray+path)
			if resp.StatusCode != 200 || err == nil {
				t.Fatalf("status %d, body %q ended with %v; want an aborted body", resp.StatusCode, got, err)
			}
			if !strings.HasPrefix(string(got), "data: 0123456789") {
				t.Errorf("the good chunk did not pass: %q", got)
			}
			resp, got, err = fetch(t, fray+"/ok")
			if err != nil || resp.StatusCode != 200 || string(got) != "data: 0123456789\n\n" {
				t.Fatalf("after the broken body: %d %q %v", resp.StatusCode, got, err)
			}
		})
	}
	if n := len(logs.find("upstream stream failed; aborting the client's response")) +
		len(logs.find("upstream body failed; aborting the client's response")); n != 6 {
		t.Errorf("%d warnings for 6 broken bodies\n%s", n, logs.text())
	}
}

// TestTenMiBEvents: complete events of 10 MiB each pass byte for byte,
// and fray allocates far less than one of them while carrying them.
func TestTenMiBEvents(t *testing.T) {
	checkNoLeaks(t)
	const size = 10 << 20
	event := make([]byte, 0, size+16)
	event = append(event, "data: "...)
	event = append(event, bytes.Repeat([]byte("x"), size)...)
	event = append(event, "\n\n"...)
	const tail = "id: t\ndata: tail\n\n"
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		for range 3 {
			if _, err := w.Write(event); err != nil {
				return
			}
		}
		writePieces(w, tail)
	})
	fray, logs := front(t, up)
	want := sha256.New()
	for range 3 {
		want.Write(event)
	}
	want.Write([]byte(tail))

	client := &http.Client{Timeout: 60 * time.Second}
	defer client.CloseIdleConnections()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp := do(t, client, must(http.NewRequest(http.MethodGet, fray+"/mcp", nil)))
	h := sha256.New()
	n, err := io.CopyBuffer(h, resp.Body, make([]byte, 32<<10))
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	if err != nil || n != int64(3*len(event)+len(tail)) || !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatalf("%d bytes, err %v; want %d unchanged", n, err, 3*len(event)+len(tail))
	}
	// The reader's buffer grows to the block limit (1 MiB) and no further;
	// everything else on both sides of fray streams through fixed buffers.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d KiB allocated", alloc>>10)
	if alloc > 8<<20 {
		t.Errorf("%d MiB allocated to carry 30 MiB; want a bound below one 10 MiB event", alloc>>20)
	}
	if recs := logs.find("event block exceeds the limit; passing the rest of the stream through unparsed"); len(recs) != 1 {
		t.Errorf("want one warning, got %v", recs)
	}
}

// TestNULAndInvalidUTF8: NUL bytes and invalid UTF-8 in every field are
// carried byte for byte, parsed as a client parses them (an id with NUL
// is ignored), and duplicated intact by a fault.
func TestNULAndInvalidUTF8(t *testing.T) {
	checkNoLeaks(t)
	blocks := []string{
		"id: a\x00b\ndata: nul id\n\n",
		"id: ok-1\ndata: x\x00y\x00\n\n",
		"event: \xff\xfe\ndata: \xc0\xaf overlong\n\n",
		"data: \xed\xa0\x80 surrogate, \xf4\x90\x80\x80 past U+10FFFF\n\n",
		"\xef\xbb\xbfdata: a BOM past the start\n\n",
		": \x00\xff comment\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"\xff\x00\",\"result\":\"\xfe\"}\n\n",
		"id: \xff\xfe\ndata: last\n\n",
	}
	body := strings.Join(blocks, "")
	up := sseServer(t, split(body, 5)...)

	t.Run("untouched", func(t *testing.T) {
		rec := &recorder{}
		fray, _ := front(t, up, func(o *proxyOptions) { o.Observer = rec })
		_, got, err := fetch(t, fray+"/mcp")
		if err != nil || string(got) != body {
			t.Fatalf("got %q, err %v; want %q", got, err, body)
		}
		var ids []string
		for _, l := range rec.all() {
			if strings.HasPrefix(l, "event ") {
				ids = append(ids, strings.Fields(l)[2])
			}
		}
		want := []string{`id=""`, `id="ok-1"`, `id=""`, `id=""`, `id=""`, `id=""`, `id="\xff\xfe"`}
		if fmt.Sprint(ids) != fmt.Sprint(want) {
			t.Errorf("ids %v, want %v", ids, want)
		}
	})
	t.Run("duplicated", func(t *testing.T) {
		plan := &scriptPlan{event: always(faults.EventAction{Duplicate: 1})}
		fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = plan })
		_, got, err := fetch(t, fray+"/mcp")
		var want strings.Builder
		for _, b := range blocks {
			want.WriteString(b + b)
		}
		if err != nil || string(got) != want.String() {
			t.Fatalf("got %q, err %v; want each block twice", got, err)
		}
	})
}

// TestSlowClientStaysBounded: a client that reads a few bytes one at a
// time and then stops reading. The upstream's writes block once the
// buffers between them fill (fray does not buffer the stream), other
// streams go on meanwhile, and everything ends once the client goes.
func TestSlowClientStaysBounded(t *testing.T) {
	checkNoLeaks(t)
	const most = 512 << 20 // what the upstream would send if nothing pushed back
	chunk := []byte("data: " + strings.Repeat("z", 64<<10-8) + "\n\n")
	blocked := make(chan int64, 1)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		if r.URL.Path != "/flood" {
			writePieces(w, threeEvents)
			return
		}
		switch written, err := writeUntilBlocked(w, chunk, most); {
		case errors.Is(err, os.ErrDeadlineExceeded):
			blocked <- written
		case err != nil:
			blocked <- -written
		default:
			blocked <- most
		}
	})
	fray, _ := front(t, up)

	slow := dialSend(t, strings.TrimPrefix(fray, "http://"), "GET /flood HTTP/1.1\r\nHost: x\r\n\r\n")
	one := make([]byte, 1)
	var head []byte
	for !bytes.HasSuffix(head, []byte("data: z")) {
		if _, err := io.ReadFull(slow, one); err != nil {
			t.Fatalf("after %q: %v", head, err)
		}
		head = append(head, one[0])
	}

	var written int64
	select {
	case written = <-blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream never blocked nor finished")
	}
	if written <= 0 || written >= most {
		t.Fatalf("the upstream wrote %d bytes before it blocked; want a positive bound well below %d", written, most)
	}
	t.Logf("the upstream blocked after %d KiB", written>>10)
	if written > 64<<20 {
		t.Errorf("%d MiB went out before the upstream blocked: something buffers the stream", written>>20)
	}
	goroutines := runtime.NumGoroutine()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	for i := range 20 {
		resp, err := client.Get(fray + "/other")
		if err != nil {
			t.Fatalf("stream %d beside the stalled one: %v", i, err)
		}
		body, err := readBody(resp)
		if err != nil || body != threeEvents {
			t.Fatalf("stream %d beside the stalled one: %q, %v", i, body, err)
		}
	}
	if n := runtime.NumGoroutine(); n > goroutines+10 {
		t.Errorf("%d goroutines after 20 short streams, %d before", n, goroutines)
	}
}

// writeUntilBlocked writes chunk to w, flushing each, until most bytes
// are written or a write fails; a write that cannot finish within a second
// means the buffers are full: fray has stopped reading. It returns the
// bytes written and the error that stopped it, nil after most.
func writeUntilBlocked(w http.ResponseWriter, chunk []byte, most int64) (int64, error) {
	rc := http.NewResponseController(w)
	var written int64
	for written < most {
		_ = rc.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := w.Write(chunk)
		if err == nil {
			err = rc.Flush()
		}
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// TestConnectionFlood: 2,000 connections opened and dropped in every
// state (at once, mid-head, after a whole request, after TLS bytes on the
// plain port). fray answers normal requests during and after, and no
// goroutine outlives the flood.
func TestConnectionFlood(t *testing.T) {
	checkNoLeaks(t)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "pong")
	})
	addr := rawFray(t, up)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	ping := func() error { return pong(client, "http://"+addr+"/mcp", false) }
	for _, err := range inParallel(2000, 20, func(i int) error {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		switch i % 4 {
		case 1:
			_, _ = io.WriteString(c, "GET /mcp HTTP/1.1\r\nHo")
		case 2:
			_, _ = io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
		case 3:
			_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03})
		}
		c.Close()
		if i%500 == 0 {
			if err := ping(); err != nil {
				return fmt.Errorf("during the flood: %w", err)
			}
		}
		return nil
	}) {
		t.Error(err)
	}
	if err := ping(); err != nil {
		t.Fatalf("after the flood: %v", err)
	}
}

// TestTricklingBodies: clients that send a request head and then a body
// byte by byte, or part of one and nothing more, get 408 once
// RequestBodyTimeout has passed, their connection closed, and are never
// forwarded; while they wait they hold none of the MaxExchanges slots, so
// a normal request beside them is served.
func TestTricklingBodies(t *testing.T) {
	checkNoLeaks(t)
	const tricklers = 6
	var forwarded sync.Map
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		forwarded.Store(r.URL.Path, true)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	fray, _ := front(t, up, func(o *proxyOptions) {
		o.MaxExchanges = 2
		o.RequestBodyTimeout = 2 * time.Second
	})
	addr := strings.TrimPrefix(fray, "http://")
	started := time.Now()
	var conns []net.Conn
	for i := range tricklers {
		conns = append(conns, dialSend(t, addr, fmt.Sprintf("POST /trickle%d HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", i, addr)))
	}
	resp := post(t, fray+"/normal", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a normal request beside %d stalled bodies: %d, want 200", tricklers, resp.StatusCode)
	}
	for i, c := range conns {
		// The first trickles on, a byte at a time, until it is cut off.
		if i == 0 {
			go func() {
				for _, err := c.Write([]byte(" ")); err == nil; _, err = c.Write([]byte(" ")) {
					time.Sleep(50 * time.Millisecond) // the trickle's pace, not synchronisation
				}
			}()
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("trickler %d: %v, want a 408", i, err)
		}
		body, _ := readBody(resp)
		if resp.StatusCode != http.StatusRequestTimeout || !resp.Close || !strings.Contains(body, "within 2s") {
			t.Errorf("trickler %d: %d, close %v, %q; want 408, closed, saying the limit", i, resp.StatusCode, resp.Close, body)
		}
	}
	if waited := time.Since(started); waited > 10*time.Second {
		t.Errorf("the stalled bodies were held %v", waited)
	}
	forwarded.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), "/trickle") {
			t.Errorf("%s was forwarded", k)
		}
		return true
	})
}

// splitCRLFRun streams "data: a" and "data: b" in CRLF blocks through fray
// under the plan's event decisions, the first block's final LF held back until the client has
// read up to firstRead (so that the block is dispatched at its CR), and
// returns all the client got.
func splitCRLFRun(t *testing.T, event func(*mcp.Event) faults.EventAction, firstRead func([]byte) bool) string {
	t.Helper()
	checkNoLeaks(t)
	firstSeen := make(chan struct{})
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, "data: a\r\n\r")
		if !until(r, firstSeen) {
			return
		}
		writePieces(w, "\ndata: b\r\n\r\n")
	})
	fray, _ := front(t, up, func(o *proxyOptions) { o.Faults = &scriptPlan{event: event} })
	resp := get(t, fray+"/mcp")
	defer resp.Body.Close()
	var first []byte
	one := make([]byte, 1)
	for !firstRead(first) {
		if _, err := io.ReadFull(resp.Body, one); err != nil {
			t.Fatalf("after %q: %v", first, err)
		}
		first = append(first, one[0])
	}
	close(firstSeen)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(first) + string(rest)
}

// TestSplitCRLFBlock: on a CRLF stream whose block's CR and LF arrive in
// separate reads (the block dispatched at its CR), faults write whole
// blocks in the stream's CRLF style: noise on the next block goes after
// the LF, noise on the split block before it, and copies of the split
// block are whole blocks, never its prefix. After noise, a parser that
// splits lines on LF alone reads the same events.
func TestSplitCRLFBlock(t *testing.T) {
	for _, tc := range []struct {
		name      string
		event     func(*mcp.Event) faults.EventAction
		firstRead func([]byte) bool
		want      string
		lfData    string // the data an LF parser reads; "" for no such check
	}{
		{"NoiseKeepsCRLFWhole", onEvent(1, faults.EventAction{Noise: 1}), func(b []byte) bool { return len(b) == len("data: a\r\n\r") },
			"data: a\r\n\r\n: keepalive\r\n\r\ndata: b\r\n\r\n", "a,b"},
		{"NoiseOnASplitCRLFBlock", always(faults.EventAction{Noise: 1}), func(b []byte) bool { return bytes.HasSuffix(b, []byte("data: a\r\n\r")) },
			": keepalive\r\n\r\ndata: a\r\n\r\n: keepalive\r\n\r\ndata: b\r\n\r\n", "a,b"},
		{"DuplicateOfASplitCRLFBlock", always(faults.EventAction{Duplicate: 1}), func(b []byte) bool {
			return bytes.Count(b, []byte("data: a")) >= 2 && bytes.HasSuffix(b, []byte("\r"))
		}, "data: a\r\n\r\ndata: a\r\n\r\ndata: b\r\n\r\ndata: b\r\n\r\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitCRLFRun(t, tc.event, tc.firstRead)
			if got != tc.want {
				t.Errorf("the client got %q, want %q", got, tc.want)
			}
			if tc.lfData == "" {
				return
			}
			// What a parser that splits on LF alone makes of it.
			var datas []string
			for line := range strings.SplitSeq(got, "\n") {
				if d, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), "data: "); ok {
					datas = append(datas, d)
				}
			}
			if strings.Join(datas, ",") != tc.lfData {
				t.Errorf("an LF parser reads data %q, want %s", datas, tc.lfData)
			}
		})
	}
}

// TestStalledBodyClosed: a POST whose body stops arriving gets its 408
// and then its connection closed, whatever the body's size and framing:
// net/http must not go on waiting for the rest of the body after the
// answer.
func TestStalledBodyClosed(t *testing.T) {
	checkNoLeaks(t)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s was forwarded", r.URL.Path)
	})
	fray, _ := front(t, up, func(o *proxyOptions) { o.RequestBodyTimeout = 300 * time.Millisecond })
	addr := strings.TrimPrefix(fray, "http://")
	for _, tc := range []struct{ name, framing, sent string }{
		{"small length", "Content-Length: 1000", "{"},
		{"large length", "Content-Length: 10000000", "{"},
		{"chunked", "Transfer-Encoding: chunked", "1\r\n{\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialSend(t, addr, fmt.Sprintf("POST /stall HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s\r\n\r\n%s", addr, tc.framing, tc.sent))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%v, want a 408", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("status %d, want 408", resp.StatusCode)
			}
			if n, err := br.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("after the 408: read %d bytes, %v; want the connection closed (EOF)", n, err)
			}
		})
	}
}
