package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// kubeYAML is the test cluster's compute file (kubetest.ComputeYAML).
func kubeYAML(name, kubeconfig, bin, extra string) string {
	return kubetest.ComputeYAML(name, kubeconfig, bin, extra)
}

// Attach a Kubernetes cluster and run jobs there through the CLI: attach refuses a cluster that
// does not answer, a namespace that does not exist, credentials that may not create Jobs and a
// file that says nothing of the supervisor, each saying which; a job runs on the real kubelet
// (code, input, logs, outputs) and completes although the server is killed (-9) and restarted
// in the middle of it; a running job is canceled (the command gets SIGTERM); a GPU job waits with the scheduler's reason, also after that restart,
// until a cancel deletes its Job.
func TestKubernetesTarget(t *testing.T) {
	t.Parallel()
	kc := kubetest.Config(t)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	bin := backendtest.StaticBinary(t)
	w := newWS(t, "--stale-after", "2s")
	w.kubeCleanup(kc)
	dir := t.TempDir()
	cfg, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	down := strings.Replace(string(cfg), "server: 'https://127.0.0.1:", "server: 'https://127.0.0.1:1", 1)
	writeFiles(t, dir, map[string]string{
		"down.kubeconfig": down,
		"kube.yml":        kubeYAML("kube", kc, bin, ""),
		"down.yml":        kubeYAML("down", filepath.Join(dir, "down.kubeconfig"), bin, ""),
		"nons.yml":        strings.Replace(kubeYAML("nons", kc, bin, ""), "namespace: "+kubetest.Namespace, "namespace: no-such-ns", 1),
		"ro.yml":          kubeYAML("ro", kc, bin, "context: hangar-readonly\n"),
		"nosup.yml":       fmt.Sprintf("name: nosup\ntype: kubernetes\nkubeconfig: %s\nnamespace: %s\n", kc, kubetest.Namespace),
		"src/train.py": `import sys, time
print("data:", open(sys.argv[1]).read().strip(), flush=True)
for step in range(12):
    print("step", step, flush=True)
    time.sleep(0.5)
open("outputs/model.txt", "w").write("trained\n")
`,
		"data/in.txt": "input data\n",
		"job.yml":     "command: python3 train.py ${{inputs.data}}\ncode: src\ncompute: azureml:kube\nenvironment: {image: localhost/hangar-python:latest}\ninputs:\n  data: {type: uri_file, path: data/in.txt}\n",
		"gpu.yml":     "command: echo never runs\ncompute: kube\nresources: {instance_type: gpu}\n",
		"noimage.yml": "command: echo never runs\ncompute: kube\nenvironment: {image: localhost/no-such-image:1}\n",
		"long.yml":    "command: trap 'echo got TERM; exit 143' TERM; echo started; while true; do sleep 0.1; done\ncompute: kube\n",
	})
	for file, want := range map[string]string{
		"down.yml":  "does not answer",
		"nons.yml":  `namespace: "no-such-ns" does not exist`,
		"ro.yml":    "may not create jobs.batch",
		"nosup.yml": "supervisor: required",
	} {
		r := w.run("compute", "attach", "-f", filepath.Join(dir, file))
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("attach %s: exit %d, %q; want an error saying %q", file, r.code, r.stderr, want)
		}
	}
	w.ok("compute", "attach", "-f", filepath.Join(dir, "kube.yml"))
	show := w.ok("compute", "show", "-n", "kube").stdout
	for _, want := range []string{"kubernetes", kubetest.Namespace, "host path " + bin, "real (default): nodes map[hangar.test/kind:real]",
		"gpu: requests nvidia.com/gpu 1; limits nvidia.com/gpu 1"} {
		if !strings.Contains(show, want) {
			t.Errorf("compute show lacks %q:\n%s", want, show)
		}
	}

	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 2*time.Minute, "the job to run on the kubelet", func() bool { return logHas(w, name, "step 2") })
	gpu := w.create(filepath.Join(dir, "gpu.yml"))
	w.killServer()
	w.startServer()
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("the job ended %s (%s); log %q", d.Status, d.StatusReason, w.logs(name))
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--download-path", out)
	if got := readFile(t, filepath.Join(out, name, "artifacts", "outputs", "model.txt")); got != "trained\n" {
		t.Errorf("outputs/model.txt = %q", got)
	}
	log := readFile(t, filepath.Join(out, name, "artifacts", "user_logs", "std_log.txt"))
	for _, want := range []string{"data: input data", "step 0", "step 6", "step 11"} {
		if !strings.Contains(log, want) {
			t.Errorf("the downloaded log lacks %q:\n%s", want, log)
		}
	}

	// A cancel while it runs: the Job is deleted, the supervisor (told by the server that this is
	// a cancel) stops the command, which sees SIGTERM, and the run ends Canceled.
	long := w.create(filepath.Join(dir, "long.yml"))
	testwait.Within(t, 2*time.Minute, "the long job to start", func() bool { return logHas(w, long, "started") })
	w.ok("job", "cancel", "-n", long, "--yes")
	if d := w.waitStatus(long, 2*time.Minute, job.Canceled, job.Failed, job.Completed); d.Status != job.Canceled || !logHas(w, long, "got TERM") {
		t.Errorf("cancel while running: %s (%s), log %q", d.Status, d.StatusReason, w.logs(long))
	}

	pending := func() bool {
		d := w.show(gpu)
		return d.Status == job.Queued && strings.Contains(d.StatusReason, "Insufficient nvidia.com/gpu")
	}
	testwait.Within(t, time.Minute, "the scheduler's reason on the GPU job", pending)
	// An image the node cannot pull: the kubelet's reason, in its words.
	noimg := w.create(filepath.Join(dir, "noimage.yml"))
	testwait.Within(t, 2*time.Minute, "the kubelet's image pull reason", func() bool {
		d := w.show(noimg)
		return d.Status == job.Queued && (strings.Contains(d.StatusReason, "ErrImagePull") || strings.Contains(d.StatusReason, "ImagePullBackOff")) &&
			strings.Contains(d.StatusReason, "localhost/no-such-image:1")
	})
	w.ok("job", "cancel", "-n", noimg, "--yes")
	if d := w.waitStatus(noimg, 2*time.Minute, job.Canceled, job.Failed, job.Completed); d.Status != job.Canceled {
		t.Errorf("the job without its image, canceled: %s (%s)", d.Status, d.StatusReason)
	}
	w.ok("job", "cancel", "-n", gpu, "--yes")
	if d := w.waitStatus(gpu, 2*time.Minute, job.Canceled, job.Failed, job.Completed); d.Status != job.Canceled {
		t.Errorf("the GPU job canceled while pending: %s (%s)", d.Status, d.StatusReason)
	}
	testwait.Within(t, time.Minute, "the GPU job's Job to be deleted", func() bool {
		l, err := cs.BatchV1().Jobs(kubetest.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + kube.RunLabel(gpu)})
		return err == nil && len(l.Items) == 0
	})
}
