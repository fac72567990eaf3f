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

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

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

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("LISTENING http://%s/mcp\n", ln.Addr())

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Standalone SSE streams never end on their own; give in-flight calls a
	// moment, then cut what is left.
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
