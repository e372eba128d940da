package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store/pgtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// failoverScript prints a numbered line a second, reports the step through the metrics file and
// through MLflow's REST API at MLFLOW_TRACKING_URI (retrying a refused call or a 503, as MLflow's
// client does), and writes an output at the end.
const failoverScript = `import json, os, sys, time, urllib.request, urllib.error
steps = int(sys.argv[1])
uri, token, run = os.environ["MLFLOW_TRACKING_URI"], os.environ["MLFLOW_TRACKING_TOKEN"], os.environ["MLFLOW_RUN_ID"]
def log_mlflow(step):
    body = json.dumps({"run_id": run, "key": "mlflow_step", "value": step, "step": step,
                       "timestamp": int(time.time() * 1000)}).encode()
    for attempt in range(120):
        req = urllib.request.Request(uri + "/api/2.0/mlflow/runs/log-metric", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
        try:
            urllib.request.urlopen(req, timeout=10).read()
            return
        except urllib.error.HTTPError as e:
            if e.code not in (429, 500, 502, 503, 504):
                raise
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1)
    raise SystemExit("MLflow call kept failing")
print("mlflow at", uri, flush=True)
for i in range(steps):
    print("line %d" % i, flush=True)
    with open(os.environ["HANGAR_METRICS_FILE"], "a") as f:
        f.write(json.dumps({"name": "file_step", "value": i, "step": i}) + "\n")
    log_mlflow(i)
    time.sleep(1)
open(os.path.join("outputs", "done.txt"), "w").write("all %d steps" % steps)
`

// Two servers on one PostgreSQL database and one workspace directory: the second follows and
// forwards; the CLI talks to it. With a run on a managed cluster (agents given both servers) and
// a local run live, the leader is killed with SIGKILL: the follower takes the lead, both runs
// complete with every log line, every metric point (from the metrics file and from MLflow's REST
// API through the supervisor's relay) and their outputs, read back as a user would; a job
// submitted afterwards runs; the old leader, restarted, follows.
func TestServerFailover(t *testing.T) {
	var env []string
	if !onPostgres(t) { // several servers need PostgreSQL: the test has a database of its own either way
		env = []string{home.DatabaseEnv + "=" + pgtest.NewDatabase(t)}
	}
	addrA, addrB := freeLoopbackAddr(t), freeLoopbackAddr(t)
	a := newWSEnv(t, env, "--listen", addrA)
	urlA, urlB := "http://"+addrA, "http://"+addrB
	b := startFollower(t, a, addrB)
	waitRole(t, urlB, "follower", urlA)
	waitRole(t, urlA, "leader", urlA)
	// The CLI as a user of a team's server: the follower's address and the workspace token.
	cli := &ws{t: t, home: t.TempDir(), extraEnv: []string{"HANGAR_URL=" + urlB, "HANGAR_TOKEN=" + a.adminToken()}}

	const steps = 24
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"train.py":    failoverScript,
		"pool.yml":    "name: pool\ntype: amlcompute\nsize: local-quarter\nmin_instances: 1\nmax_instances: 1\nidle_time_before_scale_down: 600\n",
		"cluster.yml": fmt.Sprintf("command: python3 train.py %d\ncode: .\ncompute: azureml:pool\n", steps),
		"local.yml":   fmt.Sprintf("command: python3 train.py %d\ncode: .\ncompute: local\n", steps),
		"after.yml":   "command: python3 train.py 2\ncode: .\ncompute: azureml:pool\n",
	})
	cli.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	onCluster := cli.create(filepath.Join(dir, "cluster.yml"))
	onLocal := cli.create(filepath.Join(dir, "local.yml"))
	testwait.Within(t, 2*time.Minute, "both runs to log their fifth line", func() bool {
		return logHas(cli, onCluster, "line 4") && logHas(cli, onLocal, "line 4")
	})

	a.killServer()
	waitRole(t, urlB, "leader", urlB)
	// `hangar server status` in the shared directory names the new leader and its role.
	var status string
	testwait.Within(t, 10*time.Second, "server status to name the new leader", func() bool {
		status = a.ok("server", "status").stdout
		return strings.Contains(status, "running: "+urlB+" ")
	})
	if !strings.Contains(status, ", the leader of the workspace's servers") {
		t.Errorf("server status after the failover:\n%s", status)
	}
	for _, name := range []string{onCluster, onLocal} {
		if d := cli.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
			t.Fatalf("%s across the failover: %s (%s)", name, d.Status, d.StatusReason)
		}
		checkWhole(t, cli, name, steps)
		// The run's MLflow client went through its supervisor's relay, not to one server.
		if logs := cli.logs(name); !strings.Contains(logs, "mlflow at http://127.0.0.1:") ||
			strings.Contains(logs, "mlflow at "+urlA) || strings.Contains(logs, "mlflow at "+urlB) {
			t.Errorf("%s: the run's MLflow client was not given the relay:\n%s", name, logs)
		}
	}
	after := cli.create(filepath.Join(dir, "after.yml"))
	if d := cli.waitStatus(after, 2*time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Errorf("a job submitted after the failover: %s (%s)", d.Status, d.StatusReason)
	}

	// The old leader comes back as a follower of the new one, and answers the API through it.
	a.startServerAs(addrA)
	waitRole(t, urlA, "follower", urlB)
	viaA := &ws{t: t, home: cli.home, extraEnv: []string{"HANGAR_URL=" + urlA, "HANGAR_TOKEN=" + a.adminToken()}}
	if out := viaA.ok("job", "show", onCluster).stdout; !strings.Contains(out, "Completed") {
		t.Errorf("job show through the restarted follower:\n%s", out)
	}

	// `hangar server stop` in the shared directory stops the leader it names; the other server
	// takes the lead (and the directory's lock with it: stop does not wait for the lock).
	if r := a.ok("server", "stop"); !strings.Contains(r.stderr, "Stopped the server of") {
		t.Errorf("server stop: %s", r.stderr)
	}
	waitRole(t, urlA, "leader", urlA)
	if err := b.Process.Signal(syscall.Signal(0)); err == nil {
		testwait.Within(t, 5*time.Second, "the stopped leader's process to end", func() bool { return b.Process.Signal(syscall.Signal(0)) != nil })
	}
}

