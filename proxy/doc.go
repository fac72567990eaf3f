// Package proxy assembles one fray: the proxy, the verifier that watches
// it, the trace writer, the metrics, the admin API, a graceful drain and the
// final report. `fray proxy`, `fray run`, `fray demo` and `fray check`, the
// benchmarks, the scale and soak harnesses, the interop tests and Go users
// (through package fraytest) all run this one engine, so what is measured
// and tested is what users run.
//
//	client <-> inflight (tracks every exchange, can end them) <-> proxy <-> upstream
//	                                                                |
//	                           observations: queue (events off the exchange's path; closed at shutdown)
//	                                                                |
//	                                  verifier, trace writer, metrics, watchers
//
// An Engine is built from Options by New; Serve serves clients on a
// listener until its context ends, then drains; Finish makes the final
// report. Profile changes made while it runs (Swap, SetEnabled, the admin
// API) are observations like any other: the trace records them, and the
// report and the timeline say what was in force when.
package proxy
