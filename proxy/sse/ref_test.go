package sse

import (
	"bytes"
	"strconv"
)

// refParse is a deliberately plain reading of the WHATWG parsing rules,
// applied to a whole stream held in memory. The Reader is checked against it.
func refParse(in []byte) view {
	var v view
	in = bytes.TrimPrefix(in, bom)
	var typ, data, idBuf []byte
	for {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			return v // a cut line and a cut block are discarded
		}
		line := in[:i]
		n := i + 1
		if in[i] == '\r' && n < len(in) && in[n] == '\n' {
			n++
		}
		in = in[n:]
		if len(line) == 0 {
			v.LastID = string(idBuf)
			if len(data) > 0 {
				t := "message"
				if len(typ) > 0 {
					t = string(typ)
				}
				d := data[:len(data)-1]
				v.Msgs = append(v.Msgs, msg{Type: t, Data: string(d), LastID: v.LastID, Retry: v.Retry})
			}
			typ, data = nil, nil
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			name, value = line[:c], line[c+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(name) {
		case "event":
			typ = append([]byte(nil), value...)
		case "data":
			data = append(append(data, value...), '\n')
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				idBuf = append([]byte(nil), value...)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 63); err == nil && isDigits(value) {
				v.Retry = int64(ms)
			} else if isDigits(value) && len(value) > 0 {
				v.Retry = 1<<63 - 1
			}
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
