package profiles

import (
	"sort"
	"strconv"

	"github.com/pelletier/go-toml/v2/unstable"
)

// pos is a 1-based line and column (in bytes, as go-toml counts them).
type pos struct{ line, col int }

// place is where a key and its value were written.
type place struct{ key, value pos }

// positions maps key paths ("fault[2].delay", "checks.client.retry") to
// where they were written. go-toml's decoder gives positions only for
// syntax errors, so the document is walked a second time with its
// parser to place every key and value.
type positions struct {
	lineStarts []int
	at         map[string]place
}

// indexPositions walks data, which must already have decoded without a
// syntax error; if the parser still stops, the keys seen so far are kept.
func indexPositions(data []byte) *positions {
	ix := &positions{at: map[string]place{}, lineStarts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			ix.lineStarts = append(ix.lineStarts, i+1)
		}
	}
	var p unstable.Parser
	p.Reset(data)
	arrays := map[string]int{}
	prefix := ""
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			prefix = ix.header(n, arrays)
		case unstable.KeyValue:
			ix.keyValue(prefix, n)
		}
	}
	return ix
}

// header records a [table] or [[array]] header and returns its path.
func (ix *positions) header(n *unstable.Node, arrays map[string]int) string {
	path := ""
	var at pos
	it := n.Key()
	for it.Next() {
		k := it.Node()
		path = joinKey(path, string(k.Data))
		at = ix.of(k.Raw)
		// Every table the header names, an array's own name included, is
		// placed where it first appears.
		ix.set(path, place{at, at})
		if it.IsLast() && n.Kind == unstable.ArrayTable {
			arrays[path]++
			path = indexKey(path, arrays[path]-1)
		} else if c, ok := arrays[path]; ok {
			path = indexKey(path, c-1)
		}
	}
	ix.set(path, place{at, at})
	return path
}

// keyValue records a key = value line under prefix.
func (ix *positions) keyValue(prefix string, n *unstable.Node) {
	path := prefix
	var at pos
	it := n.Key()
	for it.Next() {
		k := it.Node()
		path = joinKey(path, string(k.Data))
		at = ix.of(k.Raw)
		if !it.IsLast() {
			ix.set(path, place{at, at})
		}
	}
	ix.value(path, at, n.Value())
}

// value records a value at path, and what is inside arrays and inline
// tables.
func (ix *positions) value(path string, key pos, v *unstable.Node) {
	vp := key
	if v.Raw != (unstable.Range{}) {
		vp = ix.of(v.Raw)
	}
	ix.set(path, place{key, vp})
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				ix.keyValue(path, c)
			}
		}
	case unstable.Array:
		it := v.Children()
		i := 0
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			ix.value(indexKey(path, i), vp, c)
			i++
		}
	}
}

func (ix *positions) set(path string, pl place) {
	if _, ok := ix.at[path]; !ok {
		ix.at[path] = pl
	}
}

func (ix *positions) of(r unstable.Range) pos {
	off := int(r.Offset)
	line := sort.Search(len(ix.lineStarts), func(i int) bool { return ix.lineStarts[i] > off })
	return pos{line: line, col: off - ix.lineStarts[line-1] + 1}
}

// lookup returns where path was written, falling back to the closest
// enclosing key that has a position.
func (ix *positions) lookup(path string) (place, bool) {
	if ix == nil {
		return place{}, false
	}
	for path != "" {
		if pl, ok := ix.at[path]; ok {
			return pl, true
		}
		path = parentKey(path)
	}
	return place{}, false
}

// joinKey appends key to path, quoting it unless it is a bare TOML key.
func joinKey(path, key string) string {
	if !isBare(key) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexKey(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// parentKey drops the last part of a path ("a.b[2]" → "a.b" → "a").
func parentKey(path string) string {
	quoted := false
	cut := 0
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '"' && (i == 0 || path[i-1] != '\\'):
			quoted = !quoted
		case !quoted && (c == '.' || c == '['):
			cut = i
		}
	}
	return path[:cut]
}

func isBare(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
