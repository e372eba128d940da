package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// vmYAML describes an attached VM reached at the sshd, working in its own folder.
func vmYAML(name string, srv *sshtest.Server, keyFile, workDir string) string {
	return fmt.Sprintf(`$schema: https://azuremlschemas.azureedge.net/latest/vmCompute.schema.json
name: %s
type: virtualmachine
resource_id: %s
ssh_settings:
  admin_username: %s
  ssh_private_key_file: %s
  ssh_port: %d
work_dir: %s
`, name, srv.Host, srv.User, keyFile, srv.Port, workDir)
}

// A real sshd in a network namespace is a remote VM: attach it, run jobs (logs, inputs, outputs,
// cancel, timeout), cut the link mid-run and restore it (no lost line), refuse a changed host key
// and bad credentials.
func TestSSHTarget(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{NetNS: true})
	w := newWS(t, "--stale-after", "2s", "--not-responding-after", "4s", "--lost-after", "10s")
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	writeFiles(t, dir, map[string]string{
		"vm.yml":       vmYAML("vm1", srv, srv.KeyFile, work),
		"src/train.sh": "echo \"on $(hostname -I 2>/dev/null || hostname)\"; cat \"$1\"; echo trained > outputs/model.txt\n",
		"data/in.txt":  "input data\n",
		"job.yml":      "command: bash train.sh ${{inputs.data}}\ncode: src\ncompute: azureml:vm1\ninputs:\n  data: {type: uri_file, path: data/in.txt}\n",
		"long.yml":     "command: trap 'echo got TERM; exit 143' TERM; echo started; while true; do sleep 0.1; done\ncompute: vm1\n",
		"timeout.yml":  "command: echo start; sleep 60\ncompute: vm1\nlimits: {timeout: 2}\n",
		"lines.yml":    "command: for i in $(seq 1 80); do echo line $i; sleep 0.1; done\ncompute: vm1\n",
	})
	r := w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	if !strings.Contains(r.stdout, "Created compute vm1") || !strings.Contains(r.stdout, "cores") {
		t.Fatalf("attach: %s %s", r.stdout, r.stderr)
	}
	var ct api.Compute
	if err := json.Unmarshal([]byte(w.ok("compute", "show", "-n", "vm1", "-o", "json").stdout), &ct); err != nil {
		t.Fatal(err)
	}
	if ct.Node == nil || ct.Node.Cores == 0 || ct.Spec == nil || ct.Spec.SSH == nil || ct.Spec.SSH.HostKey == "" {
		t.Fatalf("compute show: %+v", ct)
	}
	if strings.Contains(w.ok("compute", "show", "-n", "vm1", "-o", "json").stdout, "PRIVATE KEY") {
		t.Errorf("compute show prints the private key")
	}

	r = w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream", "--name", "vmjob")
	if !strings.Contains(r.stdout, "on "+srv.Host) || !strings.Contains(r.stdout, "input data") {
		t.Errorf("log of the job on the VM:\n%s", r.stdout)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", "vmjob", "--download-path", out)
	if got := readFile(t, filepath.Join(out, "vmjob", "artifacts", "outputs", "model.txt")); got != "trained\n" {
		t.Errorf("outputs/model.txt = %q", got)
	}

	name := w.create(filepath.Join(dir, "long.yml"))
	testwait.Within(t, 30*time.Second, "the remote job to start", func() bool { return logHas(w, name, "started") })
	if r := w.run("compute", "detach", "-n", "vm1", "--yes"); r.code == 0 || !strings.Contains(r.stderr, "active runs") {
		t.Errorf("detach with an active run: exit %d %s", r.code, r.stderr)
	}
	w.ok("job", "cancel", "-n", name, "--yes")
	if d := w.waitStatus(name, 30*time.Second, job.Canceled, job.Failed, job.Completed); d.Status != job.Canceled || !logHas(w, name, "got TERM") {
		t.Errorf("cancel on the VM: %s, log %q", d.Status, w.logs(name))
	}
	if r := w.run("job", "create", "-f", filepath.Join(dir, "timeout.yml"), "--stream"); r.code != 4 || !strings.Contains(r.stderr, "limits.timeout") {
		t.Errorf("timeout on the VM: exit %d %s", r.code, r.stderr)
	}

	// Cut the link mid-run: the job goes on, the supervisor spools, nothing is lost.
	name = w.create(filepath.Join(dir, "lines.yml"))
	testwait.Within(t, 30*time.Second, "the run to log", func() bool { return logHas(w, name, "line 5") })
	srv.CutLink(t)
	time.Sleep(3 * time.Second)
	srv.RestoreLink(t)
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("after the link came back: %s (%s)", d.Status, d.StatusReason)
	}
	lines := strings.Split(strings.TrimSpace(w.ok("job", "stream", "-n", name).stdout), "\n")
	if len(lines) != 80 {
		t.Fatalf("%d lines after the cut, want 80", len(lines))
	}
	for i, l := range lines {
		if l != "line "+strconv.Itoa(i+1) {
			t.Fatalf("line %d = %q", i+1, l)
		}
	}

	// kill -9 of the server mid-run: the run goes on on the host; the restarted server reopens
	// the tunnel on the port the supervisor knows, and no line is lost.
	name = w.create(filepath.Join(dir, "lines.yml"))
	testwait.Within(t, 30*time.Second, "the run to log", func() bool { return logHas(w, name, "line 5") })
	w.killServer()
	time.Sleep(2 * time.Second)
	w.startServer()
	d = w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("after a server crash: %s (%s)", d.Status, d.StatusReason)
	}
	if lines := strings.Split(strings.TrimSpace(w.ok("job", "stream", "-n", name).stdout), "\n"); len(lines) != 80 {
		t.Errorf("%d lines after the server crash, want 80", len(lines))
	}

	// A host that stays unreachable: NotResponding, then Failed with that reason; when it is back,
	// the orphaned command is stopped.
	name = w.create(filepath.Join(dir, "long.yml"))
	testwait.Within(t, 30*time.Second, "the remote job to start", func() bool { return logHas(w, name, "started") })
	srv.CutLink(t)
	d = w.waitStatus(name, 2*time.Minute, job.Failed, job.Completed, job.Canceled)
	srv.RestoreLink(t)
	if d.Status != job.Failed || !strings.Contains(d.StatusReason, "unreachable") {
		t.Errorf("unreachable host: %s (%s)", d.Status, d.StatusReason)
	}
	if n := len(d.Events); n < 2 || d.Events[n-2].To != job.NotResponding {
		t.Errorf("no NotResponding before Failed: %+v", d.Events)
	}
	testwait.Within(t, time.Minute, "the orphaned command to be stopped", func() bool { return logHas(w, name, "got TERM") })

	// A reinstalled host (new host key) is refused, not trusted silently.
	srv.Restart(t, true)
	w.ok("server", "stop")
	w.startServer()
	name = w.create(filepath.Join(dir, "job.yml"))
	d = w.waitStatus(name, time.Minute, job.Failed, job.Completed)
	if d.Status != job.Failed || !strings.Contains(d.StatusReason, "host key changed") {
		t.Errorf("job on a host whose key changed: %s (%s)", d.Status, d.StatusReason)
	}
}

