package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// scoreScript is a deployment's scoring script in Azure's shape: init() loads the model from
// AZUREML_MODEL_DIR (the registered folder, "model", under it, as Azure lays it out), run(raw_data)
// answers with the model's weight times x and who answered.
const scoreScript = `import json, os

def init():
    global W
    with open(os.path.join(os.environ["AZUREML_MODEL_DIR"], "model", "weights.json")) as f:
        W = json.load(f)["w"]
    print("init: loaded w =", W, flush=True)

def run(raw_data):
    x = json.loads(raw_data)["x"]
    return {"y": W * x, "deployment": os.environ["DEPLOYMENT_COLOR"]}
`

// endpointWS is a workspace with a trained model registered as m:1 and the files of an endpoint
// and two deployments of it (blue and green; green answers with its own color).
func endpointWS(t *testing.T) (*ws, string) {
	t.Helper()
	return endpointWSEnv(t, nil)
}

// endpointWSEnv is endpointWS with extra variables for the server (and so its runs).
func endpointWSEnv(t *testing.T, env []string) (*ws, string) {
	t.Helper()
	requireTool(t, "python3")
	w := newWSEnv(t, env)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"train.yml": "command: >-\n  mkdir -p ${{outputs.model}} && echo '{\"w\": 3}' > ${{outputs.model}}/weights.json\n" +
			"outputs:\n  model: {type: custom_model}\n",
		"endpoint.yml": "$schema: https://azuremlschemas.azureedge.net/latest/managedOnlineEndpoint.schema.json\n" +
			"name: my-endpoint\nauth_mode: key\n",
		"score/score.py": scoreScript,
		"blue.yml":       deploymentYAML("blue"),
		"green.yml":      deploymentYAML("green"),
		"request.json":   `{"x": 7}`,
	})
	train := w.create(filepath.Join(dir, "train.yml"))
	if r := w.run("job", "stream", "-n", train); r.code != 0 {
		t.Fatalf("training job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	w.ok("model", "create", "--name", "m", "--path", "azureml://jobs/"+train+"/outputs/model")
	w.ok("online-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"))
	return w, dir
}

func deploymentYAML(color string) string {
	return "$schema: https://azuremlschemas.azureedge.net/latest/managedOnlineDeployment.schema.json\n" +
		"name: " + color + "\nendpoint_name: my-endpoint\nmodel: azureml:m:1\n" +
		"code_configuration:\n  code: score\n  scoring_script: score.py\n" +
		"environment_variables:\n  DEPLOYMENT_COLOR: " + color + "\n" +
		"instance_type: Standard_DS3_v2\ninstance_count: 1\n" +
		"request_settings:\n  max_concurrent_requests_per_instance: 32\n  request_timeout_ms: 10000\n"
}

// scorer calls an endpoint's scoring URI the way a client application does.
type scorer struct {
	uri, key string
	client   *http.Client
}

