package timeline

import (
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// element is a start tag of a DOM Chromium dumped: its attributes and the
// text that follows it up to the next tag.
type element struct {
	tag  string
	attr map[string]string
	text string
}

type elements []*element

var (
	startTag = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:="[^"]*")?)*)\s*/?>([^<]*)`)
	attrRe   = regexp.MustCompile(`([^\s"'>/=]+)(?:="([^"]*)")?`)
)

// parseDOM reads the start tags of dom, in document order. Chromium
// writes every attribute value in double quotes, with '"' escaped, which
// is all this needs.
func parseDOM(dom string) elements {
	var out elements
	for _, m := range startTag.FindAllStringSubmatch(dom, -1) {
		e := &element{tag: strings.ToLower(m[1]), attr: map[string]string{}, text: html.UnescapeString(m[3])}
		for _, a := range attrRe.FindAllStringSubmatch(m[2], -1) {
			e.attr[a[1]] = html.UnescapeString(a[2])
		}
		out = append(out, e)
	}
	return out
}

func (e *element) hasClass(c string) bool { return slices.Contains(strings.Fields(e.attr["class"]), c) }

// first returns the first element with tag, nil when none.
func (es elements) first(tag string) *element {
	for _, e := range es {
		if e.tag == tag {
			return e
		}
	}
	return nil
}

// byID returns the element with id, nil when none.
func (es elements) byID(id string) *element {
	for _, e := range es {
		if e.attr["id"] == id {
			return e
		}
	}
	return nil
}

// withClass returns the elements of class c, in document order.
func (es elements) withClass(c string) elements {
	var out elements
	for _, e := range es {
		if e.hasClass(c) {
			out = append(out, e)
		}
	}
	return out
}

// style reads a length in px from the element's style attribute.
func (e *element) style(t *testing.T, prop string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?:^|;)\s*` + prop + `:\s*(-?[0-9.]+)px`).FindStringSubmatch(e.attr["style"])
	if m == nil {
		t.Fatalf("<%s class=%q> has no %s in style %q", e.tag, e.attr["class"], prop, e.attr["style"])
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// labelHeight is the height of every text label the page draws (page.css:
// .fault-label, .link-label, .retry-label, .run-label).
const labelHeight = 12

// laneLabels are the classes of the text labels drawn on the lanes, in
// one layer; run labels have a layer of their own above the time axis.
var laneLabels = []string{"fault-label", "link-label", "retry-label"}

// checkLabelsApart fails the test when two text labels of the classes
// overlap: their boxes, read from the positions and widths the page gave
// them, must be disjoint.
func checkLabelsApart(t *testing.T, els elements, classes ...string) {
	t.Helper()
	type box struct {
		e                        *element
		left, top, right, bottom float64
	}
	var boxes []box
	for _, c := range classes {
		for _, e := range els.withClass(c) {
			l, tp := e.style(t, "left"), e.style(t, "top")
			boxes = append(boxes, box{e, l, tp, l + e.style(t, "width"), tp + labelHeight})
		}
	}
	for i, a := range boxes {
		for _, b := range boxes[i+1:] {
			if a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom {
				t.Errorf("labels overlap: %q at (%.1f, %.1f)-(%.1f, %.1f) and %q at (%.1f, %.1f)-(%.1f, %.1f)",
					a.e.text, a.left, a.top, a.right, a.bottom, b.e.text, b.left, b.top, b.right, b.bottom)
			}
		}
	}
}
