package kubernetes_test

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// supervisorImage builds an image holding nothing but a static hangar binary at
// /usr/local/bin/hangar (podman import: no registry here) and copies it into the test cluster's
// containerd.
func supervisorImage(t *testing.T) string {
	t.Helper()
	const image = "localhost/hangar-supervisor:test"
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr/local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(backendtest.StaticBinary(t), "hangar"))
	if err == nil {
		err = os.WriteFile(filepath.Join(root, "usr/local/bin/hangar"), data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	tar := filepath.Join(t.TempDir(), "image.tar")
	for _, argv := range [][]string{
		{"tar", "-C", root, "-cf", tar, "."},
		{"podman", "import", "-q", tar, image},
		{"bash", "../../../scripts/setup/kubernetes.sh", "--import", image},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	return image
}

// A target whose supervisor comes from an image: an init container copies the binary into the
// pod, and the run's own image (which holds no hangar) runs the command under it.
func TestSupervisorFromAnImage(t *testing.T) {
	kc := kubetest.Config(t)
	image := supervisorImage(t)
	ws := backendtest.NewWorkspace(t)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	spec := realSpec(t, kc)
	spec.Kubernetes.Supervisor = compute.KubeSupervisor{Image: image}
	target := backendtest.Target(t, spec)
	b := &kube.Backend{ServerURL: func() string { return ws.URL }, Targets: backendtest.Resolver(target), Log: slog.New(slog.DiscardHandler)}
	sp := job.Spec{Type: "command", Command: `echo "from the image's supervisor"; test ! -e /usr/local/bin/hangar && echo "no hangar in the run's image"`,
		Compute: target.Name, CodeSnapshot: ws.PutTree(t, map[string]string{"a.txt": "a\n"})}
	id := "image-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	l := backend.Launch{RunID: id, Token: id + ".tok", Attempt: 1, Target: target, Spec: sp}
	ws.AddRun(l.RunID, l.Token, sp, 1, nil)
	h, err := b.Submit(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupRun(cs, id) })
	var final *job.Result
	waitUntil(t, "the run's end", func() bool {
		s, err := b.Status(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		final = s.Final
		return final != nil
	})
	d := ws.Delivered(l.RunID)
	if final.State != job.Completed || !logHasLine(d.Logs["std_log.txt"], "from the image's supervisor") || !logHasLine(d.Logs["std_log.txt"], "no hangar in the run's image") {
		t.Errorf("final %+v, logs %q", final, d.Logs)
	}
}

// A pod Kubernetes stops by itself (here: deleted through the API, as a person or a controller
// might) is no cancel: the supervisor asks the server, which has no cancel for the run, so the
// run ends Failed saying what happened, with its outputs and logs still shipped.
func TestPodStoppedByKubernetesIsNoCancel(t *testing.T) {
	kc := kubetest.Config(t)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	ws := backendtest.NewWorkspace(t)
	target := realTarget(t, kc)
	b := &kube.Backend{ServerURL: func() string { return ws.URL }, Targets: backendtest.Resolver(target), Log: slog.New(slog.DiscardHandler)}
	sp := job.Spec{Type: "command", Command: `echo partial > outputs/partial.txt; echo started; exec sleep 300`,
		Compute: target.Name, CodeSnapshot: ws.PutTree(t, map[string]string{"a.txt": "a\n"})}
	id := "stopped-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	l := backend.Launch{RunID: id, Token: id + ".tok", Attempt: 1, Target: target, Spec: sp}
	ws.AddRun(l.RunID, l.Token, sp, 1, nil)
	h, err := b.Submit(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupRun(cs, id) })
	waitUntil(t, "the run to start", func() bool { return logHasLine(ws.Delivered(id).Logs["std_log.txt"], "started") })
	pods := livePods(t, cs, id)
	if len(pods) != 1 {
		t.Fatalf("%d pods", len(pods))
	}
	if err := cs.CoreV1().Pods(kubetest.Namespace).Delete(t.Context(), pods[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var final *job.Result
	waitUntil(t, "the run's end", func() bool {
		s, err := b.Status(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		final = s.Final
		return final != nil
	})
	d := ws.Delivered(id)
	if final.State != job.Failed || !strings.Contains(final.Reason, "Kubernetes stopped the pod") || d.Final == nil || d.Final.State != job.Failed {
		t.Errorf("final %+v, the workspace saw %+v; want Failed: Kubernetes stopped the pod", final, d.Final)
	}
	if len(d.Artifacts) == 0 {
		t.Fatalf("no artifacts registered")
	}
	if out, err := ws.File(d.Artifacts[0].Artifacts, "outputs/partial.txt"); err != nil || out != "partial\n" {
		t.Errorf("outputs/partial.txt: %q, %v", out, err)
	}
}
