package forward_test

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/forward"
)

// The HTTP/2 frame types and flags the attacks below send (RFC 9113 §6).
const (
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePing         = 0x6
	frameGoAway       = 0x7
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4

	codeCancel = 0x8
)

// h2Conn is a raw HTTP/2 client connection over TLS: it writes whatever
// frames a test asks for, in any order, which net/http's client never
// would. Writes are safe for concurrent use.
type h2Conn struct {
	conn *tls.Conn
	raw  *net.TCPConn
	mu   sync.Mutex
	bw   *bufio.Writer
	// acked is closed when readAll reads the first PING acknowledgement:
	// the server has read every frame written before that PING.
	acked chan struct{}
}

// dialH2 opens a TLS connection to addr that negotiates h2, and sends the
// client preface and an empty SETTINGS frame. A readBuffer above 0 sets
// the socket's receive buffer, so that what the client does not read
// backs up into fray sooner.
func dialH2(t *testing.T, addr string, readBuffer int) *h2Conn {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if readBuffer > 0 {
		if err := raw.(*net.TCPConn).SetReadBuffer(readBuffer); err != nil {
			t.Fatal(err)
		}
	}
	conn := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if err := conn.Handshake(); err != nil {
		t.Fatal(err)
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	h := &h2Conn{conn: conn, raw: raw.(*net.TCPConn), bw: bufio.NewWriterSize(conn, 64<<10), acked: make(chan struct{})}
	if _, err := io.WriteString(h.bw, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := h.frame(frameSettings, 0, 0, nil, true); err != nil {
		t.Fatal(err)
	}
	return h
}

// frame writes one frame, buffered unless flush.
func (h *h2Conn) frame(typ, flags byte, stream uint32, payload []byte, flush bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var head [9]byte
	head[0], head[1], head[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	head[3], head[4] = typ, flags
	binary.BigEndian.PutUint32(head[5:], stream&0x7fffffff)
	if _, err := h.bw.Write(head[:]); err != nil {
		return err
	}
	if _, err := h.bw.Write(payload); err != nil {
		return err
	}
	if flush {
		return h.bw.Flush()
	}
	return nil
}

// h2Frame is a frame as read.
type h2Frame struct {
	typ, flags byte
	stream     uint32
	payload    []byte
}

func readH2Frame(r io.Reader) (h2Frame, error) {
	var head [9]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return h2Frame{}, err
	}
	f := h2Frame{typ: head[3], flags: head[4], stream: binary.BigEndian.Uint32(head[5:]) & 0x7fffffff}
	f.payload = make([]byte, int(head[0])<<16|int(head[1])<<8|int(head[2]))
	_, err := io.ReadFull(r, f.payload)
	return f, err
}

// h2Reads is what a connection's reader saw: the server's settings, a
// GOAWAY's error code, counts by frame type, and how reading ended.
type h2Reads struct {
	settings map[uint16]uint32
	goAway   int64 // -1 for none
	counts   map[byte]int
	err      error
}

// readAll reads frames until the connection ends, acknowledging the
// server's SETTINGS, and returns what it saw once it has.
func (h *h2Conn) readAll() <-chan h2Reads {
	done := make(chan h2Reads, 1)
	go func() {
		rs := h2Reads{settings: map[uint16]uint32{}, goAway: -1, counts: map[byte]int{}}
		br := bufio.NewReader(h.conn)
		for {
			f, err := readH2Frame(br)
			if err != nil {
				rs.err = err
				done <- rs
				return
			}
			rs.counts[f.typ]++
			switch {
			case f.typ == frameSettings && f.flags&flagAck == 0:
				for p := f.payload; len(p) >= 6; p = p[6:] {
					rs.settings[binary.BigEndian.Uint16(p)] = binary.BigEndian.Uint32(p[2:])
				}
				_ = h.frame(frameSettings, flagAck, 0, nil, true)
			case f.typ == frameGoAway && len(f.payload) >= 8:
				rs.goAway = int64(binary.BigEndian.Uint32(f.payload[4:]))
			case f.typ == framePing && f.flags&flagAck != 0 && rs.counts[framePing] == 1:
				close(h.acked)
			}
		}
	}()
	return done
}

// hpackInt appends v as an HPACK integer with an n-bit prefix whose
// high bits are first (RFC 7541 §5.1).
func hpackInt(b []byte, first byte, n uint, v int) []byte {
	limit := 1<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	for v -= limit; v >= 128; v >>= 7 {
		b = append(b, byte(v%128)|0x80)
	}
	return append(b, byte(v))
}

// hpackGet encodes the pseudo-header fields of a GET of path, without
// Huffman coding or the dynamic table: :method GET and :scheme https from
// the static table, :path and :authority as literals with indexed names.
func hpackGet(path string) []byte {
	b := []byte{0x82, 0x87}
	b = hpackInt(b, 0x00, 4, 4)
	b = hpackInt(b, 0x00, 7, len(path))
	b = append(b, path...)
	b = hpackInt(b, 0x00, 4, 1)
	b = hpackInt(b, 0x00, 7, len("fray"))
	return append(b, "fray"...)
}

// hpackField encodes a literal field with a new name, not indexed.
func hpackField(name, value string) []byte {
	b := []byte{0x00}
	b = hpackInt(b, 0x00, 7, len(name))
	b = append(b, name...)
	b = hpackInt(b, 0x00, 7, len(value))
	return append(b, value...)
}

// h2Target is fray over TLS in front of an upstream that counts the
// requests it is working on, and the most it worked on at once. /slow
// holds each request until fray cancels it; any other path answers at
// once.
type h2Target struct {
	addr             string
	total, now, most atomic.Int64
	client           *http.Client
}

func newH2Target(t *testing.T) *h2Target {
	t.Helper()
	tg := &h2Target{}
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		tg.total.Add(1)
		n := tg.now.Add(1)
		defer tg.now.Add(-1)
		for m := tg.most.Load(); n > m && !tg.most.CompareAndSwap(m, n); m = tg.most.Load() {
		}
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "pong")
	})
	p := newProxy(t, up, forward.Options{})
	serverTLS, _ := testTLS(t)
	tg.addr = serveFray(t, p, serverTLS)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	tg.client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	return tg
}

