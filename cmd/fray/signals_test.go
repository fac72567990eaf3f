package main

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestFirstSignalSaysDraining: the first SIGINT ends the soft context and
// says that fray is draining; the second ends the hard one.
func TestFirstSignalSaysDraining(t *testing.T) {
	var out syncBuffer
	soft, hard, stop := stopSignals(context.Background(), &out)
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-soft.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first SIGINT did not end the soft context")
	}
	if got := out.String(); got != drainingLine+"\n" {
		t.Errorf("said %q, want %q", got, drainingLine)
	}
	if hard.Err() != nil {
		t.Error("the first SIGINT ended the hard context")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hard.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGINT did not end the hard context")
	}
}
