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

// maxDepth bounds how deep a profile's keys nest: the parts of a dotted
// key, the tables and arrays around it. A profile needs five at most; a
// document nested deeper would only cost memory to decode.
const maxDepth = 32

// positions maps key paths ("fault[2].delay", "checks.client.retry") to
// where they were written. go-toml's decoder gives positions only for
// syntax errors, so the document is walked a second time with its
// parser to place every key and value. The paths are kept as a tree of
// their parts, each part once, so that the index takes memory in
// proportion to the document, however long its dotted keys.
type positions struct {
	lineStarts []int
	root       posNode
	// deep is where the first part nested past maxDepth was written;
	// deepAt is set when there is one.
	deep   pos
	deepAt bool
}

// posNode is one part of a key path ("fault", "[2]", "delay") and where
// the path to it was first written.
type posNode struct {
	pl    place
	set   bool
	depth int
	kids  map[string]*posNode
}

// indexPositions walks data; if the parser stops on a syntax error, the
// keys seen so far are kept.
func indexPositions(data []byte) *positions {
	ix := &positions{lineStarts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			ix.lineStarts = append(ix.lineStarts, i+1)
		}
	}
	var p unstable.Parser
	p.Reset(data)
	arrays := map[*posNode]int{}
	table := &ix.root
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = ix.header(n, arrays)
		case unstable.KeyValue:
			if table != nil {
				ix.keyValue(table, n)
			}
		}
	}
	return ix
}

// child returns part's node under n, making it; nil past maxDepth, when
// it records at as the place of the first such part.
func (ix *positions) child(n *posNode, part string, at pos) *posNode {
	if n == nil {
		return nil
	}
	if c := n.kids[part]; c != nil {
		return c
	}
	if n.depth >= maxDepth {
		if !ix.deepAt {
			ix.deep, ix.deepAt = at, true
		}
		return nil
	}
	if n.kids == nil {
		n.kids = map[string]*posNode{}
	}
	c := &posNode{depth: n.depth + 1}
	n.kids[part] = c
	return c
}

// place records pl for n unless it has a place already.
func (n *posNode) place(pl place) {
	if n != nil && !n.set {
		n.pl, n.set = pl, true
	}
}

// header records a [table] or [[array]] header and returns its node.
func (ix *positions) header(n *unstable.Node, arrays map[*posNode]int) *posNode {
	node := &ix.root
	var at pos
	it := n.Key()
	for it.Next() && node != nil {
		k := it.Node()
		at = ix.of(k.Raw)
		node = ix.child(node, keyPart(string(k.Data)), at)
		// Every table the header names, an array's own name included, is
		// placed where it first appears.
		node.place(place{at, at})
		if node == nil {
			break
		}
		if it.IsLast() && n.Kind == unstable.ArrayTable {
			arrays[node]++
			node = ix.child(node, indexPart(arrays[node]-1), at)
		} else if c, ok := arrays[node]; ok {
			node = ix.child(node, indexPart(c-1), at)
		}
	}
	node.place(place{at, at})
	return node
}

// keyValue records a key = value line under the table node.
func (ix *positions) keyValue(table *posNode, n *unstable.Node) {
	node := table
	var at pos
	it := n.Key()
	for it.Next() && node != nil {
		k := it.Node()
		at = ix.of(k.Raw)
		node = ix.child(node, keyPart(string(k.Data)), at)
		if !it.IsLast() {
			node.place(place{at, at})
		}
	}
	if node != nil {
		ix.value(node, at, n.Value())
	}
}

// value records a value at node, and what is inside arrays and inline
// tables.
func (ix *positions) value(node *posNode, key pos, v *unstable.Node) {
	vp := key
	if v.Raw != (unstable.Range{}) {
		vp = ix.of(v.Raw)
	}
	node.place(place{key, vp})
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				ix.keyValue(node, c)
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
			if e := ix.child(node, indexPart(i), vp); e != nil {
				ix.value(e, vp, c)
			}
			i++
		}
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
	var found place
	ok := false
	node := &ix.root
	for part := range pathParts(path) {
		if node = node.kids[part]; node == nil {
			break
		}
		if node.set {
			found, ok = node.pl, true
		}
	}
	return found, ok
}

// pathParts yields the parts of a path as joinKey and indexKey write them:
// "a.\"b.c\"[2]" gives a, "b.c" (quoted) and [2].
func pathParts(path string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		quoted, start := false, 0
		emit := func(end int) bool {
			part := path[start:end]
			return part == "" || yield(part)
		}
		for i := 0; i < len(path); i++ {
			switch c := path[i]; {
			case c == '"' && (i == 0 || path[i-1] != '\\'):
				quoted = !quoted
			case quoted:
			case c == '.':
				if !emit(i) {
					return
				}
				start = i + 1
			case c == '[':
				if !emit(i) {
					return
				}
				start = i
			case c == ']':
				if !emit(i + 1) {
					return
				}
				start = i + 1
			}
		}
		emit(len(path))
	}
}

// joinKey appends key to path, quoting it unless it is a bare TOML key.
func joinKey(path, key string) string {
	key = keyPart(key)
	if path == "" {
		return key
	}
	return path + "." + key
}

// keyPart is key as a part of a path: quoted unless it is a bare TOML key.
func keyPart(key string) string {
	if !isBare(key) {
		return strconv.Quote(key)
	}
	return key
}

func indexKey(path string, i int) string { return path + indexPart(i) }

func indexPart(i int) string { return "[" + strconv.Itoa(i) + "]" }

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