// ping asks fray for /ping on a connection of its own, over HTTP/2.
func (tg *h2Target) ping() error { return pong(tg.client, "https://"+tg.addr+"/ping", true) }

// pong GETs url with client and says why unless the answer is "pong",
// and over HTTP/2 if h2.
func pong(client *http.Client, url string, h2 bool) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	body, _ := readBody(resp)
	if h2 && resp.ProtoMajor != 2 || body != "pong" {
		return fmt.Errorf("%s %d %q", resp.Proto, resp.StatusCode, body)
	}
	return nil
}

// TestHTTP2RapidReset opens 2,000 streams on one connection and resets
// each as soon as it is opened (CVE-2023-44487). The upstream never works
// on more requests at once than the streams fray lets a connection hold
// (SETTINGS_MAX_CONCURRENT_STREAMS), fray answers another client
// meanwhile and after, and once the connection closes no goroutine is
// left.
func TestHTTP2RapidReset(t *testing.T) {
	checkNoLeaks(t)
	const pairs = 2000
	tg := newH2Target(t)
	h := dialH2(t, tg.addr, 0)
	reads := h.readAll()
	var werr error
	sent := 0
	for ; sent < pairs && werr == nil; sent++ {
		id := uint32(2*sent + 1)
		werr = h.frame(frameHeaders, flagEndHeaders|flagEndStream, id, hpackGet("/slow"), false)
		if werr == nil {
			werr = h.frame(frameRSTStream, 0, id, binary.BigEndian.AppendUint32(nil, codeCancel), sent%100 == 99)
		}
		if sent == pairs/2 {
			if err := tg.ping(); err != nil {
				t.Fatalf("during the resets: %v", err)
			}
		}
	}
	if werr == nil {
		werr = h.frame(framePing, 0, 0, make([]byte, 8), true)
	}
	// Until the PING is acknowledged (or the connection ends), fray may
	// not have read the attack yet.
	var rs h2Reads
	ended := false
	select {
	case <-h.acked:
	case rs = <-reads:
		ended = true
	}
	if err := tg.ping(); err != nil {
		t.Fatalf("after the resets: %v", err)
	}
	h.conn.Close()
	if !ended {
		rs = <-reads
	}
	t.Logf("%d pairs sent (write error %v); GOAWAY code %d; the upstream got %d requests, at most %d at once; frames read %v, reading ended with %v",
		sent, werr, rs.goAway, tg.total.Load(), tg.most.Load(), rs.counts, rs.err)
	limit, ok := rs.settings[0x3] // SETTINGS_MAX_CONCURRENT_STREAMS
	if !ok {
		t.Fatalf("fray advertised no stream limit: %v", rs.settings)
	}
	if tg.total.Load() == 0 {
		t.Fatal("no stream reached the upstream: the attack's HEADERS were not read as requests")
	}
	// Two clients: the attacker's connection and the pings'.
	if most := tg.most.Load(); most > int64(limit)+1 {
		t.Errorf("the upstream worked on %d requests at once; the stream limit is %d", most, limit)
	}
}

