package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSkipAcrossFastDepth: values nested around the depth where the
// recursive skip hands over to the explicit stack, and around the nesting
// limit, valid or broken at every level, are JSON to Scan exactly when
// they are to encoding/json.
func TestSkipAcrossFastDepth(t *testing.T) {
	nest := func(levels int, inner string, object bool) string {
		var b strings.Builder
		for range levels {
			if object {
				b.WriteString(`{"k":`)
			} else {
				b.WriteString(`[1,`)
			}
		}
		b.WriteString(inner)
		for range levels {
			if object {
				b.WriteString(`}`)
			} else {
				b.WriteString(`]`)
			}
		}
		return b.String()
	}
	inners := []string{`"x"`, `{}`, `[]`, `{"a":[true,null,-1.5e3]}`, `"\u00e9\n"`,
		`tru`, `{"a"}`, `[1,]`, `{,}`, `"\x01"`, `01`, `{"a":1,}`, `[1 2]`, `"\ud800"`}
	for _, levels := range []int{0, 1, fastDepth - 2, fastDepth - 1, fastDepth, fastDepth + 1, 2 * fastDepth, maxDepth - 3, maxDepth - 2, maxDepth - 1} {
		for _, object := range []bool{false, true} {
			for _, inner := range inners {
				in := `{"id":1,"result":` + nest(levels, inner, object) + `}`
				got := Scan([]byte(in)).Kind != 0
				if want := json.Valid([]byte(in)); got != want {
					t.Errorf("%d levels of %s around %q: Scan calls it JSON %v, encoding/json %v", levels, map[bool]string{true: "objects", false: "arrays"}[object], inner, got, want)
				}
			}
		}
	}
}
