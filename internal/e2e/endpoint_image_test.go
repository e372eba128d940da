package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// selfServeImage is the image the test builds: localhost/hangar-python with an ENTRYPOINT that
// serves like Azure's minimal custom container.
const selfServeImage = "localhost/hangar-e2e-selfserve:1"

// selfServeServer is the image's entrypoint: it loads the model from AZUREML_MODEL_DIR (as Azure
// mounts a registered folder model: $AZUREML_MODEL_DIR/model/...) and serves the routes of its
// inference_config on its own fixed port, none of them Hangar's defaults (/, /score). Its
// readiness can be turned off, and it can be made to die, through extra routes.
const selfServeServer = `import http.server, json, os, socket, sys
MODEL_DIR = os.environ["AZUREML_MODEL_DIR"]
with open(os.path.join(MODEL_DIR, "model", "weights.json")) as f:
    W = json.load(f)["w"]
print("selfserve: loaded w =", W, "from", MODEL_DIR, "in", os.getcwd(), flush=True)
READY = [True]

class Handler(http.server.BaseHTTPRequestHandler):
    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/live":
            return self.reply(200, {"live": True})
        if self.path == "/ready":
            return self.reply(200 if READY[0] else 503, {"ready": READY[0]})
        self.reply(404, {"error": "no route " + self.path})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/predict":
            return self.reply(200, {"y": W * json.loads(raw)["x"], "deployment": os.environ["DEPLOYMENT_COLOR"],
                                    "model_dir": MODEL_DIR, "host": socket.gethostname()})
        if self.path == "/admin/unready":
            READY[0] = False
            return self.reply(200, {"host": socket.gethostname()})
        if self.path == "/admin/exit":
            print("selfserve: exiting on request", flush=True)
            os._exit(4)
        self.reply(404, {"error": "no route " + self.path})

    def log_message(self, fmt, *args):
        print("selfserve:", fmt % args, flush=True)

http.server.ThreadingHTTPServer(("0.0.0.0", 5001), Handler).serve_forever()
`

// selfServeDeployment is Azure's custom-container shape: an image, its inference_config, a
// registered model, environment variables, and no command and no code_configuration.
const selfServeDeployment = `$schema: https://azuremlschemas.azureedge.net/latest/managedOnlineDeployment.schema.json
name: selfserve
endpoint_name: my-endpoint
model: azureml:m:1
environment_variables:
  DEPLOYMENT_COLOR: selfserve
environment:
  image: ` + selfServeImage + `
  inference_config:
    liveness_route: {port: 5001, path: /live}
    readiness_route: {port: 5001, path: /ready}
    scoring_route: {port: 5001, path: /predict}
instance_type: Standard_DS3_v2
instance_count: 2
readiness_probe: {initial_delay: 1, period: 1, failure_threshold: 1}
request_settings:
  request_timeout_ms: 10000
  max_concurrent_requests_per_instance: 4
`

// buildSelfServeImage builds selfServeImage on top of the test bed's Python image (no registry
// is reachable here) and removes it when the test ends.
func buildSelfServeImage(t *testing.T) {
	t.Helper()
	requireContainers(t)
	const base = "localhost/hangar-python:latest"
	if err := exec.Command("podman", "image", "exists", base).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI (scripts/setup/containers.sh)", base)
		}
		t.Skipf("no %s", base)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"server.py": selfServeServer,
		"Containerfile": "FROM " + base + "\nCOPY server.py /app/server.py\nWORKDIR /app\n" +
			`ENTRYPOINT ["python3", "/app/server.py"]` + "\n",
	})
	if out, err := exec.Command("podman", "build", "-q", "-t", selfServeImage, dir).CombinedOutput(); err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	// Registered first, so it runs after the workspace's cleanup has stopped the replicas.
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "-f", selfServeImage).Run() })
}

type selfServeAnswer struct {
	Y          int    `json:"y"`
	Deployment string `json:"deployment"`
	ModelDir   string `json:"model_dir"`
	Host       string `json:"host"`
}

// post sends body to path under the endpoint's URI (the scoring URI's folder) and decodes the
// answer.
func (s *scorer) post(path, body string, out any) int {
	uri := strings.TrimSuffix(s.uri, "/score") + path
	req, _ := http.NewRequest(http.MethodPost, uri, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		_ = json.Unmarshal(b, out)
	}
	return resp.StatusCode
}

// replicasReady reads hangar_endpoint_replicas_ready of a deployment from /metrics: the
// replicas the router has in its rotation.
func (w *ws) replicasReady(deployment string) int {
	w.t.Helper()
	h := home.Home{Dir: w.home}
	si, err := h.ReadServerInfo()
	if err != nil {
		w.t.Fatal(err)
	}
	tok, err := h.ReadToken()
	if err != nil {
		w.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, si.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`(?m)^hangar_endpoint_replicas_ready\{[^}]*deployment="` + regexp.QuoteMeta(deployment) + `"[^}]*\} (\d+)$`)
	m := re.FindSubmatch(b)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// An Azure custom-container deployment: the image serves by its own entrypoint, with no command
// and no code_configuration. Two replicas on the one local node (the image's fixed port is
// published on a free port of the node for each), the model mounted where AZUREML_MODEL_DIR
// says as Azure mounts it, scoring through the router to scoring_route, the image's output in
// get-logs, a replica whose readiness route fails out of the rotation, a replica whose
// container exits replaced, and delete stopping the containers.
func TestOnlineEndpointImageEntrypoint(t *testing.T) {
	buildSelfServeImage(t)
	w, dir := endpointWS(t)
	writeFiles(t, dir, map[string]string{"selfserve.yml": selfServeDeployment})
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "selfserve.yml"), "--all-traffic", "--timeout", "3m")

	r := w.ok("online-endpoint", "invoke", "-n", "my-endpoint", "--request-file", filepath.Join(dir, "request.json"))
	var inv selfServeAnswer
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &inv); err != nil || inv.Y != 21 {
		t.Fatalf("invoke answered %q (%v); want y = 3 × 7 from the registered model", r.stdout, err)
	}
	if want := "/var/azureml-app/azureml-models/m/1"; inv.ModelDir != want {
		t.Errorf("AZUREML_MODEL_DIR in the image = %q, want %q (Azure's layout)", inv.ModelDir, want)
	}

	var dv api.DeploymentView
	testwait.Within(t, time.Minute, "both replicas to serve", func() bool {
		w.jsonOut(&dv, "online-deployment", "show", "-n", "selfserve", "-e", "my-endpoint")
		n := 0
		for _, rep := range dv.Replicas {
			if rep.Status == "Running" && rep.Address != "" {
				n++
			}
		}
		return n == 2
	})
	if dv.Replicas[0].Address == dv.Replicas[1].Address {
		t.Fatalf("two replicas on one node at the same address %s", dv.Replicas[0].Address)
	}
	for _, rep := range dv.Replicas { // each listens at its own node port, for the router only
		resp, err := http.Get("http://" + rep.Address + "/ready")
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("replica %s at %s, without the replica's secret: %v %v; want 401", rep.Run, rep.Address, err, resp)
		}
		resp.Body.Close()
	}
	testwait.Within(t, 30*time.Second, "the router to have both replicas in rotation", func() bool { return w.replicasReady("selfserve") == 2 })

	logs := w.deploymentLogs("selfserve")
	for _, want := range []string{"selfserve: loaded w = 3 from /var/azureml-app/azureml-models/m/1 in /app", "with its own entrypoint"} {
		if !strings.Contains(logs, want) {
			t.Errorf("get-logs lacks %q:\n%s", want, logs)
		}
	}
	// The invoke went to one of the two; its log has the image's access line for scoring_route.
	// (A replica's log reaches the server a moment after it is written.)
	testwait.Within(t, time.Minute, "a replica's log to show the scoring request", func() bool {
		all := w.logs(dv.Replicas[0].Run) + w.logs(dv.Replicas[1].Run)
		return strings.Contains(all, `"POST /predict HTTP/1.1" 200`)
	})

	// One replica's readiness route starts failing: it leaves the rotation, every answer comes
	// from the other, and it is not replaced (its liveness route still answers).
	s := w.scorer("my-endpoint")
	var unready selfServeAnswer
	if code := s.post("/admin/unready", "{}", &unready); code != 200 || unready.Host == "" {
		t.Fatalf("POST /admin/unready through the router: %d", code)
	}
	testwait.Within(t, 30*time.Second, "the unready replica to leave the rotation", func() bool { return w.replicasReady("selfserve") == 1 })
	for i := range 20 {
		var a selfServeAnswer
		if code := s.post("/score", fmt.Sprintf(`{"x": %d}`, i), &a); code != 200 || a.Y != 3*i || a.Host == unready.Host {
			t.Fatalf("request %d: %d %+v; want an answer from the ready replica, not %s", i, code, a, unready.Host)
		}
	}
	var after api.DeploymentView
	w.jsonOut(&after, "online-deployment", "show", "-n", "selfserve", "-e", "my-endpoint")
	if !sameRuns(after.Replicas, dv.Replicas) {
		t.Errorf("replicas after a readiness failure: %+v; want the same two, running", after.Replicas)
	}

	// The ready replica's container exits: a new replica replaces it and serves.
	if code := s.post("/admin/exit", "{}", nil); code == 200 {
		t.Fatalf("the request that ends the container was answered 200")
	}
	testwait.Within(t, 90*time.Second, "a new replica to replace the one whose container exited", func() bool {
		w.jsonOut(&after, "online-deployment", "show", "-n", "selfserve", "-e", "my-endpoint")
		for _, rep := range after.Replicas {
			if rep.Run != dv.Replicas[0].Run && rep.Run != dv.Replicas[1].Run && rep.Status == "Running" && rep.Address != "" {
				return true
			}
		}
		return false
	})
	testwait.Within(t, 30*time.Second, "the endpoint to answer through the new replica", func() bool {
		var a selfServeAnswer
		return s.post("/score", `{"x": 2}`, &a) == 200 && a.Y == 6
	})

	// Delete: the traffic moved away first, then every replica's container stops.
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--traffic", "selfserve=0")
	w.ok("online-deployment", "delete", "-n", "selfserve", "-e", "my-endpoint", "--yes")
	testwait.Within(t, time.Minute, "the replicas' containers to stop", func() bool {
		out, err := exec.Command("podman", "ps", "--format", "{{.Names}}").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, rep := range after.Replicas {
			if slices.Contains(strings.Fields(string(out)), "hangar-"+rep.Run) {
				return false
			}
		}
		return true
	})
}

