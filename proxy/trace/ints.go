package trace

import "strconv"

// appendInt appends v in decimal.
func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// appendUint appends v in decimal.
func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }
