package kubernetes

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// A restart of the image is one line, stamped at the end of the second Kubernetes gives as the
// ended container's finish (after its last line, which may fall in that second), until the
// relay has read past it; none without a restart.
func TestRestartLine(t *testing.T) {
	finished := time.Date(2026, 11, 24, 6, 0, 5, 0, time.UTC)
	cs := corev1.ContainerStatus{Name: serveContainer, RestartCount: 2, LastTerminationState: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 4, FinishedAt: metav1.NewTime(finished)}}}
	want := "2026-11-24T06:00:05.999999999Z the image exited with code 4; Kubernetes restarts it (restart 2)\n"
	for _, tc := range []struct {
		name  string
		cs    corev1.ContainerStatus
		since time.Time
		want  string
	}{
		{"from the start", cs, time.Time{}, want},
		{"the last line in that second", cs, finished.Add(300 * time.Millisecond), want},
		{"read already", cs, finished.Add(time.Second - time.Nanosecond), ""},
		{"never restarted", corev1.ContainerStatus{Name: serveContainer}, time.Time{}, ""},
	} {
		if got := restartLine(tc.cs, tc.since); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
