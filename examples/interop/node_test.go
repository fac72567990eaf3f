package interop_test

import (
	"strings"
	"testing"

	"github.com/frayproxy/fray/examples/node/nodepeer"
)

// requireNode returns the Node environment, skipping the test loudly if node
// or npm is missing and running npm ci once if the dependencies are not
// installed yet.
func requireNode(t *testing.T) nodepeer.Env {
	t.Helper()
	return nodepeer.Require(t, "../node", "the TypeScript SDK and conformance interop tests")
}

// lastJSONLine returns the last line of out that looks like a JSON object.
func lastJSONLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}
