package trace

import (
	"strconv"
	"strings"
	"testing"
)

// TestStandInsBounded: the stand-ins of redacted session ids are bounded
// in count (the oldest forgotten past maxStandIns) and in bytes (a long id
// kept by its digest), and an id seen again while remembered keeps its
// stand-in.
func TestStandInsBounded(t *testing.T) {
	r := redactor{sessions: map[string]string{}}
	long := strings.Repeat("x", 60000)
	if a, b := r.session(long+"1"), r.session(long+"1"); a != "session-1" || b != a {
		t.Fatalf("a long id: %q then %q, want session-1 twice", a, b)
	}
	for i := range maxStandIns + 1000 {
		id := "id-" + strconv.Itoa(i+2)
		if i%64 == 0 {
			id = long + id
		}
		r.session(id)
	}
	if n := len(r.sessions); n != maxStandIns {
		t.Errorf("%d stand-ins remembered, want %d", n, maxStandIns)
	}
	bytes := 0
	for k := range r.sessions {
		bytes += len(k)
	}
	if bytes > maxStandIns*maxKeyLen {
		t.Errorf("the remembered keys hold %d bytes", bytes)
	}
	last := "id-" + strconv.Itoa(maxStandIns+1001)
	if s := r.session(last); s != "session-"+strconv.Itoa(maxStandIns+1001) {
		t.Errorf("the last id seen: %q", s)
	}
	if s := r.session(long + "1"); s == "session-1" {
		t.Errorf("the first id, forgotten, kept its stand-in %q", s)
	}
}
