package refpeer_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
)

func TestRunClient(t *testing.T) {
	tests := []struct {
		name        string
		closeAfter  int
		wantResumed bool
	}{
		{name: "stream closed mid-call is resumed", closeAfter: 2, wantResumed: true},
		{name: "stream never closed", closeAfter: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv := httptest.NewServer(refpeer.NewHandler(refpeer.ServerOptions{RetryAfter: 10 * time.Millisecond}))
			defer srv.Close()
			defer srv.CloseClientConnections()

			closeAfter := tt.closeAfter
			res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{
				Endpoint:      srv.URL + "/mcp",
				Count:         5,
				CloseAfter:    &closeAfter,
				Delay:         5 * time.Millisecond,
				RequireResume: tt.wantResumed,
			})
			if err != nil {
				t.Fatalf("RunClient: %v", err)
			}
			if res.ProtocolVersion != refpeer.ResumableProtocolVersion {
				t.Errorf("negotiated %q, want %q", res.ProtocolVersion, refpeer.ResumableProtocolVersion)
			}
			if got := len(res.Resumptions) > 0; got != tt.wantResumed {
				t.Errorf("resumed = %v (Last-Event-IDs %q), want %v", got, res.Resumptions, tt.wantResumed)
			}
			if res.Structured.StreamClosed != tt.wantResumed {
				t.Errorf("StreamClosed = %v, want %v", res.Structured.StreamClosed, tt.wantResumed)
			}
		})
	}
}

func TestRunClientNoEndpoint(t *testing.T) {
	if _, err := refpeer.RunClient(context.Background(), refpeer.ClientOptions{}); err == nil {
		t.Fatal("RunClient with no endpoint succeeded")
	}
}
