package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
)

// tlsJob logs, writes a metric, and talks to the workspace's MLflow API as MLflow's Python client
// does with MLFLOW_TRACKING_SERVER_CERT_PATH set (requests, verify= that file).
const tlsJob = `command: >-
  echo hello over tls;
  echo '{"name": "loss", "value": 0.25, "step": 1}' >> $HANGAR_METRICS_FILE;
  python3 mlflow_log.py
code: src
`

const tlsMLflowScript = `import os, time, requests
r = requests.post(os.environ["MLFLOW_TRACKING_URI"] + "/api/2.0/mlflow/runs/log-metric",
    json={"run_id": os.environ["MLFLOW_RUN_ID"], "key": "mlflow_metric", "value": 0.5,
          "timestamp": int(time.time() * 1000), "step": 1},
    headers={"Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"]},
    verify=os.environ["MLFLOW_TRACKING_SERVER_CERT_PATH"])
r.raise_for_status()
print("mlflow over tls ok")
`

// A workspace served over HTTPS with its generated certificate (issue 18): a CLI that has not
// pinned it refuses without a terminal, naming the fingerprint; accepted with
// --trust-fingerprint it pins it and works; jobs run on the local target and on an SSH target,
// their supervisors verifying the server, and logs and metrics arrive; a server restarted with
// another certificate is refused by the pinned CLI with both fingerprints.
func TestTLSWorkspace(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{NetNS: true})
	w := newWS(t, "--tls")
	h := home.Home{Dir: w.home}
	si, err := h.ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(si.URL, "https://") {
		t.Fatalf("server URL %s, want https", si.URL)
	}
	fp := pemFingerprint(t, si.CA)
	if log := readFile(t, filepath.Join(w.home, "test-server.log")); !strings.Contains(log, fp) {
		t.Errorf("the server's log does not show its fingerprint %s", fp)
	}
	tok, err := h.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	user := remoteUser{t: t, env: append(w.env(), "HANGAR_URL="+si.URL, "HANGAR_TOKEN="+tok, "XDG_CONFIG_HOME="+t.TempDir())}

	r := user.run("compute", "list")
	if r.code == 0 || !strings.Contains(r.stderr, "--trust-fingerprint "+fp) || !strings.Contains(r.stderr, "not pinned") {
		t.Fatalf("first use without a terminal: exit %d\n%s", r.code, r.stderr)
	}
	user.ok("--trust-fingerprint", fp, "compute", "list")
	user.ok("compute", "list") // pinned now

	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	writeFiles(t, dir, map[string]string{
		"job.yml":           tlsJob,
		"vmjob.yml":         tlsJob + "compute: azureml:vm1\n",
		"src/mlflow_log.py": tlsMLflowScript,
		"vm.yml":            vmYAML("vm1", srv, srv.KeyFile, work),
	})
	user.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	for _, tc := range []struct{ target, file string }{{"local", "job.yml"}, {"ssh", "vmjob.yml"}} {
		var d api.RunDetail
		if err := json.Unmarshal([]byte(user.ok("job", "create", "-f", filepath.Join(dir, tc.file), "-o", "json").stdout), &d); err != nil {
			t.Fatal(err)
		}
		r := user.run("job", "stream", "-n", d.ID)
		if !strings.Contains(r.stdout, "hello over tls") || !strings.Contains(r.stdout, "mlflow over tls ok") {
			t.Errorf("%s: the job's log over TLS (exit %d):\n%s\n%s", tc.target, r.code, r.stdout, r.stderr)
		}
		if err := json.Unmarshal([]byte(user.ok("job", "show", "-n", d.ID, "-o", "json").stdout), &d); err != nil {
			t.Fatal(err)
		}
		if d.Status != "Completed" || d.Metrics["loss"] != 0.25 || d.Metrics["mlflow_metric"] != 0.5 {
			t.Errorf("%s: %s %s, metrics %v", tc.target, d.ID, d.Status, d.Metrics)
		}
	}

	// Another certificate behind the same address: the pinned CLI refuses, saying both.
	w.ok("server", "stop")
	if err := os.RemoveAll(h.TLSDir()); err != nil {
		t.Fatal(err)
	}
	w.startServer()
	si, err = h.ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	newFP := pemFingerprint(t, si.CA)
	r = user.run("--trust-fingerprint", newFP, "compute", "list")
	if r.code == 0 || !strings.Contains(r.stderr, fp) || !strings.Contains(r.stderr, newFP) || !strings.Contains(r.stderr, "known_servers") {
		t.Fatalf("a changed certificate: exit %d\n%s", r.code, r.stderr)
	}
}

// `hangar server` refuses plain HTTP on an address other machines reach, unless forced (and
// then warns).
func TestServerRefusesCleartextListen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hangarBin, "server", "--home", t.TempDir(), "--listen", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), "HANGAR_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing to serve plain HTTP on a non-loopback address (0.0.0.0)") || !strings.Contains(string(out), "--insecure-no-tls") {
		t.Fatalf("server --listen 0.0.0.0:0: %v\n%s", err, out)
	}

	w := newWS(t, "--listen", "0.0.0.0:0", "--insecure-no-tls")
	if log := readFile(t, filepath.Join(w.home, "test-server.log")); !strings.Contains(log, "serving plain HTTP on a non-loopback address") {
		t.Errorf("no warning in the server's log:\n%s", log)
	}
	w.ok("compute", "list")

	// Restarted without the flags (as the CLI starts the local server), it keeps the port on
	// loopback only.
	h := home.Home{Dir: w.home}
	si, err := h.ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(si.Listen)
	if err != nil {
		t.Fatal(err)
	}
	w.ok("server", "stop")
	w.serverArgs = []string{"--heartbeat", "1s"}
	w.startServer()
	if si, err = h.ReadServerInfo(); err != nil || si.Listen != "127.0.0.1:"+port || !strings.HasPrefix(si.URL, "http://127.0.0.1:") {
		t.Fatalf("restart without --insecure-no-tls: %+v %v (was port %s)", si, err, port)
	}
}

// remoteUser runs the CLI as a user on another machine would: through HANGAR_URL, with their
// own config directory, without a terminal.
type remoteUser struct {
	t   *testing.T
	env []string
}

func (u remoteUser) run(args ...string) result {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hangarBin, args...)
	cmd.Env = u.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("run hangar %v: %v", args, err)
	}
	return r
}

func (u remoteUser) ok(args ...string) result {
	u.t.Helper()
	r := u.run(args...)
	if r.code != 0 {
		u.t.Fatalf("hangar %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func pemFingerprint(t *testing.T, p string) string {
	t.Helper()
	b, _ := pem.Decode([]byte(p))
	if b == nil {
		t.Fatalf("server.json has no certificate: %q", p)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return api.Fingerprint(c)
}
