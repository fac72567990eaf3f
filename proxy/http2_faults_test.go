package proxy_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy"
)

// h2Fray starts an HTTP/2 upstream serving up, and fray in front of it
// over TLS, and returns an HTTP/2 client of fray and fray's base URL.
func h2Fray(t *testing.T, up http.Handler, mod ...func(*proxy.Options)) (*http.Client, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(up)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	upPool := x509.NewCertPool()
	upPool.AddCert(srv.Certificate())
	tr := proxy.NewTransport(&tls.Config{RootCAs: upPool})
	t.Cleanup(tr.CloseIdleConnections)
	u, _ := url.Parse(srv.URL)
	opts := proxy.Options{Upstream: u, Transport: tr}
	for _, m := range mod {
		m(&opts)
	}
	p, err := proxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	certDER, keyDER := selfSigned(t)
	key, err := x509.ParseECPrivateKey(keyDER)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveFray(t, p, &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{certDER}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS12,
	})
	cert, _ := x509.ParseCertificate(certDER)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	ctr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(ctr.CloseIdleConnections)
	return &http.Client{Transport: ctr, Timeout: 20 * time.Second}, "https://" + addr
}

// streamsUntilGone answers every request with an event stream of three
// events (the legacy path's first one an endpoint), then holds it open
// until the request ends.
func streamsUntilGone(w http.ResponseWriter, r *http.Request) {
	sseHeader(w)
	first := "id: 0\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
	if r.URL.Path == "/sse" {
		first = "event: endpoint\ndata: /messages?sessionId=s1\n\n"
	}
	writePieces(w, first, "id: 1\ndata: {}\n\n", "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	<-r.Context().Done()
}

// TestHTTP2ResetIsObserved: a reset on an HTTP/2 stream, of each stream
// kind, at the stream's start and at an event, resets the client's stream
// and is observed as on HTTP/1.1: the firing, the event it cut, the end
// "fault-reset", and the fault's counter.
func TestHTTP2ResetIsObserved(t *testing.T) {
	checkNoLeaks(t)
	for _, kind := range []string{"post", "get", "resume", "legacy"} {
		for _, after := range []int{0, 1} {
			t.Run(kind+"/after_events="+string(rune('0'+after)), func(t *testing.T) {
				prof, err := profiles.Parse("reset", strings.NewReader(
					"[[fault]]\nkind = \"reset\"\nstream = \""+kind+"\"\nafter_events = "+string(rune('0'+after))+"\n"))
				if err != nil {
					t.Fatal(err)
				}
				active, err := profiles.NewActive(prof, nil)
				if err != nil {
					t.Fatal(err)
				}
				rec := &recorder{}
				client, base := h2Fray(t, http.HandlerFunc(streamsUntilGone), func(o *proxy.Options) {
					o.Faults, o.Observer = active, rec
				})
				var req *http.Request
				switch kind {
				case "post":
					req, _ = http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
					req.Header.Set("Content-Type", "application/json")
				case "get":
					req, _ = http.NewRequest("GET", base+"/mcp", nil)
				case "resume":
					req, _ = http.NewRequest("GET", base+"/mcp", nil)
					req.Header.Set("Last-Event-ID", "1")
				case "legacy":
					req, _ = http.NewRequest("GET", base+"/sse", nil)
				}
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 || err == nil || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
					t.Fatalf("%s, body ended with %v; want an HTTP/2 stream reset", resp.Proto, err)
				}
				lines := rec.lines()
				all := strings.Join(lines, "\n")
				if len(lines) == 0 || lines[len(lines)-1] != "end fault-reset msgs=[]" {
					t.Errorf("the last observation is not the end by a reset:\n%s", all)
				}
				fired := 0
				for _, l := range lines {
					if strings.Contains(l, "fired=[{0 reset}]") {
						fired++
						if after > 0 && !(strings.HasPrefix(l, "event 1 ") && strings.Contains(l, " cut ")) {
							t.Errorf("the reset fired on %q, want the event it cut, event 1", l)
						}
					}
				}
				if fired != 1 {
					t.Errorf("the reset was observed firing %d times, want once:\n%s", fired, all)
				}
				if n := active.Stats()[0].Fired; n != 1 {
					t.Errorf("the fault's counter says %d, want 1", n)
				}
			})
		}
	}
}
