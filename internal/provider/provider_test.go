package provider

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes: the cut must not split a character
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"blank lines", "\n  \n\t\n", ""},
		{"one line", "started agent\n", "started agent"},
		{"lines joined, blanks dropped", "a\n\n  b  \nc", "a | b | c"},
		{"last five lines", "1\n2\n3\n4\n5\n6\n7\n", "3 | 4 | 5 | 6 | 7"},
		{"cut to the tail on a character boundary", long, "…" + strings.Repeat("é", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summary(tt.in); got != tt.want {
				t.Errorf("Summary(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
