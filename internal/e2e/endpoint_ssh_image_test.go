package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Azure's custom-container deployment on an attached VM (sshd in a network namespace of its own,
// on this machine's filesystem, so its supervisor finds podman and the image): the supervisor
// runs the image by its own entrypoint with its port published on a free port of the VM, reports
// the VM's address, and the endpoint answers through it with the model's weights; get-logs shows
// the image's output.
func TestOnlineEndpointImageOnSSHTarget(t *testing.T) {
	buildSelfServeImage(t)
	// The VM's podman is configured as this machine's is (runc, the ulimits it allows): a real
	// VM has that in its own /etc/containers.
	var env []string
	if cc := os.Getenv("CONTAINERS_CONF"); cc != "" {
		env = append(env, "CONTAINERS_CONF="+cc)
	}
	srv := sshtest.Start(t, sshtest.Options{NetNS: true, SetEnv: env})
	w, dir := endpointWS(t)
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	dep := strings.Replace(selfServeDeployment, "instance_count: 2\n", "instance_count: 1\n", 1) + "compute: azureml:vm1\n"
	writeFiles(t, dir, map[string]string{"vm.yml": vmYAML("vm1", srv, srv.KeyFile, work), "selfserve.yml": dep})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	if r := w.run("online-deployment", "create", "-f", filepath.Join(dir, "selfserve.yml"), "--all-traffic", "--timeout", "3m"); r.code != 0 {
		logs := w.run("online-deployment", "get-logs", "-n", "selfserve", "-e", "my-endpoint")
		t.Fatalf("create on the VM: exit %d\n%s\nthe replica's log:\n%s%s", r.code, r.stderr, logs.stdout, logs.stderr)
	}

	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", "selfserve", "-e", "my-endpoint")
	if len(dv.Replicas) != 1 || !strings.HasPrefix(dv.Replicas[0].Address, srv.Host+":") {
		t.Fatalf("the replica on the VM: %+v; want it reached at %s", dv.Replicas, srv.Host)
	}
	r := w.ok("online-endpoint", "invoke", "-n", "my-endpoint", "--request-file", filepath.Join(dir, "request.json"))
	var inv selfServeAnswer
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &inv); err != nil || inv.Y != 21 ||
		inv.ModelDir != "/var/azureml-app/azureml-models/m/1" {
		t.Fatalf("invoke answered %q (%v); want y = 3 × 7 from the model at Azure's path", r.stdout, err)
	}
	var logs string
	testwait.Within(t, 30*time.Second, "get-logs to show the image's output", func() bool {
		logs = w.deploymentLogs("selfserve")
		return strings.Contains(logs, `"POST /predict HTTP/1.1" 200`)
	})
	if want := "selfserve: loaded w = 3 from /var/azureml-app/azureml-models/m/1"; !strings.Contains(logs, want) {
		t.Errorf("get-logs lacks %q:\n%s", want, logs)
	}
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--traffic", "selfserve=0")
	w.ok("online-deployment", "delete", "-n", "selfserve", "-e", "my-endpoint", "--yes")
}
