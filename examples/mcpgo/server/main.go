// Command server runs the mcp-go (github.com/mark3labs/mcp-go v1.2.1)
// example server until SIGINT or SIGTERM.
//
//	go run ./examples/mcpgo/server [-listen 127.0.0.1:0] [-transport streamable|sse] [-no-event-store]
//
// When it accepts connections it prints "LISTENING http://HOST:PORT/mcp"
// (or /sse for the legacy transport).
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/frayproxy/fray/examples/internal/serve"
	"github.com/frayproxy/fray/examples/mcpgo/mcpgopeer"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	kind := flag.String("transport", mcpgopeer.Streamable, "streamable or sse")
	noStore := flag.Bool("no-event-store", false, "serve Streamable HTTP without an event store (no ids, no resumption)")
	verbose := flag.Bool("v", false, "log mcp-go's lines to stderr")
	flag.Parse()

	var h http.Handler
	path := "/mcp"
	switch *kind {
	case mcpgopeer.Streamable:
		opts := mcpgopeer.ServerOptions{NoEventStore: *noStore}
		if *verbose {
			opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		h = mcpgopeer.NewStreamableHandler(opts)
	case mcpgopeer.SSE:
		h, path = mcpgopeer.NewSSEHandler(), "/sse"
	default:
		return fmt.Errorf("-transport %q: want streamable or sse", *kind)
	}

	return serve.Run(*listen, path, h)
}
