package forward_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/proxy/forward"
)

// TestHTTPSUpstreamWithExtraCA: an https upstream signed by a private CA is
// refused (502) with the system roots alone and reached with --upstream-ca.
func TestHTTPSUpstreamWithExtraCA(t *testing.T) {
	checkNoLeaks(t)
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		writePieces(w, "id: 1\ndata: secure\n\n")
	}))
	defer up.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	writePEM(t, caFile, "CERTIFICATE", up.Certificate().Raw)

	for _, tc := range []struct {
		name   string
		ca     string
		status int
	}{{"system-roots", "", http.StatusBadGateway}, {"with-ca", caFile, http.StatusOK}} {
		t.Run(tc.name, func(t *testing.T) {
			tlsConf, err := forward.UpstreamTLS(tc.ca)
			if err != nil {
				t.Fatal(err)
			}
			tr := forward.NewTransport(tlsConf)
			defer tr.CloseIdleConnections()
			fray, _ := front(t, up.URL, func(o *proxyOptions) { o.Transport = tr })
			resp := get(t, fray+"/mcp")
			body, _ := readBody(resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == http.StatusOK && body != "id: 1\ndata: secure\n\n" {
				t.Fatalf("body %q", body)
			}
			if tc.status == http.StatusBadGateway && !strings.Contains(body, "certificate") {
				t.Fatalf("502 does not say why: %q", body)
			}
		})
	}
}

// TestTLSListener serves clients over TLS with a certificate and key from
// files, and shuts down when its context ends (serveFray's cleanup).
func TestTLSListener(t *testing.T) {
	checkNoLeaks(t)
	up := upServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello over tls")
	})
	dir := t.TempDir()
	certDER, keyDER := selfSigned(t)
	writePEM(t, filepath.Join(dir, "cert.pem"), "CERTIFICATE", certDER)
	writePEM(t, filepath.Join(dir, "key.pem"), "EC PRIVATE KEY", keyDER)
	lnTLS, err := forward.ListenerTLS(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	addr := serveFray(t, newProxy(t, up, forward.Options{}), lnTLS)
	cert, _ := x509.ParseCertificate(certDER)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp := do(t, client, must(http.NewRequest(http.MethodGet, "https://"+addr+"/x", nil)))
	body, _ := readBody(resp)
	client.CloseIdleConnections()
	if body != "hello over tls" {
		t.Fatalf("body %q", body)
	}
}

func TestListenerTLSNeedsBothFiles(t *testing.T) {
	if _, err := forward.ListenerTLS("cert.pem", ""); err == nil || !strings.Contains(err.Error(), "--tls-key") {
		t.Fatalf("err = %v", err)
	}
	if _, err := forward.ListenerTLS("/nonexistent/cert.pem", "/nonexistent/key.pem"); err == nil ||
		!strings.Contains(err.Error(), "/nonexistent/cert.pem") {
		t.Fatalf("err = %v", err)
	}
}

func selfSigned(t *testing.T) (certDER, keyDER []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fray test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	certDER, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err = x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return certDER, keyDER
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
