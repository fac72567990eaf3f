package jsonrpc

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
