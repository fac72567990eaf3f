package jsonrpc

import "encoding/binary"

// The members Scan looks at.
const (
	keyOther = iota
	keyVersion
	keyMethod
	keyID
	keyParams
	keyResult
	keyError
)

var keyNames = [...]string{keyVersion: "jsonrpc", keyMethod: "method", keyID: "id",
	keyParams: "params", keyResult: "result", keyError: "error"}

func whichKey(name []byte, flags uint8) int {
	if flags == 0 {
		switch string(name) {
		case "jsonrpc":
			return keyVersion
		case "method":
			return keyMethod
		case "id":
			return keyID
		case "params":
			return keyParams
		case "result":
			return keyResult
		case "error":
			return keyError
		}
		return keyOther
	}
	for k := keyVersion; k < len(keyNames); k++ {
		if equalString(name, flags, keyNames[k]) {
			return k
		}
	}
	return keyOther
}

// Member names as compact JSON writes them, quote to colon, read as one
// word (or half of one) for knownKey.
var (
	wordVersion = binary.LittleEndian.Uint64([]byte(`"jsonrpc`)) // then `":`
	wordMethod  = binary.LittleEndian.Uint64([]byte(`"method"`)) // then `:`
	wordParams  = binary.LittleEndian.Uint64([]byte(`"params"`)) // then `:`
	wordResult  = binary.LittleEndian.Uint64([]byte(`"result"`)) // then `:`
	wordError   = binary.LittleEndian.Uint64([]byte(`"error":`))
	halfID      = binary.LittleEndian.Uint32([]byte(`"id"`)) // then `:`
	half20      = binary.LittleEndian.Uint32([]byte(`"2.0`)) // then `"`
	word20Comma = binary.LittleEndian.Uint64([]byte(`":"2.0",`))
)

// knownKey recognises, at data[i] (a quote), the name of a member Scan
// looks at, written as compact JSON writes it: plain, and followed at
// once by its colon. It returns the key and the index after the colon,
// or 0 for after when the name is another or written otherwise, which
// the caller then reads byte by byte. A name it recognises is exactly
// what the byte-by-byte reading would find: these bytes are a whole
// string with no escape, then the colon.
func knownKey(data []byte, i int) (key, after int) {
	if len(data)-i < 10 {
		return keyOther, 0
	}
	w := binary.LittleEndian.Uint64(data[i:])
	switch {
	case w == wordVersion && data[i+8] == '"' && data[i+9] == ':':
		return keyVersion, i + 10
	case w == wordMethod && data[i+8] == ':':
		return keyMethod, i + 9
	case w == wordParams && data[i+8] == ':':
		return keyParams, i + 9
	case w == wordResult && data[i+8] == ':':
		return keyResult, i + 9
	case w == wordError:
		return keyError, i + 8
	case uint32(w) == halfID && data[i+4] == ':':
		return keyID, i + 5
	}
	return keyOther, 0
}

// isVersion20 reports whether the string at data[i] is "2.0", written
// plain: a whole string with no escape.
func isVersion20(data []byte, i int) bool {
	return len(data)-i >= 5 && binary.LittleEndian.Uint32(data[i:]) == half20 && data[i+4] == '"'
}

// versionFirst reports whether data[i:] starts with `"jsonrpc":"2.0",`, as
// nearly every message does right after its opening brace: the member
// that sets Version, and the comma that announces the next member.
func versionFirst(data []byte, i int) bool {
	return len(data)-i >= 16 && binary.LittleEndian.Uint64(data[i:]) == wordVersion &&
		binary.LittleEndian.Uint64(data[i+8:]) == word20Comma
}
