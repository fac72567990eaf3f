// Command server runs the mcp-go (github.com/mark3labs/mcp-go v1.2.1)
// example server until SIGINT or SIGTERM.
//
//	go run ./examples/mcpgo/server [-listen 127.0.0.1:0] [-transport streamable|sse] [-no-event-store]
//
// When it accepts connections it prints "LISTENING http://HOST:PORT/mcp"
// (or /sse for the legacy transport).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("LISTENING http://%s%s\n", ln.Addr(), path)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Event streams never end on their own; give calls a moment, then cut.
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	srv.Close()
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
