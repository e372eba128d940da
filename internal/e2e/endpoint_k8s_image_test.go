package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// k8sSelfServeImage is selfServeImage for the test cluster's kubelet, whose pods share the
// node's network there (host_network): its own port, so that it meets no other test's.
const (
	k8sSelfServeImage = "localhost/hangar-e2e-selfserve-k8s:1"
	k8sSelfServePort  = "5417"
)

// buildK8sSelfServeImage builds the self-serving image with podman and imports it into the test
// cluster's containerd (scripts/setup/kubernetes.sh --import), where its kubelet finds it.
func buildK8sSelfServeImage(t *testing.T, kubeconfig string) {
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
		"server.py": strings.ReplaceAll(selfServeServer, "5001", k8sSelfServePort),
		"Containerfile": "FROM " + base + "\nCOPY server.py /app/server.py\nWORKDIR /app\n" +
			`ENTRYPOINT ["python3", "/app/server.py"]` + "\n",
	})
	if out, err := exec.Command("podman", "build", "-q", "-t", k8sSelfServeImage, dir).CombinedOutput(); err != nil {
		t.Fatalf("podman build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "-f", k8sSelfServeImage).Run() })
	script, err := filepath.Abs("../../scripts/setup/kubernetes.sh")
	if err != nil {
		t.Fatal(err)
	}
	// The cluster's state directory holds its kubeconfig.
	if out, err := exec.Command("bash", script, "--import", k8sSelfServeImage, filepath.Dir(kubeconfig)).CombinedOutput(); err != nil {
		t.Fatalf("import %s into the test cluster: %v\n%s", k8sSelfServeImage, err, out)
	}
}

// Azure's custom-container deployment on a Kubernetes target whose pods share the node's network:
// the replica is a pod of the online deployment's Kubernetes Deployment (with its Service, the
// image's port a hostPort) that runs the image as its main container with its own entrypoint,
// beside the supervisor's sidecar. The model is where AZUREML_MODEL_DIR says, scoring goes
// through the router to the image, get-logs shows the image's own output (relayed from
// Kubernetes' pods/log), and an image that exits is restarted by Kubernetes with its backoff: the
// replica's run stays, its log has the image's last words and a line that says so, and the
// endpoint answers again from the restarted container.
func TestOnlineEndpointImageOnKubernetes(t *testing.T) {
	kc := kubetest.Config(t)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	bin := backendtest.StaticBinary(t)
	buildK8sSelfServeImage(t, kc)
	w, dir := endpointWS(t)
	w.kubeCleanup(kc)
	dep := strings.NewReplacer(selfServeImage, k8sSelfServeImage, "5001", k8sSelfServePort,
		"instance_type: Standard_DS3_v2\n", "", "instance_count: 2\n", "instance_count: 1\n").Replace(selfServeDeployment) +
		"compute: azureml:kube\n"
	writeFiles(t, dir, map[string]string{"kube.yml": kubeYAML("kube", kc, bin, ""), "selfserve.yml": dep})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "kube.yml"))
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
	w.jsonOut(&dv, "online-deployment", "show", "-n", "selfserve", "-e", "my-endpoint")
	if len(dv.Replicas) != 1 || dv.Replicas[0].Address == "" {
		t.Fatalf("the replica on Kubernetes: %+v", dv.Replicas)
	}
	first := dv.Replicas[0].Run
	if d := w.show(first); d.Compute != "kube" {
		t.Errorf("the replica's run is on %s, want kube", d.Compute)
	}

	// The pod: the image as its main container, with no command of Hangar's, and the supervisor
	// as a running sidecar; the pod claimed the run (its label).
	pods, err := cs.CoreV1().Pods(kubetest.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + kube.RunLabel(first)})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the replica's pods: %v %v", pods, err)
	}
	p := pods.Items[0]
	if c := p.Spec.Containers; len(c) != 1 || c[0].Image != k8sSelfServeImage || c[0].Command != nil || c[0].Args != nil {
		t.Errorf("the pod's main container %+v; want the image with its own entrypoint", c)
	}
	sidecarUp := false
	for _, s := range p.Status.InitContainerStatuses {
		sidecarUp = sidecarUp || s.Name == "run" && s.State.Running != nil
	}
	if !sidecarUp {
		t.Errorf("the supervisor's sidecar does not run: %+v", p.Status.InitContainerStatuses)
	}

	// get-logs: the image's own output, relayed into the replica's log.
	var logs string
	testwait.Within(t, time.Minute, "get-logs to show the image's output", func() bool {
		logs = w.deploymentLogs("selfserve")
		return strings.Contains(logs, `"POST /predict HTTP/1.1" 200`)
	})
	for _, want := range []string{"selfserve: loaded w = 3 from /var/azureml-app/azureml-models/m/1 in /app", "with its own entrypoint"} {
		if !strings.Contains(logs, want) {
			t.Errorf("get-logs lacks %q:\n%s", want, logs)
		}
	}

	checkImageDeployment(t, cs, p)

	// The image exits: Kubernetes restarts it in its pod; the run stays, and says so in its log.
	s := w.scorer("my-endpoint")
	if code := s.post("/admin/exit", "{}", nil); code == 200 {
		t.Fatalf("the request that ends the container was answered 200")
	}
	testwait.Within(t, 2*time.Minute, "the endpoint to answer through the restarted image", func() bool {
		var a selfServeAnswer
		return s.post("/score", `{"x": 2}`, &a) == 200 && a.Y == 6
	})
	testwait.Within(t, time.Minute, "the replica's log to tell the restart", func() bool {
		l := w.logs(first)
		return strings.Contains(l, "selfserve: exiting on request") &&
			strings.Contains(l, "the image exited with code 4; Kubernetes restarts it (restart 1)")
	})
	if d := w.show(first); d.Status != job.Running {
		t.Errorf("the replica whose image was restarted: %s %q", d.Status, d.StatusReason)
	}
	w.jsonOut(&dv, "online-deployment", "show", "-n", "selfserve", "-e", "my-endpoint")
	if len(dv.Replicas) != 1 || dv.Replicas[0].Run != first {
		t.Errorf("replicas after the restart: %+v; want run %s still", dv.Replicas, first)
	}
	if l := w.logs(first); strings.Count(l, "selfserve: loaded w = 3") != 2 {
		t.Errorf("the replica's log should have both containers' output:\n%s", l)
	}

	w.ok("online-endpoint", "update", "-n", "my-endpoint", "--traffic", "selfserve=0")
	w.ok("online-deployment", "delete", "-n", "selfserve", "-e", "my-endpoint", "--yes")
	// The image (python as PID 1 ignores SIGTERM) may take the pod's grace period to stop:
	// deleted is enough here.
	testwait.Within(t, time.Minute, "the replicas' pods to be deleted", func() bool {
		l, err := cs.CoreV1().Pods(kubetest.Namespace).List(t.Context(), metav1.ListOptions{
			LabelSelector: kube.LabelWorkspace + "=" + p.Labels[kube.LabelWorkspace]})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range l.Items {
			if q.DeletionTimestamp == nil && (q.Status.Phase == "Running" || q.Status.Phase == "Pending") {
				return false
			}
		}
		return true
	})
}

// checkImageDeployment checks that the replica's pod p belongs to a Deployment of the online
// deployment, at 1 replica, restarted in place, with a Service on the image's port, which is the
// pod's hostPort (the target's pods share the node's network).
func checkImageDeployment(t *testing.T, cs kubetest.Interface, p corev1.Pod) {
	t.Helper()
	name := p.Labels[kube.LabelServing]
	d, err := cs.AppsV1().Deployments(kubetest.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the replica's pod %s names Deployment %q: %v", p.Name, name, err)
	}
	if *d.Spec.Replicas != 1 || d.Labels[kube.LabelEndpoint] != "my-endpoint" || d.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("Deployment %s: replicas %d, labels %v, restart %s", name, *d.Spec.Replicas, d.Labels, d.Spec.Template.Spec.RestartPolicy)
	}
	svc, err := cs.CoreV1().Services(kubetest.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 5417 {
		t.Errorf("the Deployment's Service: %+v, %v", svc, err)
	}
	if c := p.Spec.Containers[0]; !p.Spec.HostNetwork || len(c.Ports) != 1 || c.Ports[0].HostPort != 5417 {
		t.Errorf("the image's port on the host network: %v %+v", p.Spec.HostNetwork, c.Ports)
	}
}
