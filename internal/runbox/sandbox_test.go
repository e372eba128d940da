package runbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/testwait"
)

// home lays out a workspace as a node has it: secrets and other runs beside the run's own
// directory, all under one home.
func home(t *testing.T) (h, run, other, exe string) {
	t.Helper()
	h = t.TempDir()
	run = filepath.Join(h, "runs", "mine")
	other = filepath.Join(h, "runs", "theirs")
	for _, d := range []string{run, other, filepath.Join(h, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe = filepath.Join(h, "bin", "hangar")
	for f, s := range map[string]string{
		filepath.Join(h, "secret.key"): "SECRET", filepath.Join(h, "token"): "TOKEN",
		filepath.Join(other, "supervisor.json"): "OTHER", filepath.Join(run, "mine.txt"): "MINE",
		exe: "#!/bin/sh\necho binary\n",
	} {
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h, run, other, exe
}

func sandboxed(t *testing.T, run string, o Options) *Box {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	needs(t, err == nil, "bubblewrap (scripts/setup/deps.sh installs it)")
	o.RunID, o.Dir, o.Sandbox = "mine", run, SandboxRequired
	b, _, err := Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestSandboxHidesTheWorkspace(t *testing.T) {
	h, run, other, exe := home(t)
	b := sandboxed(t, run, Options{Hide: []string{h}, Share: []string{run}, ReadOnly: []string{exe}})
	me := strconv.Itoa(os.Getpid())
	script := strings.Join([]string{
		"cat " + filepath.Join(h, "secret.key"),
		"cat " + filepath.Join(h, "token"),
		"cat " + filepath.Join(other, "supervisor.json"),
		"echo LS:$(ls " + filepath.Join(h, "runs") + ")",
		"cat /proc/" + me + "/root" + filepath.Join(h, "secret.key"), // through the caller's root
		"cat /proc/" + me + "/environ",
		"umount " + h,
		"cat " + filepath.Join(h, "secret.key"),
		"echo " + strings.Repeat("x", 3) + " > " + exe,
		"cat " + filepath.Join(run, "mine.txt"),
		"echo written > " + filepath.Join(run, "out.txt"),
		"sh " + exe,
	}, "; ")
	out, err := b.Command(false, run, os.Environ(), "bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Logf("exit: %v", err)
	}
	got := string(out)
	if !strings.Contains(got, "LS:mine\n") {
		t.Errorf("the run sees other runs' directories:\n%s", got)
	}
	for _, leak := range []string{"SECRET", "TOKEN", "OTHER", "HANGAR_TEST_ENV"} {
		if strings.Contains(got, leak) {
			t.Errorf("the sandboxed run read %s:\n%s", leak, got)
		}
	}
	for _, want := range []string{"MINE", "binary"} {
		if !strings.Contains(got, want) {
			t.Errorf("the run lost what it may see (%s):\n%s", want, got)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(run, "out.txt")); string(b) != "written\n" {
		t.Errorf("the run could not write its own directory: %q", b)
	}
	if b, _ := os.ReadFile(exe); !strings.Contains(string(b), "echo binary") {
		t.Errorf("the run overwrote the read-only binary: %q", b)
	}
}

func TestMain(m *testing.M) {
	os.Setenv("HANGAR_TEST_ENV", "1") // what /proc/<caller>/environ would leak
	os.Exit(m.Run())
}

// A SIGTERM through Signal reaches the command, which may clean up; bubblewrap then exits with
// the command's own status.
func TestSignalLetsTheCommandStopGracefully(t *testing.T) {
	_, run, _, _ := home(t)
	b := sandboxed(t, run, Options{})
	marker := filepath.Join(run, "cleaned")
	cmd := b.Command(false, run, os.Environ(), "bash", "-c",
		`trap 'sleep 0.3; echo done > `+marker+`; exit 7' TERM; echo ready > `+filepath.Join(run, "ready")+`; sleep 100 & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testwait.Within(t, 20*time.Second, "the command to start", func() bool {
		_, err := os.Stat(filepath.Join(run, "ready"))
		return err == nil
	})
	b.Signal(cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		b.Signal(cmd.Process.Pid, syscall.SIGKILL)
		t.Fatal("the command did not stop")
	}
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("exit code %d, want the command's 7 (bubblewrap must not die first)", code)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the command's TERM handler did not finish: %v", err)
	}
}

func TestRootCapsKeepOnlyHarmless(t *testing.T) {
	all := rootCaps(^uint64(0))
	for _, c := range all {
		switch c {
		case "CAP_SYS_ADMIN", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH", "CAP_SYS_RAWIO", "CAP_SYS_MODULE", "CAP_MKNOD", "CAP_BPF":
			t.Errorf("%s kept", c)
		}
	}
	if got := rootCaps(1 << 24); len(got) != 1 || got[0] != "CAP_SYS_RESOURCE" {
		t.Errorf("rootCaps(SYS_RESOURCE only) = %v", got)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": SandboxAuto, "Required": SandboxRequired, "off": SandboxOff} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("maybe"); err == nil {
		t.Error("ParseMode accepted maybe")
	}
}
