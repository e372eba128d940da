package runbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/testwait"
)

// scanProc is what an attacker inside a run does: walk every process it can see, its own
// ancestors first, and try each one's root, environment and working directory for the
// workspace's files.
const scanProc = `
for p in /proc/[0-9]*; do
  echo "PID ${p#/proc/}"
  cat "$p/root%[1]s/secret.key" 2>/dev/null && echo " <- via $p/root"
  tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -E '^(HANGAR_TEST_ENV|OTHER_SECRET)=' && echo " <- in $p/environ"
  ls "$p/cwd/" 2>/dev/null | grep -q secret.key && echo "SECRET-DIR <- via $p/cwd"
done
pp=$$
while [ "$pp" -gt 1 ]; do
  pp=$(awk '/^PPid:/ {print $2}' /proc/$pp/status)
  echo "ANCESTOR $pp"
done
`

// A run sees its own processes only: not the caller, not bubblewrap outside the sandbox, not
// another run's processes; nothing under /proc leads to the workspace's files or another run's
// environment.
func TestRunSeesOnlyItsOwnProcesses(t *testing.T) {
	h, run, other, _ := home(t)
	b := sandboxed(t, run, Options{Hide: []string{h}, Share: []string{run}})
	needs(t, b.sb.pidns != nil, "a PID namespace for the box")
	otherBox := sandboxed(t, other, Options{Hide: []string{h}, Share: []string{other}})
	// Another run, live, with a secret in its environment.
	env := []string{"PATH=" + os.Getenv("PATH")} // not HANGAR_TEST_ENV: the caller's, which must not show
	sib := otherBox.Command(false, other, append(env, "OTHER_SECRET=s3cret"), "sleep", "60")
	if err := sib.Start(); err != nil {
		t.Fatal(err)
	}
	defer otherBox.End(context.Background())
	// A process of this run already running: the scan must see it (same run, same namespace).
	mate := b.Command(false, run, env, "bash", "-c", "echo $$ > "+filepath.Join(run, "mate")+"; exec sleep 60")
	if err := mate.Start(); err != nil {
		t.Fatal(err)
	}
	var mateNS []byte
	testwait.Within(t, 20*time.Second, "the run's first process", func() bool {
		mateNS, _ = os.ReadFile(filepath.Join(run, "mate"))
		return strings.HasSuffix(string(mateNS), "\n")
	})

	out, err := b.Command(false, run, env, "bash", "-c", fmt.Sprintf(scanProc, h)).CombinedOutput()
	if err != nil {
		t.Logf("exit: %v", err)
	}
	got := string(out)
	for _, leak := range []string{"SECRET", "<-", "s3cret"} {
		if strings.Contains(got, leak) {
			t.Errorf("the run reached %q through /proc:\n%s", leak, got)
		}
	}
	if !strings.Contains(got, "PID "+strings.TrimSpace(string(mateNS))+"\n") {
		t.Errorf("the run does not see its own other process (pid %s in its namespace):\n%s", mateNS, got)
	}
	pids := strings.Count(got, "PID ")
	if pids > 8 {
		t.Errorf("the run sees %d processes, want only its own few:\n%s", pids, got)
	}
	for _, pid := range []int{os.Getpid(), sib.Process.Pid, mate.Process.Pid} {
		if strings.Contains(got, "ANCESTOR "+strconv.Itoa(pid)+"\n") {
			t.Errorf("pid %d (outside the sandbox) is among the run's ancestors:\n%s", pid, got)
		}
	}
	// Ending the box ends what is left in its namespace, and counts none of the box's own.
	r := b.End(context.Background())
	if r.Processes != 1 {
		t.Errorf("End ended %d processes, want the run's one sleep (not the holder): %+v", r.Processes, r)
	}
	if alive(mate.Process.Pid) {
		_ = mate.Wait()
	}
}

