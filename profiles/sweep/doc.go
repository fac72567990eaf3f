// Package sweep holds the decisions of fray sweep and fray shrink, apart
// from any I/O: which streams a run without faults showed, the cut points
// they offer and the profile that cuts each one, the firings of a failing
// run named by their place in the traffic, the profile that fires a subset
// of them, and delta debugging (ddmin) over those firings.
//
// Runs are made by the caller (cmd/fray): this package only reads
// observations and reports, and writes profiles and results.
package sweep
