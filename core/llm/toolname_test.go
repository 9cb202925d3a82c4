package llm

import (
	"strings"
	"testing"
)

// TestValidToolName: the doors' tool-name pattern, ^[a-zA-Z0-9_-]{1,max}$, with max the door's.
func TestValidToolName(t *testing.T) {
	for _, tt := range []struct {
		name string
		max  int
		want bool
	}{
		{"get_weather-2", 64, true},
		{strings.Repeat("f", 64), 64, true},
		{strings.Repeat("f", 65), 64, false},
		{strings.Repeat("f", 65), 128, true},
		{strings.Repeat("f", 129), 128, false},
		{"", 128, false},
		{"get.weather", 128, false},
		{"get weather", 128, false},
		{"wetter_é", 128, false},
	} {
		if got := ValidToolName(tt.name, tt.max); got != tt.want {
			t.Errorf("ValidToolName(%q, %d) = %v, want %v", tt.name, tt.max, got, tt.want)
		}
	}
}