// Sandboxed commands run as the run user: they reach their own directory through ancestors the
// user could not search (a workspace under a 0700 directory), write only what was given to them,
// and cannot read root's files.
func TestCommandsRunAsTheRunUser(t *testing.T) {
	needs(t, os.Geteuid() == 0, "root (to run commands as another user)")
	u, err := RunUser("", 0)
	if err != nil || u == nil {
		t.Fatalf("RunUser(root) = %v, %v", u, err)
	}
	h, run, _, exe := home(t)
	if err := os.Chmod(filepath.Dir(h), 0o700); err != nil { // t.TempDir's own parent is 0700 already; be sure
		t.Fatal(err)
	}
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(run, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Chown(u, out); err != nil {
		t.Fatal(err)
	}
	b := sandboxed(t, run, Options{Hide: []string{h}, Share: []string{run}, ReadOnly: []string{exe}, User: u})
	script := strings.Join([]string{
		"id -u",
		"echo written > " + filepath.Join(out, "f"),
		"echo nope > " + filepath.Join(run, "g") + " 2>/dev/null || echo DENIED-RUN-DIR",
		"cat " + filepath.Join(run, "mine.txt") + " 2>/dev/null || echo DENIED-0600",
		"head -c 1 /etc/shadow 2>/dev/null || echo DENIED-SHADOW",
		"sh " + exe,
	}, "; ")
	got, err := b.Command(false, filepath.Join(run, "out"), os.Environ(), "bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, got)
	}
	for _, want := range []string{strconv.Itoa(u.UID) + "\n", "DENIED-RUN-DIR", "DENIED-0600", "DENIED-SHADOW", "binary"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("want %q in the run's output:\n%s", want, got)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "f")); string(b) != "written\n" {
		t.Errorf("the run user could not write the folder given to it: %q", b)
	}
}

func TestRunUser(t *testing.T) {
	for _, tc := range []struct {
		setting string
		euid    int
		want    string // "" = runs as the caller
		err     bool
	}{
		{"", 0, "uid 65534", false},
		{"root", 0, "", false},
		{"0", 0, "", false},
		{"65534:65534", 0, "uid 65534", false},
		{"no-such-user-here", 0, "", true},
		{"", 1000, "", false},
		{"root", 1000, "", true},
	} {
		u, err := RunUser(tc.setting, tc.euid)
		if (err != nil) != tc.err {
			t.Errorf("RunUser(%q, %d) error %v, want error %v", tc.setting, tc.euid, err, tc.err)
			continue
		}
		got := ""
		if u != nil {
			got = fmt.Sprintf("uid %d", u.UID)
		}
		if got != tc.want {
			t.Errorf("RunUser(%q, %d) = %q, want %q", tc.setting, tc.euid, got, tc.want)
		}
	}
}

func TestBlockedAncestors(t *testing.T) {
	base := t.TempDir()
	mk := func(p string, mode os.FileMode) string {
		p = filepath.Join(base, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	open := mk("open", 0o755)
	closed := mk("closed", 0o700)
	deep := mk("closed/inner", 0o700)
	hidden := mk("hidden", 0o700)
	u := &User{UID: 65534, GID: 65534}
	for _, d := range []string{filepath.Dir(base), base} { // t.TempDir's own are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := blockedAncestors([]string{
		filepath.Join(open, "run"), filepath.Join(deep, "run"), filepath.Join(closed, "x"),
		filepath.Join(hidden, "run"),
	}, []string{hidden}, u)
	if len(got) != 1 || got[0] != closed {
		t.Errorf("blocked = %v, want only %s (its inner directory is under it; a hidden one is a tmpfs)", got, closed)
	}
	if got := blockedAncestors([]string{filepath.Join(closed, "h", "run")}, []string{filepath.Join(closed, "h")}, u); len(got) != 1 || got[0] != closed {
		t.Errorf("blocked = %v, want %s (above the hidden directory)", got, closed)
	}
}

// A hidden directory inside another, deeper down (an agent's work dir in the workspace's home):
// the run user still reaches the folder shown again inside the inner one.
func TestRunUserReachesItsFolderInNestedHiddenDirectories(t *testing.T) {
	needs(t, os.Geteuid() == 0, "root (to run commands as another user)")
	u := &User{Name: "nobody", UID: 65534, GID: 65534}
	h, run, _, _ := home(t)
	agent := filepath.Join(h, "local", "nodes", "n1")
	notebooks := filepath.Join(agent, "notebooks")
	if err := os.MkdirAll(notebooks, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Chown(u, notebooks); err != nil {
		t.Fatal(err)
	}
	b := sandboxed(t, run, Options{Hide: []string{agent, h}, Share: []string{notebooks}, User: u})
	out, err := b.Command(false, notebooks, os.Environ(), "bash", "-c", "echo kept > note.txt && cat note.txt").CombinedOutput()
	if err != nil || string(out) != "kept\n" {
		t.Fatalf("the run user could not use its folder: %v\n%s", err, out)
	}
}
