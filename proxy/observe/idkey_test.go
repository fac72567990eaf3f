package observe

import (
	"strings"
	"testing"
)

func TestIDKey(t *testing.T) {
	short := strings.Repeat("a", MaxIDKey)
	if IDKey(short) != short || string(IDKeyBytes([]byte(short))) != short {
		t.Errorf("an id of %d bytes is not kept as it is", MaxIDKey)
	}
	long := strings.Repeat("a", 500_000)
	k := IDKey(long)
	if len(k) > idKeyLen || !strings.HasPrefix(k, "sha256:") || !strings.HasSuffix(k, ":500000") {
		t.Errorf("the key of a 500,000-byte id is %q", k)
	}
	if string(IDKeyBytes([]byte(long))) != k {
		t.Error("IDKey and IDKeyBytes differ")
	}
	if other := IDKey(long[:len(long)-1] + "b"); other == k {
		t.Error("two long ids that differ have one key")
	}
	if n := testing.AllocsPerRun(100, func() { _ = IDKey(short) }); n != 0 {
		t.Errorf("IDKey of a short id allocates %v times", n)
	}
}
