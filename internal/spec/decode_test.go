package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Aliases can make a small file describe a huge tree; decoding must stay fast.
func TestAliasBombs(t *testing.T) {
	var merge, seq strings.Builder
	merge.WriteString("a0: &a0 {x: 1}\n")
	seq.WriteString("command: x\nservices:\n  s:\n    properties:\n      a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n")
	for i := 1; i < 10; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 50), ", ")
		fmt.Fprintf(&merge, "a%d: &a%d {<<: [%s]}\n", i, i, refs)
		fmt.Fprintf(&seq, "      a%d: &a%d [%s]\n", i, i, refs)
	}
	merge.WriteString("command: x\nresources: {<<: *a9}\n")
	for yml, want := range map[string]string{merge.String(): "a9: unknown field", seq.String(): "too many nested values"} {
		start := time.Now()
		_, _, _, err := parseJob(t, yml, nil)
		checkErr(t, err, want)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"command", "compute", "code", "inputs", "environment", "id"}
	tests := []struct{ in, want string }{
		{"commnd", "command"}, {"enviroment", "environment"}, {"inptus", "inputs"}, {"Command", "command"},
		{"x", ""}, {"resources", ""}, {"cod", "code"},
	}
	for _, tt := range tests {
		diff(t, closest(tt.in, names), tt.want)
	}
}

func TestEnumNormalisation(t *testing.T) {
	allowed := []string{"uri_folder", "ro_mount", "maximize", "pytorch"}
	tests := []struct{ in, want string }{
		{"uri_Folder", "uri_folder"}, {"UriFolder", "uri_folder"}, {"RO_MOUNT", "ro_mount"}, {"Maximize", "maximize"},
		{"PyTorch", "pytorch"}, {"uri-folder", "uri_folder"}, {"folder", ""},
	}
	for _, tt := range tests {
		diff(t, matchEnum(tt.in, allowed), tt.want)
	}
}
