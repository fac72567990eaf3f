package jsonrpc

// Eight bytes at a time: a byte of a word w is special inside a string when
// it is a quote, a backslash, below 0x20 or at or above 0x80. For each test
// the lowest byte flagged is exact (a borrow only runs upwards from a byte
// that matched), which is all skipString needs.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special flags, in the high bit of each byte, the bytes of w that are not
// plain string content; the lowest flag is the first such byte. Below the
// first such byte no subtraction borrows or sets a high bit: a plain byte
// is at least 0x20, and neither a quote nor a backslash, so it minus 0x20,
// and it xor '"' or '\\' (not zero) minus one, all stay under 0x80. At
// that byte one of the four sets its high bit: minus 0x20 for a control
// byte, an xor that is zero minus one for a quote or a backslash, the
// byte itself from 0x80 on. Above it, flags may be false (a borrow runs
// upwards), which does not matter. (The usual zero-byte test also masks
// each term with the complement of its operand, to be exact everywhere;
// the first flag does not need it.)
func special(w uint64) uint64 {
	q := w ^ '"'*ones
	b := w ^ '\\'*ones
	return ((w - 0x20*ones) | (q - ones) | (b - ones) | w) & highs
}
