package report

import (
	"fmt"
	"io"
	"strings"
)

// BoundReached starts the reason of an excuse that says one of fray's
// bounds was reached (a ledger full, an answer past what fray reads of
// it): what it counts was not judged, and the summary names it.
const BoundReached = "bound reached: "

// writeBounds writes a line for each excuse of r that says a bound was
// reached, with its check and count.
func writeBounds(ew io.Writer, r Report) {
	for _, c := range r.Checks {
		for _, e := range c.Excused {
			if reason, ok := strings.CutPrefix(e.Reason, BoundReached); ok {
				fmt.Fprintf(ew, "  not judged by %s: %s (%d)\n", c.ID, reason, e.Count)
			}
		}
	}
}
