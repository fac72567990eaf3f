// Command client runs the refpeer scenario (official Go SDK) against an MCP
// endpoint: initialize, list tools, call slow-count with a progress token
// and check that the call survives the server closing its stream.
//
//	go run ./examples/gosdk/client [flags] http://127.0.0.1:7070/mcp
//
// It prints one JSON line with what it observed and exits 0 on success, 1 on
// failure, 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
)

func main() {
	count := flag.Int("count", refpeer.DefaultCount, "steps to count")
	closeAfter := flag.Int("close-after", refpeer.DefaultCloseAfter, "step after which the server closes the stream (0: never)")
	delay := flag.Duration("delay", refpeer.DefaultDelay, "pause after each step")
	timeout := flag.Duration("timeout", 20*time.Second, "overall deadline")
	maxRetries := flag.Int("max-retries", 0, "reconnection attempts per stream (0: SDK default, negative: none)")
	version := flag.String("protocol-version", refpeer.ResumableProtocolVersion, "protocol revision to request")
	requireResume := flag.Bool("require-resume", true, "fail if the stream was closed but never resumed with Last-Event-ID")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: client [flags] URL")
		flag.PrintDefaults()
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{
		Endpoint:        flag.Arg(0),
		MaxRetries:      *maxRetries,
		ProtocolVersion: *version,
		Count:           *count,
		CloseAfter:      closeAfter,
		Delay:           *delay,
		RequireResume:   *requireResume,
	})
	out := struct {
		OK    bool   `json:"ok"`
		Error string `json:"error,omitempty"`
		*refpeer.Result
	}{OK: err == nil, Result: res}
	if err != nil {
		out.Error = err.Error()
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
	if err != nil {
		os.Exit(1)
	}
}
