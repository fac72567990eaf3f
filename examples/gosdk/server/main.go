// Command server runs the refpeer Streamable HTTP server (official Go SDK,
// event store on) until SIGINT or SIGTERM. With -stateless it serves the
// stateless handler instead (revision 2026-07-28, and 2025-11-25 without
// sessions).
//
//	go run ./examples/gosdk/server [-listen 127.0.0.1:0] [-retry-after 100ms] [-stateless]
//
// When it accepts connections it prints "LISTENING http://HOST:PORT/mcp".
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/examples/internal/serve"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	retry := flag.Duration("retry-after", refpeer.DefaultRetryAfter, "SSE retry sent when the tool closes its stream (negative: none)")
	verbose := flag.Bool("v", false, "log the SDK's debug lines to stderr")
	stateless := flag.Bool("stateless", false, "serve statelessly (2026-07-28; no sessions, no event store)")
	flag.Parse()

	opts := refpeer.ServerOptions{RetryAfter: *retry}
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	mux := http.NewServeMux()
	if *stateless {
		mux.Handle("/mcp", refpeer.NewStatelessHandler(opts))
	} else {
		mux.Handle("/mcp", refpeer.NewHandler(opts))
	}

	return serve.Run(*listen, "/mcp", mux)
}
