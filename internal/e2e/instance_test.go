package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// instanceShow is what `compute show -o json` prints for a compute instance.
type instanceShow struct {
	api.Compute
	Instance api.Instance `json:"instance"`
}

func (w *ws) instance(name string) api.Instance {
	w.t.Helper()
	var v instanceShow
	if err := json.Unmarshal([]byte(w.ok("compute", "show", name, "-o", "json").stdout), &v); err != nil {
		w.t.Fatal(err)
	}
	return v.Instance
}

func (w *ws) waitInstance(name string, timeout time.Duration, state string) api.Instance {
	w.t.Helper()
	var in api.Instance
	last := ""
	testwait.Within(w.t, timeout, "instance "+name+" to be "+state, func() bool {
		in = w.instance(name)
		if seen := in.State + ": " + in.Reason + " / " + in.Idle; seen != last {
			w.t.Logf("instance %s: %s", name, seen)
			last = seen
		}
		return in.State == state
	})
	return in
}

// An instance's life through the CLI: created (it starts, its startup script runs), a job runs on
// it, stop refused while a job runs, stop, a job refused while stopped, start again (the creation
// script does not run again, the startup script does), and an idle shutdown with its reason.
// HANGAR_TEST_INSTANCE_MINUTE (docs/instances.md) makes its 15 idle minutes 15 × 200 ms.
func TestInstanceLifecycle(t *testing.T) {
	w := newWSEnv(t, []string{"HANGAR_TEST_INSTANCE_MINUTE=200ms", "HANGAR_TEST_INSTANCE_CPU_THRESHOLD=101"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"dev.yml": `$schema: https://azuremlschemas.azureedge.net/latest/computeInstance.schema.json
name: dev1
type: computeinstance
size: local-quarter
idle_time_before_shutdown_minutes: 15
setup_scripts:
  creation_script: {path: create.sh}
  startup_script: {path: startup.sh, command: "'hello world' two", timeout_minutes: 2}
`,
		"create.sh":  "echo creating the instance\n",
		"startup.sh": "echo \"startup args: $1 / $2\"\n",
		"job.yml":    "command: echo on the instance; sleep 1\ncompute: azureml:dev1\n",
		"long.yml":   "command: sleep 300\ncompute: azureml:dev1\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "dev.yml"))
	in := w.waitInstance("dev1", 2*time.Minute, "Running")
	if len(in.Scripts) != 2 || in.Scripts[0].Kind != "creation_script" || in.Scripts[1].Kind != "startup_script" {
		t.Fatalf("scripts after the first start: %+v", in.Scripts)
	}
	logs := w.ok("compute", "logs", "dev1").stdout
	for _, want := range []string{"creation_script", "creating the instance", "startup args: hello world / two"} {
		if !strings.Contains(logs, want) {
			t.Errorf("compute logs lacks %q:\n%s", want, logs)
		}
	}

	long := w.create(filepath.Join(dir, "long.yml"))
	w.waitStatus(long, time.Minute, job.Running)
	if r := w.run("compute", "stop", "dev1"); r.code == 0 || !strings.Contains(r.stderr, "runs job "+long) {
		t.Errorf("stop with a job running: exit %d, %s", r.code, r.stderr)
	}
	// The idle judgement compute show prints is the instances loop's last one, made every idle
	// minute (200 ms here): it says busy from the loop's first look after the job started.
	var show string
	if !testwait.Until(time.Now().Add(30*time.Second), func() bool {
		show = w.ok("compute", "show", "dev1").stdout
		return strings.Contains(show, "busy: job "+long)
	}) {
		t.Errorf("compute show does not say the job keeps it busy:\n%s", show)
	}
	w.ok("job", "cancel", "-n", long, "--yes")
	w.waitStatus(long, time.Minute, job.Canceled)

	name := w.create(filepath.Join(dir, "job.yml"))
	if d := w.waitStatus(name, time.Minute, job.Completed, job.Failed); d.Status != job.Completed || !logHas(w, name, "on the instance") {
		t.Fatalf("job on the instance: %s (%s)", d.Status, d.StatusReason)
	}

	w.ok("compute", "stop", "dev1")
	in = w.waitInstance("dev1", time.Minute, "Stopped")
	if in.Reason != "stopped by the user" || in.Node != "" {
		t.Errorf("after stop: %+v", in)
	}
	r := w.run("job", "create", "-f", filepath.Join(dir, "job.yml"))
	if r.code == 0 || !strings.Contains(r.stderr, "start it with hangar compute start dev1") {
		t.Errorf("a job on a stopped instance: exit %d, %s", r.code, r.stderr)
	}

	w.ok("compute", "start", "dev1")
	in = w.waitInstance("dev1", 2*time.Minute, "Running")
	if len(in.Scripts) != 3 || in.Scripts[2].Kind != "startup_script" {
		t.Errorf("after the second start, want the startup script again and no creation script: %+v", in.Scripts)
	}
	name = w.create(filepath.Join(dir, "job.yml"))
	if d := w.waitStatus(name, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("job after the restart: %s (%s)", d.Status, d.StatusReason)
	}

	// Idle: no job, no SSH session, CPU not counted (the knob); 15 minutes of 200 ms.
	in = w.waitInstance("dev1", 2*time.Minute, "Stopped")
	if !strings.HasPrefix(in.Reason, "idle shutdown: idle for 15 of 15 minutes: no job, no SSH session") {
		t.Errorf("idle shutdown reason: %q", in.Reason)
	}
}

// A failing setup script leaves the instance Failed, the reason naming the script and its exit
// code, and its output in compute logs.
func TestInstanceSetupScriptFails(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"dev.yml":    "name: dev2\ntype: instance\nsize: local-quarter\nsetup_scripts:\n  startup_script: {path: startup.sh}\n",
		"startup.sh": "echo installing things\necho no space left >&2\nexit 3\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "dev.yml"))
	in := w.waitInstance("dev2", 2*time.Minute, "Failed")
	if !strings.Contains(in.Reason, "startup_script failed exit code 3") || !strings.Contains(in.Reason, "hangar compute logs dev2") {
		t.Errorf("failed reason: %q", in.Reason)
	}
	logs := w.ok("compute", "logs", "dev2").stdout
	for _, want := range []string{"startup_script", "exit code 3", "installing things", "no space left"} {
		if !strings.Contains(logs, want) {
			t.Errorf("compute logs lacks %q:\n%s", want, logs)
		}
	}
}