func (w *ws) scorer(endpoint string) *scorer {
	w.t.Helper()
	c := w.client()
	ctx := w.t.Context()
	v, err := c.Endpoints.Get(ctx, endpoint)
	if err != nil {
		w.t.Fatal(err)
	}
	k, err := c.Endpoints.Credentials(ctx, endpoint)
	if err != nil {
		w.t.Fatal(err)
	}
	return &scorer{uri: v.ScoringURI, key: k.PrimaryKey,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

type scoreAnswer struct {
	Y          int    `json:"y"`
	Deployment string `json:"deployment"`
}

// score sends {"x": x} (to deployment, when given) and returns the status and answer.
func (s *scorer) score(x int, deployment string) (int, scoreAnswer, string) {
	req, _ := http.NewRequest(http.MethodPost, s.uri, strings.NewReader(fmt.Sprintf(`{"x": %d}`, x)))
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	if deployment != "" {
		req.Header.Set("azureml-model-deployment", deployment)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, scoreAnswer{}, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a scoreAnswer
	_ = json.Unmarshal(b, &a)
	return resp.StatusCode, a, string(b)
}

// Online endpoints end to end, as a user runs them from the CLI: a model from a training job
// deployed twice (blue, green) behind one endpoint; invoke; a 90/10 split measured over 10,000
// requests; a blue/green switch under continuous load with no failed request; mirror traffic
// that reaches green without changing any answer; keys and errors.
func TestOnlineEndpoint(t *testing.T) {
	w, dir := endpointWS(t)
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "blue.yml"), "--all-traffic")
	r := w.ok("online-endpoint", "invoke", "-n", "my-endpoint", "--request-file", filepath.Join(dir, "request.json"))
	if !strings.Contains(r.stdout, `"y": 21`) && !strings.Contains(r.stdout, `"y":21`) {
		t.Fatalf("invoke answered %q; want y = 3 × 7 from the trained model", r.stdout)
	}
	s := w.scorer("my-endpoint")

	// Without the key, or with a wrong one: refused, and nothing about the endpoint is told.
	for _, key := range []string{"", "wrong"} {
		bad := *s
		bad.key = key
		if code, _, body := bad.score(1, ""); code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Errorf("key %q: %d %s; want 401/403", key, code, body)
		}
	}

	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "green.yml"))
	if code, a, body := s.score(2, "green"); code != 200 || a.Deployment != "green" || a.Y != 6 {
		t.Fatalf("to green by header: %d %s", code, body)
	}
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--traffic", "blue=90 green=10")
	counts := s.burst(10000, 16)
	if counts["failed"] > 0 {
		t.Fatalf("failed requests during the split: %v", counts)
	}
	if share := float64(counts["green"]) / 10000; share < 0.08 || share > 0.12 {
		t.Errorf("green got %.1f%% of 10,000 requests; want 10 ± 2%% (%v)", 100*share, counts)
	}

	// Blue/green switches and an update of blue under continuous load: every request answered.
	stop := make(chan struct{})
	var load sync.WaitGroup
	var failed, served atomic.Int64
	var firstFailure atomic.Value
	for range 4 {
		load.Add(1)
		go func() {
			defer load.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if code, _, body := s.score(1, ""); code != 200 {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %s", code, body))
				} else {
					served.Add(1)
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--traffic", "blue=0 green=100")
	time.Sleep(time.Second)
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--traffic", "blue=100 green=0")
	// An update of the deployment taking all the traffic: its new replica replaces the old one.
	var beforeUpdate api.DeploymentView
	w.jsonOut(&beforeUpdate, "online-deployment", "show", "-n", "blue", "-e", "my-endpoint")
	w.ok("online-deployment", "update", "-f", filepath.Join(dir, "blue.yml"), "--set", "environment_variables.VERSION=2")
	testwait.Within(t, time.Minute, "the old replica of blue to stop after its drain", func() bool {
		var v api.DeploymentView
		w.jsonOut(&v, "online-deployment", "show", "-n", "blue", "-e", "my-endpoint")
		for _, r := range v.Replicas {
			if r.Run == beforeUpdate.Replicas[0].Run && r.Status == "Running" {
				return false
			}
		}
		return true
	})
	close(stop)
	load.Wait()
	if failed.Load() > 0 || served.Load() == 0 {
		t.Errorf("traffic switches and an update under load: %d failed (first: %v), %d served", failed.Load(), firstFailure.Load(), served.Load())
	}

	// Mirror 50% to green: every answer is blue's, and green's replica sees the copies.
	before := strings.Count(w.deploymentLogs("green"), "POST /score")
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--mirror-traffic", "green=50")
	mirrored := s.burst(200, 4)
	if mirrored["blue"] != 200 {
		t.Errorf("with green mirrored, answers = %v; want all 200 from blue", mirrored)
	}
	testwait.Within(t, 30*time.Second, "green's replica to log the mirrored requests", func() bool {
		return strings.Count(w.deploymentLogs("green"), "POST /score")-before >= 50
	})

	// A deployment that takes traffic cannot be deleted; traffic moved, it can.
	if r := w.run("online-deployment", "delete", "-n", "blue", "-e", "my-endpoint", "--yes"); r.code == 0 || !strings.Contains(r.stderr, "traffic") {
		t.Errorf("delete of a deployment with traffic: exit %d %s", r.code, r.stderr)
	}
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", "blue", "-e", "my-endpoint")
	if dv.ProvisioningState != "Succeeded" || len(dv.Replicas) != 1 || dv.Replicas[0].Status != "Running" {
		t.Errorf("blue shows %+v", dv)
	}
	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--mirror-traffic", "green=0")
	if r := w.run("online-deployment", "delete", "-n", "green", "-e", "my-endpoint"); r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("delete without --yes and no terminal: exit %d %s", r.code, r.stderr)
	}
	if r := w.ok("online-deployment", "delete", "-n", "green", "-e", "my-endpoint", "--yes"); !strings.Contains(r.stdout, "Deleted deployment green of my-endpoint") {
		t.Errorf("delete said %q", r.stdout)
	}
	testwait.Within(t, 10*time.Second, "requests to the deleted deployment to get 404", func() bool {
		code, _, _ := s.score(1, "green")
		return code == http.StatusNotFound
	})
}

// burst sends n requests over conc connections and counts the answers by deployment ("failed":
// any that was not a 200).
func (s *scorer) burst(n, conc int) map[string]int {
	var mu sync.Mutex
	counts := map[string]int{}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				code, a, body := s.score(1, "")
				mu.Lock()
				if code == 200 {
					counts[a.Deployment]++
				} else {
					counts["failed"]++
					counts[fmt.Sprintf("failed: %d %s", code, strings.TrimSpace(body))]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return counts
}

func (w *ws) deploymentLogs(name string) string {
	w.t.Helper()
	return w.ok("online-deployment", "get-logs", "-n", name, "-e", "my-endpoint").stdout
}

// jsonOut runs a command with -o json and decodes its answer.
func (w *ws) jsonOut(out any, args ...string) {
	w.t.Helper()
	r := w.ok(append(args, "-o", "json")...)
	if err := json.Unmarshal(bytes.TrimSpace([]byte(r.stdout)), out); err != nil {
		w.t.Fatalf("hangar %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
}

// crashyScript is scoreScript whose process dies on x = 666 (a crash, not an exception).
const crashyScript = scoreScript + `
_run = run
def run(raw_data):
    if json.loads(raw_data)["x"] == 666:
        os._exit(1)
    return _run(raw_data)
`

// A deployment that scales to zero holds the first request while a replica starts, then goes
// back to zero when idle; a replica that crashes is replaced, and the endpoint answers again.
func TestOnlineEndpointScaleFromZeroAndCrash(t *testing.T) {
	w, dir := endpointWS(t)
	writeFiles(t, dir, map[string]string{
		"crash/score.py": crashyScript,
		"zero.yml": strings.Replace(deploymentYAML("zero"), "instance_count: 1\n",
			"scale_settings:\n  type: target_utilization\n  min_instances: 0\n  max_instances: 2\n  scale_down_delay: 3\n", 1),
		"crashy.yml": strings.Replace(deploymentYAML("crashy"), "code: score\n", "code: crash\n", 1),
	})
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "zero.yml"), "--all-traffic")
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", "zero", "-e", "my-endpoint")
	if len(dv.Replicas) != 0 {
		t.Fatalf("min_instances 0 and no request: %d replicas; want none", len(dv.Replicas))
	}
	s := w.scorer("my-endpoint")
	start := time.Now()
	if code, a, body := s.score(5, ""); code != 200 || a.Y != 15 || a.Deployment != "zero" {
		t.Fatalf("first request to a deployment at zero: %d %s", code, body)
	}
	t.Logf("first answer from zero replicas after %s", time.Since(start).Round(time.Millisecond))
	testwait.Within(t, 60*time.Second, "the idle deployment to go back to zero replicas", func() bool {
		var v api.DeploymentView
		w.jsonOut(&v, "online-deployment", "show", "-n", "zero", "-e", "my-endpoint")
		for _, r := range v.Replicas {
			if r.Status == "Running" || r.Status == "Queued" || r.Status == "Preparing" {
				return false
			}
		}
		return true
	})

	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "crashy.yml"))
	w.jsonOut(&dv, "online-deployment", "show", "-n", "crashy", "-e", "my-endpoint")
	first := dv.Replicas[0].Run
	if code, _, _ := s.score(666, "crashy"); code == 200 {
		t.Fatalf("the request that kills the replica was answered 200")
	}
	testwait.Within(t, 60*time.Second, "a new replica to replace the crashed one", func() bool {
		w.jsonOut(&dv, "online-deployment", "show", "-n", "crashy", "-e", "my-endpoint")
		for _, r := range dv.Replicas {
			if r.Run != first && r.Status == "Running" && r.Address != "" {
				return true
			}
		}
		return false
	})
	if st := w.show(first).Status; st != "Failed" {
		t.Errorf("the crashed replica's run is %s; want Failed", st)
	}
	testwait.Within(t, 30*time.Second, "the endpoint to answer through the new replica", func() bool {
		code, a, _ := s.score(2, "crashy")
		return code == 200 && a.Y == 6
	})
}

