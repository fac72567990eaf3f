package verify

// dataHash hashes the data of an SSE event block (its data lines joined
// with LF, as a client sees them), so that a replayed event can be told
// from another event that reuses its id. It follows the WHATWG line rules
// (CR, LF or CRLF ends a line; one space after the colon is dropped) and
// does not allocate.
func dataHash(raw []byte) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	first := true
	for len(raw) > 0 {
		end, next := len(raw), len(raw)
		for i, c := range raw {
			if c == '\n' || c == '\r' {
				end, next = i, i+1
				if c == '\r' && i+1 < len(raw) && raw[i+1] == '\n' {
					next = i + 2
				}
				break
			}
		}
		line := raw[:end]
		raw = raw[next:]
		if len(line) < 4 || string(line[:4]) != "data" || len(line) > 4 && line[4] != ':' {
			continue
		}
		val := line[min(len(line), 5):]
		if len(val) > 0 && val[0] == ' ' {
			val = val[1:]
		}
		if !first {
			h = (h ^ '\n') * prime
		}
		first = false
		for _, c := range val {
			h = (h ^ uint64(c)) * prime
		}
	}
	return h
}
