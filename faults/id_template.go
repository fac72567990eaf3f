package faults

import (
	"strings"
	"unicode"
)

// idTemplate is an id with "{id}" standing for the original one. A
// template without "{id}" is a fixed value; its bytes are shared between
// decisions, so receivers must not modify them.
type idTemplate struct {
	fixed  []byte
	prefix string
	suffix string
	uses   bool
}

func parseIDTemplate(a *Args, key string) idTemplate {
	s := a.String(key, "")
	if strings.ContainsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == 0 || !unicode.IsPrint(r) && r != ' ' }) {
		a.Fail(key, ErrRange, "%q holds a line break or control character, which an id cannot carry", s)
	}
	if strings.Count(s, "{id}") > 1 {
		a.Fail(key, ErrRange, "%q uses {id} more than once", s)
	}
	before, after, found := strings.Cut(s, "{id}")
	if !found {
		return idTemplate{fixed: []byte(s)}
	}
	return idTemplate{prefix: before, suffix: after, uses: true}
}

// idChunk is the size of the chunks expandInto carves ids from.
const idChunk = 4 << 10

// expandInto is expand, carving the id from *chunk (a new chunk when it
// has no room), so that a stream's rewritten ids cost one allocation per
// chunk rather than one each. Each id keeps its own bytes, as expand's
// do. With chunk nil it is expand.
func (t idTemplate) expandInto(chunk *[]byte, old []byte) []byte {
	if chunk == nil || !t.uses {
		return t.expand(old)
	}
	n := len(t.prefix) + len(old) + len(t.suffix)
	c := *chunk
	if cap(c)-len(c) < n {
		c = make([]byte, 0, max(idChunk, n))
	}
	start := len(c)
	c = append(append(append(c, t.prefix...), old...), t.suffix...)
	*chunk = c
	return c[start:len(c):len(c)]
}

// expand returns the new id for old.
func (t idTemplate) expand(old []byte) []byte {
	if !t.uses {
		return t.fixed
	}
	out := make([]byte, 0, len(t.prefix)+len(old)+len(t.suffix))
	out = append(out, t.prefix...)
	out = append(out, old...)
	return append(out, t.suffix...)
}
