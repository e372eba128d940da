package kubernetes

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Kubernetes' sinceTime has whole seconds: the lines of that second up to since are dropped; a
// line longer than maxLogLine is cut, and the next one still comes.
func TestCopyAfter(t *testing.T) {
	long := strings.Repeat("x", maxLogLine+10)
	in := "2026-11-24T06:00:01.100Z seen\n2026-11-24T06:00:01.200Z new\n2026-11-24T06:00:02Z " + long + "\n2026-11-24T06:00:03Z last"
	since := time.Date(2026, 11, 24, 6, 0, 1, 100e6, time.UTC)
	for _, tc := range []struct {
		name  string
		since time.Time
		want  []string // line prefixes
	}{
		{"from the start", time.Time{}, []string{"2026-11-24T06:00:01.100Z seen", "2026-11-24T06:00:01.200Z new", "2026-11-24T06:00:02Z xxx", "2026-11-24T06:00:03Z last"}},
		{"after since", since, []string{"2026-11-24T06:00:01.200Z new", "2026-11-24T06:00:02Z xxx", "2026-11-24T06:00:03Z last"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := copyAfter(&out, strings.NewReader(in), tc.since); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d", len(lines), len(tc.want))
			}
			for i, l := range lines {
				if !strings.HasPrefix(l, tc.want[i]) || len(l) > maxLogLine {
					t.Errorf("line %d: %.60q (%d bytes), want it to start %q", i, l, len(l), tc.want[i])
				}
			}
		})
	}
}
