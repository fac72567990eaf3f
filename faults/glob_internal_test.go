package faults

import (
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "tools/call", true},
		{"notifications/*", "notifications/progress", true},
		{"notifications/*", "notifications", false},
		{"tools/call", "tools/call", true},
		{"tools/call", "tools/calls", false},
		{"*/list", "tools/list", true},
		{"*/list", "tools/list/x", false},
		{"t?ols/*", "tools/a/b", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
		if got := glob(tt.pattern, []byte(tt.s)); got != tt.want {
			t.Errorf("glob(%q, []byte %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestScheduleWindow(t *testing.T) {
	s := schedule{after: 10, active: 3, every: 5}
	want := map[int]bool{9: false, 10: true, 12: true, 13: false, 14: false, 15: true, 18: false, 20: true}
	for at, w := range want {
		if got := s.on(time.Duration(at)); got != w {
			t.Errorf("on(%d) = %v, want %v", at, got, w)
		}
	}
}
