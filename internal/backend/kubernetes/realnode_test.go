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
	"github.com/hangar-ml/hangar/internal/testwait"
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

// realRun is one run on the test cluster's real kubelet, with the workspace its supervisor
// reports to.
type realRun struct {
	id string
	ws *backendtest.Workspace
	cs kubetest.Interface
	b  *kube.Backend
	h  backend.Handle
}

// startReal submits command on the real kubelet, through a target edited by edit (nil: as is).
func startReal(t *testing.T, prefix, command string, edit func(*compute.Spec)) *realRun {
	t.Helper()
	kc := kubetest.Config(t)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	ws := backendtest.NewWorkspace(t)
	spec := realSpec(t, kc)
	if edit != nil {
		edit(&spec)
	}
	target := backendtest.Target(t, spec)
	r := &realRun{id: prefix + "-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""), ws: ws, cs: cs,
		b: &kube.Backend{ServerURL: func() string { return ws.URL }, Targets: backendtest.Resolver(target), Log: slog.New(slog.DiscardHandler)}}
	sp := job.Spec{Type: "command", Command: command, Compute: target.Name, CodeSnapshot: ws.PutTree(t, map[string]string{"a.txt": "a\n"})}
	l := backend.Launch{RunID: r.id, Token: r.id + ".tok", Attempt: 1, Target: target, Spec: sp}
	ws.AddRun(l.RunID, l.Token, sp, 1, nil)
	if r.h, err = r.b.Submit(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanupRun(cs, r.id) })
	return r
}

// final waits for the run's end as Status reports it.
func (r *realRun) final(t *testing.T) *job.Result {
	t.Helper()
	var final *job.Result
	testwait.Within(t, 3*time.Minute, "the run's end", func() bool {
		s, err := r.b.Status(t.Context(), r.h)
		if err != nil {
			t.Fatal(err)
		}
		final = s.Final
		return final != nil
	})
	return final
}

// A target whose supervisor comes from an image: an init container copies the binary into the
// pod, and the run's own image (which holds no hangar) runs the command under it.
func TestSupervisorFromAnImage(t *testing.T) {
	image := supervisorImage(t)
	r := startReal(t, "image", `echo "from the image's supervisor"; test ! -e /usr/local/bin/hangar && echo "no hangar in the run's image"`,
		func(s *compute.Spec) { s.Kubernetes.Supervisor = compute.KubeSupervisor{Image: image} })
	final := r.final(t)
	d := r.ws.Delivered(r.id)
	if final.State != job.Completed || !logHasLine(d.Logs["std_log.txt"], "from the image's supervisor") || !logHasLine(d.Logs["std_log.txt"], "no hangar in the run's image") {
		t.Errorf("final %+v, logs %q", final, d.Logs)
	}
}

// A pod Kubernetes stops by itself (here: deleted through the API, as a person or a controller
// might) is no cancel: the supervisor asks the server, which has no cancel for the run, so the
// run ends Failed saying what happened, with its outputs and logs still shipped.
func TestPodStoppedByKubernetesIsNoCancel(t *testing.T) {
	r := startReal(t, "stopped", `echo partial > outputs/partial.txt; echo started; exec sleep 300`, nil)
	testwait.Within(t, 3*time.Minute, "the run to start", func() bool { return logHasLine(r.ws.Delivered(r.id).Logs["std_log.txt"], "started") })
	pods := livePods(t, r.cs, r.id)
	if len(pods) != 1 {
		t.Fatalf("%d pods", len(pods))
	}
	if err := r.cs.CoreV1().Pods(kubetest.Namespace).Delete(t.Context(), pods[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	final := r.final(t)
	d := r.ws.Delivered(r.id)
	if final.State != job.Failed || !strings.Contains(final.Reason, "Kubernetes stopped the pod") || d.Final == nil || d.Final.State != job.Failed {
		t.Errorf("final %+v, the workspace saw %+v; want Failed: Kubernetes stopped the pod", final, d.Final)
	}
	if len(d.Artifacts) == 0 {
		t.Fatalf("no artifacts registered")
	}
	if out, err := r.ws.File(d.Artifacts[0].Artifacts, "outputs/partial.txt"); err != nil || out != "partial\n" {
		t.Errorf("outputs/partial.txt: %q, %v", out, err)
	}
}
