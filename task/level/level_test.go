package level

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name string
		want Level
	}{
		{"", Level{}},
		{"easy", Level{Small: true}},
		{"h1", Level{Small: true, Horizon: 1}},
		{"h8", Level{Small: true, Horizon: 8}},
		{"h24", Level{Small: true, Horizon: 24}},
	} {
		got, err := Parse(tt.name)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	for _, name := range []string{"hard", "h", "h0", "h-3", "hx", "H8", "easy2", " easy"} {
		if got, err := Parse(name); err == nil || !strings.Contains(err.Error(), "unknown level") {
			t.Errorf("Parse(%q) = %+v, %v; want an unknown-level error", name, got, err)
		}
	}
}
