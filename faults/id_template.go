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