// TestHTTP2ContinuationFlood sends a HEADERS frame without END_HEADERS
// and CONTINUATION frames after it, never ending the header block
// (CVE-2023-45288): once with fields far past the header list limit, once
// with empty frames that add nothing to it. fray closes the connection
// before the 16 MiB the attack would send, forwards nothing, and answers
// another client.
func TestHTTP2ContinuationFlood(t *testing.T) {
	for name, payload := range map[string][]byte{
		"fields":       hpackField("x-flood", string(make([]byte, 16000))),
		"empty frames": nil,
	} {
		t.Run(name, func(t *testing.T) {
			checkNoLeaks(t)
			const most = 16 << 20
			tg := newH2Target(t)
			h := dialH2(t, tg.addr, 0)
			reads := h.readAll()
			werr := h.frame(frameHeaders, flagEndStream, 1, hpackGet("/flood"), true)
			written := 0
			for ; written < most && werr == nil; written += 9 + len(payload) {
				werr = h.frame(frameContinuation, 0, 1, payload, written%(1<<20) < 9+len(payload))
			}
			if werr == nil {
				werr = h.frame(framePing, 0, 0, make([]byte, 8), true)
			}
			var rs h2Reads
			select {
			case rs = <-reads:
			case <-time.After(10 * time.Second):
				t.Fatalf("the connection is still open after %d MiB of CONTINUATION", written>>20)
			}
			t.Logf("%d KiB written (write error %v); GOAWAY code %d; reading ended with %v", written>>10, werr, rs.goAway, rs.err)
			if werr == nil && rs.goAway < 0 {
				t.Errorf("the whole flood was taken and the connection was not closed")
			}
			if err := tg.ping(); err != nil {
				t.Fatalf("after the flood: %v", err)
			}
			if n := tg.total.Load(); n != 1 {
				t.Errorf("the upstream got %d requests, want the one ping", n)
			}
		})
	}
}

// TestHTTP2ContinuationControl is the flood's control: the same frames,
// ending the header block after a few CONTINUATIONs, make a request fray
// answers. Without it the flood test would pass on frames fray merely
// found malformed.
func TestHTTP2ContinuationControl(t *testing.T) {
	checkNoLeaks(t)
	tg := newH2Target(t)
	h := dialH2(t, tg.addr, 0)
	err := h.frame(frameHeaders, flagEndStream, 1, hpackGet("/flood"), false)
	for i := range 3 {
		var flags byte
		if i == 2 {
			flags = flagEndHeaders
		}
		if err == nil {
			err = h.frame(frameContinuation, flags, 1, hpackField(fmt.Sprintf("x-part-%d", i), "v"), i == 2)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(h.conn)
	for {
		f, err := readH2Frame(br)
		if err != nil {
			t.Fatalf("no response to a header block in CONTINUATIONs: %v", err)
		}
		if f.typ == frameHeaders && f.stream == 1 {
			break
		}
	}
	if n := tg.total.Load(); n != 1 {
		t.Fatalf("the upstream got %d requests, want the one", n)
	}
}

// TestHTTP2PingFlood sends 50,000 PING frames on a connection whose
// client reads none of the acknowledgements, and has a small receive
// buffer, so that they back up into fray. fray either closes the
// connection or keeps what it queues bounded: its heap grows by far less
// than the acknowledgements would take, and it answers another client
// meanwhile.
func TestHTTP2PingFlood(t *testing.T) {
	checkNoLeaks(t)
	// Five times what net/http lets a connection queue of control frames
	// before it gives up on the connection.
	const pings = 50000
	tg := newH2Target(t)
	h := dialH2(t, tg.addr, 4<<10)
	before := liveHeap()
	var werr error
	sent := 0
	payload := make([]byte, 8)
	for ; sent < pings && werr == nil; sent++ {
		binary.BigEndian.PutUint64(payload, uint64(sent))
		werr = h.frame(framePing, 0, 0, payload, sent%1000 == 999)
	}
	if werr == nil {
		werr = h.bw.Flush()
	}
	grown := liveHeap() - before
	if err := tg.ping(); err != nil {
		t.Fatalf("during the flood: %v", err)
	}
	// Read what came back, up to the last acknowledgement or the end,
	// with a receive buffer large again: through a tiny one, what fray
	// queued in its socket would trickle for longer than the test may run.
	if err := h.raw.SetReadBuffer(4 << 20); err != nil {
		t.Fatal(err)
	}
	// The reading is bounded by a stall, not by a total, as on a loaded
	// machine the acknowledgements come slowly while fray still sends:
	// fray fails this test by going 10 s without a frame; the whole
	// reading stops after 2 minutes.
	const stall = 10 * time.Second
	end := time.Now().Add(2 * time.Minute)
	acks, goAway := 0, int64(-1)
	br := bufio.NewReader(h.conn)
	var rerr error
	for frames := 0; acks < sent && goAway < 0; frames++ {
		if frames%256 == 0 {
			d := time.Now().Add(stall)
			if d.After(end) {
				d = end
			}
			_ = h.conn.SetDeadline(d)
		}
		f, err := readH2Frame(br)
		if err != nil {
			rerr = err
			break
		}
		switch f.typ {
		case framePing:
			acks++
		case frameGoAway:
			goAway = int64(binary.BigEndian.Uint32(f.payload[4:]))
		}
	}
	t.Logf("%d pings sent (write error %v); %d acknowledged, GOAWAY code %d, reading ended with %v; fray's heap grew %d KiB",
		sent, werr, acks, goAway, rerr, grown>>10)
	if isTimeout(rerr) {
		t.Fatalf("fray neither acknowledged every PING nor closed the connection: nothing came for %v, or not all within 2 minutes", stall)
	}
	if grown > 4<<20 {
		t.Errorf("fray's heap grew %d MiB for %d unread PING acknowledgements", grown>>20, sent)
	}
}
