package jsonrpc

import "testing"

// TestSkipAcrossFastDepth: values nested around the depth where the
// recursive skip hands over to the explicit stack, and around the nesting
// limit, valid or broken at every level, are JSON to Scan exactly when
// they are to encoding/json.
func TestSkipAcrossFastDepth(t *testing.T) {
	checkNested(t, []int{0, 1, fastDepth - 2, fastDepth - 1, fastDepth, fastDepth + 1, 2 * fastDepth, maxDepth - 3, maxDepth - 2, maxDepth - 1},
		`"x"`, `{}`, `[]`, `{"a":[true,null,-1.5e3]}`, `"\u00e9\n"`,
		`tru`, `{"a"}`, `[1,]`, `{,}`, `"\x01"`, `01`, `{"a":1,}`, `[1 2]`, `"\ud800"`)
}
