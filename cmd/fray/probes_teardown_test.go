package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/profiles/probes"
)

// TestGoSDKLongCallHelper is the official Go SDK's client for
// TestRunProbeGet405OnGoSDKClient, run as fray run's command: one call of
// twenty steps 200 ms apart, whose stream the server never closes, so that
// the call is in flight when the standalone stream's reconnection is
// refused.
func TestGoSDKLongCallHelper(t *testing.T) {
	if os.Getenv("FRAY_GOSDK_LONG_CALL") == "" {
		t.Skip("a helper process for the probe tests, not a test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	never := 0
	res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{Endpoint: os.Getenv("FRAY_URL"), Count: 20, Delay: 200 * time.Millisecond, CloseAfter: &never})
	fmt.Printf("%+v\n", res)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestRunProbeGet405OnGoSDKClient runs get-405-on-reconnect on the
// official Go SDK's client (v1.8.0) against the TypeScript SDK's server
// that announces on its standalone stream: the client deletes its session
// at the 405 to the stream's reconnection, with its call in flight, and
// the probe finds it.
func TestRunProbeGet405OnGoSDKClient(t *testing.T) {
	node, dir := nodePeers(t, "sdk", "get-405-on-reconnect was not run on the Go SDK client")
	t.Setenv("FRAY_GOSDK_LONG_CALL", "1")
	code, stdout, stderr := runFray(t, 60*time.Second, append(append(append([]string{"run", "--probe", "get-405-on-reconnect"},
		nodeServer(t, node, dir, "announcing-server.mjs")...), "--settle", "200ms", "--quiet", "--"),
		helperArgs(t, "TestGoSDKLongCallHelper")...)...)
	wantProbeRow(t, code, stdout, stderr, "get-405-on-reconnect", exitFindings, probes.Found, "client.survives-get-failure:")
}
