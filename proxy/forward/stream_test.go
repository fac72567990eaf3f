package forward_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// sseVectors are bodies a server may send: the parsing note's vectors and
// hostile ones. Whatever they are, the client must get them byte for byte.
var sseVectors = map[string]string{
	"crlf-split":   "data: Hello\r\ndata: World\r\n\r\ndata: OK\r\n\r\n",
	"cr-only":      "data: one\r\rdata: two\r\r",
	"mixed":        "data:test\r\ndata\ndata:test\r\n\r\ndata: a\n\rdata: b\n\n",
	"ids":          "id: 123\nid: bad\x00id\ndata: hello\n\nid\n\ndata: b\n\n",
	"priming":      "id: 7\nretry: 100\ndata:\n\n",
	"bom":          "\xef\xbb\xbfdata: x\n\n\xef\xbb\xbfdata: y\n\n",
	"comments":     ": ok\n\n: ping\nevent: foo\n\n",
	"unterminated": "data: a\n\ndata: b\n",
	"garbage":      "\x00\xff\xfe not sse at all \r\r\n\n\x01",
	"empty":        "",
	"no-final-eol": "data: a",
}

// TestEventStreamBytesPassUnchanged: any body, in any pieces, reaches the
// client byte-identical.
func TestEventStreamBytesPassUnchanged(t *testing.T) {
	checkNoLeaks(t)
	for name, body := range sseVectors {
		for _, piece := range []int{1, 2, 7, 1 << 20} {
			t.Run(name+"/"+itoa(piece), func(t *testing.T) {
				up := sseServer(t, split(body, piece)...)
				fray, _ := front(t, up)
				resp := get(t, fray+"/mcp")
				got, err := readBody(resp)
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if got != body {
					t.Fatalf("client got %q, server sent %q", got, body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
					t.Fatalf("content type %q", ct)
				}
			})
		}
	}
}

// TestEachEventIsFlushedWhenComplete: the server holds its next write until
// the client has the previous event, so the test deadlocks (and fails on
// its deadline) unless fray flushes every block the moment it is complete,
// including a block that ends in CR at the end of a read.
func TestEachEventIsFlushedWhenComplete(t *testing.T) {
	checkNoLeaks(t)
	events := []string{"id: 1\ndata: first\n\n", "data: second\r\r", "data: third\r\n\r\n"}
	received := make(chan struct{})
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		for _, ev := range events {
			writePieces(w, ev)
			if !until(r, received) {
				return
			}
		}
	})
	fray, _ := front(t, up)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fray+"/mcp", nil)
	resp := do(t, http.DefaultClient, req)
	defer resp.Body.Close()
	for _, ev := range events {
		got := make([]byte, len(ev))
		if _, err := io.ReadFull(resp.Body, got); err != nil {
			t.Fatalf("waiting for %q: %v (not flushed?)", ev, err)
		}
		if string(got) != ev {
			t.Fatalf("got %q, want %q", got, ev)
		}
		received <- struct{}{}
	}
}

// TestClientGoneCancelsUpstream: when the client leaves mid-stream, the
// upstream request is cancelled at once and nothing is left running.
func TestClientGoneCancelsUpstream(t *testing.T) {
	checkNoLeaks(t)
	cancelled := make(chan struct{})
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, "id: 1\ndata: {\"a\":1}\n\n", "data: {\"half") // mid-event
		<-r.Context().Done()
		close(cancelled)
	})
	fray, _ := front(t, up)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", fray+"/mcp", nil)
	resp := do(t, http.DefaultClient, req)
	firstLine(t, resp.Body, "id: 1\n")
	cancel()
	resp.Body.Close()
	waitFor(t, cancelled, "upstream request not cancelled after the client went away")
}

// TestUpstreamEndingIsMirrored: a clean end upstream is a clean end for the
// client; an abrupt failure upstream is an abrupt close, never a clean end,
// as the client would have seen it direct.
func TestUpstreamEndingIsMirrored(t *testing.T) {
	checkNoLeaks(t)
	for name, abort := range map[string]bool{"clean": false, "abrupt": true} {
		t.Run(name, func(t *testing.T) {
			up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
				sseHeader(w)
				writePieces(w, "id: 1\ndata: x\n\n")
				if abort {
					panic(http.ErrAbortHandler)
				}
			})
			fray, _ := front(t, up)
			for _, target := range []string{up, fray} {
				got, err := readBody(get(t, target+"/mcp"))
				if got != "id: 1\ndata: x\n\n" {
					t.Errorf("%s: body %q", target, got)
				}
				if (err != nil) != abort {
					t.Errorf("%s: read error %v, want error: %v", target, err, abort)
				}
				if abort && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("%s: error %v, want unexpected EOF", target, err)
				}
			}
		})
	}
}

// TestHugeLineStaysBounded: a 10 MiB line with no newline passes through
// unparsed, byte for byte, and fray says so in its log.
func TestHugeLineStaysBounded(t *testing.T) {
	checkNoLeaks(t)
	const size = 10 << 20
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, "data: ")
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	fray, logs := front(t, up, func(o *proxyOptions) { o.MaxBlock = 1 << 20 })
	resp := get(t, fray+"/mcp")
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	resp.Body.Close()
	if err != nil || n != size+6 {
		t.Fatalf("copied %d bytes, err %v; want %d", n, err, size+6)
	}
	want := sha256.New()
	want.Write([]byte("data: "))
	for n := 0; n < size; n += len(chunk) {
		want.Write(chunk)
	}
	if !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatal("bytes changed on the way")
	}
	if recs := logs.find("event block exceeds the limit; passing the rest of the stream through unparsed"); len(recs) != 1 {
		t.Fatalf("want one warning, got %v\n%s", recs, logs.text())
	}
}

func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func itoa(n int) string {
	if n >= 1<<20 {
		return "whole"
	}
	return strconv.Itoa(n)
}
