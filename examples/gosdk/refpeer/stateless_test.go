package refpeer_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
)

// TestStatelessHandler runs the client against the stateless handler at
// both revisions: 2026-07-28 is negotiated without a session, and a client
// asking for 2025-11-25 is served that revision, also without a session.
// Neither can resume, so the tool runs to its end without closing its
// stream.
func TestStatelessHandler(t *testing.T) {
	for _, version := range []string{refpeer.StatelessProtocolVersion, refpeer.ResumableProtocolVersion} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv := httptest.NewServer(refpeer.NewStatelessHandler(refpeer.ServerOptions{}))
			defer srv.Close()
			defer srv.CloseClientConnections()

			never := 0
			res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{
				Endpoint: srv.URL + "/mcp", ProtocolVersion: version,
				Count: 4, CloseAfter: &never, Delay: 5 * time.Millisecond,
			})
			if err != nil {
				t.Fatalf("RunClient: %v", err)
			}
			if res.ProtocolVersion != version {
				t.Errorf("negotiated %q, want %q", res.ProtocolVersion, version)
			}
			if res.SessionID != "" {
				t.Errorf("session %q from a stateless handler", res.SessionID)
			}
			if len(res.Resumptions) != 0 {
				t.Errorf("resumed with %q from a stateless handler", res.Resumptions)
			}
		})
	}
}