// An endpoint outlives a kill -9 of the server: its replicas are runs, which go on; the restarted
// server finds them and their addresses in the store and answers through them at once, with the
// same keys. A deployment whose scoring script cannot start fails with the reason, and its
// replica's log shows the traceback.
func TestOnlineEndpointSurvivesServerKillAndReportsInitFailure(t *testing.T) {
	w, dir := endpointWS(t)
	writeFiles(t, dir, map[string]string{
		"broken/score.py": "def init():\n    raise RuntimeError('the model file is corrupt')\n\ndef run(raw_data):\n    return raw_data\n",
		"broken.yml":      strings.Replace(deploymentYAML("broken"), "code: score\n", "code: broken\n", 1),
	})
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "blue.yml"), "--all-traffic")
	var before api.DeploymentView
	w.jsonOut(&before, "online-deployment", "show", "-n", "blue", "-e", "my-endpoint")
	s := w.scorer("my-endpoint")
	if code, a, body := s.score(4, ""); code != 200 || a.Y != 12 {
		t.Fatalf("before the kill: %d %s", code, body)
	}

	w.killServer()
	w.startServer()
	testwait.Within(t, 20*time.Second, "the restarted server to answer through the same replica", func() bool {
		code, a, _ := s.score(5, "")
		return code == 200 && a.Y == 15
	})
	var after api.DeploymentView
	w.jsonOut(&after, "online-deployment", "show", "-n", "blue", "-e", "my-endpoint")
	if len(after.Replicas) != 1 || after.Replicas[0].Run != before.Replicas[0].Run {
		t.Errorf("replicas after the restart: %+v; want the same run %s", after.Replicas, before.Replicas[0].Run)
	}

	r := w.run("online-deployment", "create", "-f", filepath.Join(dir, "broken.yml"), "--timeout", "2m")
	if r.code == 0 || !strings.Contains(r.stderr, "failed") || !strings.Contains(r.stderr, "exited with code 3") {
		t.Errorf("a deployment whose init() raises: exit %d\n%s", r.code, r.stderr)
	}
	if logs := w.deploymentLogs("broken"); !strings.Contains(logs, "RuntimeError: the model file is corrupt") {
		t.Errorf("get-logs of the failed deployment lacks the traceback:\n%s", logs)
	}
	if code, a, _ := s.score(1, ""); code != 200 || a.Deployment != "blue" {
		t.Errorf("the endpoint stopped answering while another deployment failed: %d", code)
	}
}

