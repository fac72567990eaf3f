package observe

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// MaxIDKey is the longest id fray keeps as it is: event ids, session ids,
// JSON-RPC ids and methods, progress tokens, legacy endpoint paths. A
// peer may send ids of up to a head's or an event's size (megabytes); fray
// keeps a longer one by its digest (IDKey), so that what it remembers of
// each id takes a bounded number of bytes.
const MaxIDKey = 256

// idKeyLen is the length of an IDKey for an id over MaxIDKey: "sha256:",
// 64 hex digits, ":" and the length in decimal (at most 20 digits).
const idKeyLen = len("sha256:") + 2*sha256.Size + 1 + 20

// IDKey is the key by which fray keeps id: id itself when it is at most
// MaxIDKey bytes, else "sha256:", the hex digits of its SHA-256 digest, ":"
// and its length in bytes. Two ids have the same key exactly when they are
// equal (a digest collision aside), and no id of MaxIDKey bytes or fewer
// that a peer did not make so on purpose has the key of a longer one. A
// short id is returned as it is, with no allocation.
func IDKey(id string) string {
	if len(id) <= MaxIDKey {
		return id
	}
	return string(appendDigest(make([]byte, 0, idKeyLen), []byte(id)))
}

// IDKeyBytes is IDKey for an id held as bytes: id itself when it is at
// most MaxIDKey bytes, else its key in new storage.
func IDKeyBytes(id []byte) []byte {
	if len(id) <= MaxIDKey {
		return id
	}
	return appendDigest(make([]byte, 0, idKeyLen), id)
}

func appendDigest(dst, id []byte) []byte {
	sum := sha256.Sum256(id)
	dst = append(dst, "sha256:"...)
	dst = hex.AppendEncode(dst, sum[:])
	dst = append(dst, ':')
	return strconv.AppendInt(dst, int64(len(id)), 10)
}
