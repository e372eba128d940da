package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestActivityFromProc(t *testing.T) {
	proc := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10/cmdline", "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups\x00")
	write("11/cmdline", "sshd: alice@pts/0\x00")
	write("12/cmdline", "sshd: bob@notty\x00")
	write("13/cmdline", "/usr/bin/python3\x00-m\x00ipykernel_launcher\x00-f\x00k.json\x00")
	write("14/cmdline", "bash\x00")
	write("self/cmdline", "sshd: nobody@pts/9\x00") // not a pid
	write("stat", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 2 3 4\n")
	m := &activityMeter{proc: proc, nvidiaChecked: true, noNvidiaSMI: true}
	t0 := time.Unix(1000, 0)
	a := m.report(t0)
	if a == nil || a.SSHSessions != 2 || a.JupyterKernels != 1 || a.CPUPercent != 0 {
		t.Fatalf("first report: %+v", a)
	}
	if m.report(t0.Add(time.Second)) != nil {
		t.Error("a report within ActivityEvery of the last")
	}
	write("stat", "cpu  150 0 150 900 0 0 0 0 0 0\n") // +100 busy of +200
	if a := m.report(t0.Add(ActivityEvery)); a == nil || a.CPUPercent != 50 {
		t.Errorf("second report: %+v, want CPU 50 %%", a)
	}
}