// Attaching with bad credentials, an unknown host key or an unreachable host fails with a
// one-line reason and stores nothing.
func TestSSHAttachRefusals(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	w := newWS(t)
	dir := t.TempDir()
	wrongKey := filepath.Join(dir, "wrong_key")
	sshtest.WriteKey(t, wrongKey)
	otherKnown := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(otherKnown, []byte(fmt.Sprintf("[%s]:%d ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n", srv.Host, srv.Port)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ yaml, want string }{
		"wrong key":        {vmYAML("bad1", srv, wrongKey, dir), "authentication failed"},
		"unknown host key": {vmYAML("bad2", srv, srv.KeyFile, dir) + "known_hosts: " + otherKnown + "\n", "host key"},
		"unreachable":      {strings.Replace(vmYAML("bad3", srv, srv.KeyFile, dir), fmt.Sprintf("ssh_port: %d", srv.Port), "ssh_port: 1", 1), "refused"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".yml")
			writeFiles(t, dir, map[string]string{filepath.Base(file): c.yaml})
			r := w.run("compute", "attach", "-f", file)
			msg := strings.TrimSpace(r.stderr)
			if r.code == 0 || !strings.Contains(strings.ToLower(msg), c.want) || strings.Count(msg, "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want one line containing %q", r.code, msg, c.want)
			}
		})
	}
	var cs []api.Compute
	_ = json.Unmarshal([]byte(w.ok("compute", "list", "-o", "json").stdout), &cs)
	if len(cs) != 2 { // local and the serverless pool (this machine's, never stored)
		t.Errorf("refused attaches stored targets: %+v", cs)
	}
}