// checkWhole reads a run back as its user would: every log line once and in order, every metric
// point from both paths, and its output.
func checkWhole(t *testing.T, w *ws, name string, steps int) {
	t.Helper()
	logs := w.logs(name)
	var lines []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.HasPrefix(l, "line ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != steps {
		t.Errorf("%s: %d log lines, want %d:\n%s", name, len(lines), steps, logs)
	}
	for i, l := range lines {
		if l != fmt.Sprintf("line %d", i) {
			t.Errorf("%s: log line %d is %q", name, i, l)
			break
		}
	}
	for _, metric := range []string{"file_step", "mlflow_step"} {
		var points []struct {
			Step  int64   `json:"step"`
			Value float64 `json:"value"`
		}
		if err := json.Unmarshal([]byte(w.ok("job", "metrics", name, "--name", metric, "-o", "json").stdout), &points); err != nil {
			t.Fatalf("%s: job metrics: %v", name, err)
		}
		seen := map[int64]bool{}
		for _, p := range points {
			seen[p.Step] = true
		}
		if len(seen) != steps {
			t.Errorf("%s: %s has %d distinct steps (%d points), want %d", name, metric, len(seen), len(points), steps)
		}
	}
	dl := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", dl)
	if got := readFile(t, filepath.Join(dl, name, "artifacts", "outputs", "done.txt")); got != fmt.Sprintf("all %d steps", steps) {
		t.Errorf("%s: its output: %q", name, got)
	}
}

// startFollower starts a second server on the workspace's database and directory.
func startFollower(t *testing.T, w *ws, listen string) *exec.Cmd {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(w.home, "test-server-"+strings.ReplaceAll(listen, ":", "-")+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	args := append([]string{"server", "--home", w.home}, w.serverArgs...)
	cmd := exec.Command(hangarBin, append(args, "--listen", listen)...)
	cmd.Env = w.env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("log of the server on %s (end):\n%s", listen, tail(string(b), 40))
		}
	})
	return cmd
}

// startServerAs restarts the workspace's own server on listen (replacing the --listen it had).
func (w *ws) startServerAs(listen string) {
	w.t.Helper()
	cmd := startFollower(w.t.(*testing.T), w, listen)
	w.server = cmd
}

// waitRole waits for the server at url to say it has role and that leader leads, with a deadline
// that says what it last said.
func waitRole(t *testing.T, url, role, leader string) {
	t.Helper()
	var h api.Health
	var last string
	if !testwait.Until(time.Now().Add(30*time.Second), func() bool {
		last = "no answer"
		resp, err := http.Get(url + "/api/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		h = api.Health{}
		if json.NewDecoder(resp.Body).Decode(&h) == nil {
			last = fmt.Sprintf("role %q, leader %q", h.Role, h.Leader)
		}
		// A server knows its role before it has read the leader's address: wait for both.
		return h.Role == role && h.Leader == leader
	}) {
		t.Fatalf("waited 30s for %s to be the %s of %s; it said %s", url, role, leader, last)
	}
}

// freeLoopbackAddr is a loopback address with a port free now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
