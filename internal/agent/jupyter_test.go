package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

func TestJupyterCommand(t *testing.T) {
	on := func(have ...string) func(string) (string, error) {
		return func(exe string) (string, error) {
			if slices.Contains(have, exe) {
				return "/usr/bin/" + exe, nil
			}
			return "", errors.New("not found")
		}
	}
	cases := []struct {
		name    string
		have    []string
		root    bool
		wantExe string // "" none
	}{
		{"lab first", []string{"jupyter-notebook", "jupyter-lab", "jupyter-server"}, false, "/usr/bin/jupyter-lab"},
		{"notebook without lab", []string{"jupyter-notebook", "jupyter-server"}, true, "/usr/bin/jupyter-notebook"},
		{"bare server", []string{"jupyter-server", "jupyter"}, false, "/usr/bin/jupyter-server"},
		{"none", []string{"jupyter"}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := jupyterCommand(on(c.have...), "/instances/dev/jupyter/", "/w/rt/jupyter.sock", "/w/notebooks", c.root)
			if c.wantExe == "" {
				if argv != nil {
					t.Fatalf("argv %q, want none", argv)
				}
				return
			}
			if argv[0] != c.wantExe {
				t.Fatalf("runs %s, want %s", argv[0], c.wantExe)
			}
			// On its socket only, with no token or password of its own (the relay has the key).
			for _, want := range []string{"--no-browser", "--NotebookApp.base_url=/instances/dev/jupyter/", "--ServerApp.base_url=/instances/dev/jupyter/",
				"--NotebookApp.sock=/w/rt/jupyter.sock", "--ServerApp.sock=/w/rt/jupyter.sock", "--ServerApp.sock_mode=0600",
				"--NotebookApp.token=", "--ServerApp.token=", "--IdentityProvider.token=", "--NotebookApp.password=",
				"--ServerApp.root_dir=/w/notebooks", "--NotebookApp.notebook_dir=/w/notebooks", "--ServerApp.allow_remote_access=True"} {
				if !slices.Contains(argv, want) {
					t.Errorf("argv lacks %s: %q", want, argv)
				}
			}
			if got := slices.Contains(argv, "--ServerApp.allow_root=True"); got != c.root {
				t.Errorf("allow_root %v, want %v (running as root)", got, c.root)
			}
			for _, a := range argv {
				if strings.Contains(a, ".ip=") || strings.Contains(a, ".port=") {
					t.Errorf("Jupyter listens on a TCP port: %s", a)
				}
			}
		})
	}
}

func TestJupyterExitReasonRedactsToken(t *testing.T) {
	log := filepath.Join(t.TempDir(), "jupyter.log")
	if err := os.WriteFile(log, []byte("starting\nloading\nhttp://h:1/x/?token=s3cret\n\nTraceback: port in use\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := jupyterRun{key: "s3cret", logFile: log}
	got := r.exitReason(nil)
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "?token=<token>") || !strings.Contains(got, "port in use") || strings.Contains(got, "starting") {
		t.Errorf("exit reason %q: want the last lines, token redacted", got)
	}
}

func TestKernelsIn(t *testing.T) {
	proc := t.TempDir()
	for pid, cmd := range map[string]string{
		"20": "/usr/bin/python3\x00-m\x00ipykernel_launcher\x00-f\x00/w/jupyter-runtime/kernel-1.json\x00",
		"21": "/usr/bin/python3\x00-m\x00ipykernel_launcher\x00-f\x00/other/kernel-2.json\x00",
		"22": "bash\x00/w/jupyter-runtime/x\x00",
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cmdline"), []byte(cmd), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := kernelsIn(proc, "/w/jupyter-runtime/"); !slices.Equal(got, []int{20}) {
		t.Errorf("kernels of the runtime dir: %v, want [20]", got)
	}
}

// A change of Jupyter's state goes out with the next heartbeat, ahead of the activity report's
// interval; later reports carry it too; the token only travels there.
func TestJupyterActivitySentOnChange(t *testing.T) {
	now := time.Unix(5000, 0)
	a := &Agent{cfg: Config{Now: func() time.Time { return now }}, jupyter: newJupyter(t.TempDir(), "http://127.0.0.1:1", nil, nil),
		activity: activityMeter{proc: t.TempDir(), nvidiaChecked: true, noNvidiaSMI: true}}
	if act := a.jupyterActivity(a.activity.report(now)); act == nil || act.Jupyter != nil {
		t.Fatalf("first report: %+v, want one without Jupyter", act)
	}
	if act := a.jupyterActivity(a.activity.report(now)); act != nil {
		t.Fatalf("a report within the interval with nothing new: %+v", act)
	}
	running := &api.JupyterReport{State: api.JupyterRunning, Addr: "10.0.0.5:4321", Token: "tok"}
	a.jupyter.set(running)
	act := a.jupyterActivity(a.activity.report(now))
	if act == nil || act.Jupyter == nil || *act.Jupyter != *running {
		t.Fatalf("report after Jupyter came up: %+v", act)
	}
	if act := a.jupyterActivity(a.activity.report(now)); act != nil {
		t.Fatalf("the change was sent twice: %+v", act)
	}
	now = now.Add(ActivityEvery)
	if act := a.jupyterActivity(a.activity.report(now)); act == nil || act.Jupyter == nil || act.Jupyter.Addr != running.Addr {
		t.Fatalf("the next periodic report lacks Jupyter: %+v", act)
	}
}
