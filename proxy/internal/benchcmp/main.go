// Command benchcmp reads the output of proxy's BenchmarkStream and checks
// fray against httputil.ReverseProxy:
//
//	go test -run XXX -bench BenchmarkStream -benchtime 20000x ./proxy/ | go run ./proxy/internal/benchcmp
//
// It copies its input to stdout, then prints, for each setup, the median
// over runs (-count) of events/s, p50-µs and p99-µs, the latency each proxy
// adds over direct, and the ratios fray/reverseproxy. It exits 1 when fray
// streams fewer than 0.9× the reverse proxy's events/s, adds more than
// 1.2× its p50 latency, or when the input holds a failure or lacks one of
// the setups; 2 on bad flags. The p99 ratio is printed for information.
//
// Flags:
//
//	-min-events 0.9   lowest accepted fray/reverseproxy events/s ratio
//	-max-p50 1.2      highest accepted fray/reverseproxy added-p50 ratio
//	-q                do not copy the input
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	fs := flag.NewFlagSet("benchcmp", flag.ContinueOnError)
	var lim Limits
	fs.Float64Var(&lim.MinEvents, "min-events", 0.9, "lowest accepted fray/reverseproxy events/s ratio")
	fs.Float64Var(&lim.MaxP50, "max-p50", 1.2, "highest accepted fray/reverseproxy added-p50 ratio")
	quiet := fs.Bool("q", false, "do not copy the input")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	var echo io.Writer
	if !*quiet {
		echo = os.Stdout
	}
	if err := run(os.Stdin, os.Stdout, echo, lim); err != nil {
		fmt.Fprintln(os.Stderr, "benchcmp:", err)
		os.Exit(1)
	}
}

// run reads benchmark output from in, copies it to echo when not nil,
// writes the comparison to out, and returns an error when fray misses a
// limit or the input cannot be compared.
func run(in io.Reader, out, echo io.Writer, lim Limits) error {
	if echo != nil {
		in = io.TeeReader(in, echo)
	}
	res, err := Parse(in)
	if err != nil {
		return err
	}
	cmp, err := Compare(res)
	if err != nil {
		return err
	}
	cmp.Write(out, lim)
	return cmp.Check(lim)
}
