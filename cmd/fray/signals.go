package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals returns a context that ends with ctx or at the first SIGINT
// or SIGTERM (stop gracefully), and one that ends at the second (stop now;
// ctx ending does not end it). At the first signal it says on w that fray
// is draining, so that the wait is not silence. stop releases the signals.
func stopSignals(ctx context.Context, w io.Writer) (soft, hard context.Context, stop func()) {
	soft, cancelSoft := context.WithCancel(ctx)
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			select {
			case <-ch:
				if n == 1 {
					fmt.Fprintln(w, drainingLine)
					cancelSoft()
				} else {
					cancelHard()
				}
			case <-done:
				return
			}
		}
	}()
	return soft, hard, func() {
		signal.Stop(ch)
		close(done)
		cancelSoft()
		cancelHard()
	}
}

// drainingLine is said at the first signal.
const drainingLine = "fray: draining; Ctrl-C again to stop now"