// sameRuns says both lists are the same runs, all running.
func sameRuns(a, b []api.ReplicaView) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Run != b[i].Run || a[i].Status != "Running" {
			return false
		}
	}
	return true
}

// The same deployment on a managed cluster: its replica is placed on a node the cluster starts,
// whose agent's supervisor runs the image by its entrypoint; the endpoint answers through it.
func TestOnlineEndpointImageEntrypointOnCluster(t *testing.T) {
	buildSelfServeImage(t)
	w, dir := endpointWS(t)
	dep := strings.Replace(selfServeDeployment, "instance_type: Standard_DS3_v2\ninstance_count: 2\n", "instance_count: 1\n", 1) +
		"compute: azureml:pool\n"
	writeFiles(t, dir, map[string]string{
		"cluster.yml":   "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
		"selfserve.yml": dep,
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "selfserve.yml"), "--all-traffic", "--timeout", "3m")
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", "selfserve", "-e", "my-endpoint")
	if len(dv.Replicas) != 1 || dv.Replicas[0].Address == "" {
		t.Fatalf("the replica on the cluster: %+v", dv.Replicas)
	}
	if d := w.show(dv.Replicas[0].Run); d.Compute != "pool" {
		t.Errorf("the replica's run is on %s, want pool", d.Compute)
	}
	var a selfServeAnswer
	if code := w.scorer("my-endpoint").post("/score", `{"x": 4}`, &a); code != 200 || a.Y != 12 || a.Deployment != "selfserve" {
		t.Fatalf("scoring through the cluster's replica: %d %+v", code, a)
	}
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--traffic", "selfserve=0")
	w.ok("online-deployment", "delete", "-n", "selfserve", "-e", "my-endpoint", "--yes")
	testwait.Within(t, time.Minute, "the replica's container to stop", func() bool {
		out, err := exec.Command("podman", "ps", "--format", "{{.Names}}").Output()
		return err == nil && !slices.Contains(strings.Fields(string(out)), "hangar-"+dv.Replicas[0].Run)
	})
}