// A deployment on an attached VM (a real sshd in its own network namespace): its replica is a
// run there, and the server reaches it at the VM's address (its supervisor talks to the server
// through the SSH tunnel, so it only sees the VM's loopback).
func TestOnlineEndpointOnSSHTarget(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{NetNS: true})
	w, dir := endpointWS(t)
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	writeFiles(t, dir, map[string]string{
		"vm.yml":   vmYAML("vm1", srv, srv.KeyFile, work),
		"onvm.yml": deploymentYAML("onvm") + "compute: azureml:vm1\n",
	})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "onvm.yml"), "--all-traffic")
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", "onvm", "-e", "my-endpoint")
	if len(dv.Replicas) != 1 || !strings.HasPrefix(dv.Replicas[0].Address, srv.Host+":") {
		t.Fatalf("the replica on the VM: %+v; want it reached at %s", dv.Replicas, srv.Host)
	}
	if d := w.show(dv.Replicas[0].Run); d.Compute != "vm1" {
		t.Errorf("the replica's run is on %s, want vm1", d.Compute)
	}
	s := w.scorer("my-endpoint")
	if code, a, body := s.score(3, ""); code != 200 || a.Y != 9 || a.Deployment != "onvm" {
		t.Fatalf("scoring through the VM's replica: %d %s", code, body)
	}
}

// A deployment on a Kubernetes target (the project's test cluster, the real kubelet): its replica
// is a one-pod Job whose supervisor serves the scoring script in the image and reports the pod's
// address; the endpoint answers through it.
func TestOnlineEndpointOnKubernetes(t *testing.T) {
	kc := kubetest.Config(t)
	bin := backendtest.StaticBinary(t)
	w, dir := endpointWS(t)
	w.kubeCleanup(kc)
	dep := strings.Replace(deploymentYAML("inpod"), "instance_type: Standard_DS3_v2\n", "", 1) +
		"compute: azureml:kube\nenvironment: {image: " + kubetest.Image + "}\n"
	writeFiles(t, dir, map[string]string{"kube.yml": kubeYAML("kube", kc, bin, ""), "inpod.yml": dep})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "kube.yml"))
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "inpod.yml"), "--all-traffic", "--timeout", "3m")
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", "inpod", "-e", "my-endpoint")
	if len(dv.Replicas) != 1 || dv.Replicas[0].Address == "" {
		t.Fatalf("the replica on Kubernetes: %+v", dv.Replicas)
	}
	t.Cleanup(func() { w.run("job", "cancel", dv.Replicas[0].Run, "--yes") })
	if d := w.show(dv.Replicas[0].Run); d.Compute != "kube" {
		t.Errorf("the replica's run is on %s, want kube", d.Compute)
	}
	s := w.scorer("my-endpoint")
	if code, a, body := s.score(4, ""); code != 200 || a.Y != 12 || a.Deployment != "inpod" {
		t.Fatalf("scoring through the pod: %d %s", code, body)
	}
}
