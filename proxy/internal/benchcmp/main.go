// Command benchcmp reads the output of proxy's BenchmarkStream and checks
// fray, as `fray proxy` runs it (the verifier and the metrics attached),
// against httputil.ReverseProxy on the same upstream:
//
//	go test -run XXX -bench BenchmarkStream -benchtime 200000x -count 5 ./proxy/forward/ | go run ./proxy/internal/benchcmp
//
// It copies its input to stdout, then prints, for each regime (paced: one
// event per upstream write; bulk: a thousand per write), the median over
// runs (-count) of each setup's events/s, CPU per event, p50 and p99
// latency and added p50; then the ratios, each computed within a run (the
// setups of a run take turns on the same machine) and reduced to their
// median over runs, with the lowest and highest run beside it. Where the
// benchmark reports steal-% (Linux), the table shows it, and a regime in
// which the hypervisor took 5% or more of the machine's CPU time from a
// setup is said to have run on a contended machine; steal changes no
// verdict. It exits 1 when a ratio misses its bound, or when the
// input holds a failure or lacks a setup or a regime; 2 on bad flags. An
// input with one regime alone (-bench BenchmarkStream/paced) has that
// regime compared and printed all the same, and exits 1 naming the other.
//
// Flags, with their defaults:
//
//	-min-paced-events 1.0  lowest fray-shipped/reverseproxy events/s, paced
//	-max-paced-p50 1.2     highest fray-shipped/reverseproxy added p50, paced
//	-min-bulk-events 0.5   lowest fray-shipped/reverseproxy events/s, bulk
//	-max-bulk-cpu 3        highest fray-shipped/reverseproxy CPU per event, bulk
//	-max-trace-ns 500      highest CPU per event the trace adds (fray-traced
//	                       minus fray-shipped), bulk, in nanoseconds
//	-q                     do not copy the input
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	fs := flag.NewFlagSet("benchcmp", flag.ContinueOnError)
	lim := DefaultLimits
	fs.Float64Var(&lim.MinPacedEvents, "min-paced-events", lim.MinPacedEvents, "lowest fray-shipped/reverseproxy events/s, paced")
	fs.Float64Var(&lim.MaxPacedP50, "max-paced-p50", lim.MaxPacedP50, "highest fray-shipped/reverseproxy added p50, paced")
	fs.Float64Var(&lim.MinBulkEvents, "min-bulk-events", lim.MinBulkEvents, "lowest fray-shipped/reverseproxy events/s, bulk")
	fs.Float64Var(&lim.MaxBulkCPU, "max-bulk-cpu", lim.MaxBulkCPU, "highest fray-shipped/reverseproxy CPU per event, bulk")
	fs.Float64Var(&lim.MaxTraceNS, "max-trace-ns", lim.MaxTraceNS, "highest CPU per event the trace adds, bulk (ns)")
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
// writes the comparison to out, and returns an error when a ratio misses
// its limit or the input cannot be compared.
func run(in io.Reader, out, echo io.Writer, lim Limits) error {
	if echo != nil {
		in = io.TeeReader(in, echo)
	}
	res, err := Parse(in)
	if err != nil {
		return err
	}
	cmp, err := Compare(res, lim)
	if err != nil {
		return err
	}
	cmp.Write(out)
	return cmp.Check()
}
