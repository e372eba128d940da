package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/spec"
)

// The benchmark's compute file is what `hangar compute attach` decodes, paths with YAML's special
// characters included: the runs it measures go where the brief says (the real kubelet, and a gpu
// type that fits nowhere).
func TestKubeComputeFileDecodes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `odd: #dir "x"`)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := &KubeCluster{Kubeconfig: kubeconfig}
	got, _, err := spec.ParseCompute("kube.yml", []byte(k.kubeComputeYAML(dir)), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &compute.KubernetesSpec{
		Namespace: kubeNamespace, Kubeconfig: kubeconfig, DefaultImage: kubeImage, HostNetwork: true,
		Supervisor: compute.KubeSupervisor{HostPath: dir}, DefaultInstanceType: "real",
		InstanceTypes: map[string]compute.InstanceType{
			"real": {NodeSelector: map[string]string{"hangar.test/kind": "real"},
				Tolerations: []compute.Toleration{{Key: "hangar.test/real", Operator: "Exists", Effect: "NoSchedule"}}},
			"gpu": {Requests: compute.ResourceList{GPU: 1}, Limits: compute.ResourceList{GPU: 1}},
		},
	}
	if got.Name != kubeTarget || got.Type != compute.TypeKubernetes {
		t.Errorf("name, type = %q, %q; want %q, %q", got.Name, got.Type, kubeTarget, compute.TypeKubernetes)
	}
	if diff := cmp.Diff(want, got.Kubernetes); diff != "" {
		t.Errorf("kubernetes spec (-want +got):\n%s", diff)
	}
}

// The watch stamps each step of a Job's life once, when it is first seen, under the run's label
// for Hangar's objects and the Job's name for the others.
func TestSightingsStampEachStepOnce(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	pod := func(labels map[string]string, node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: phase}}
	}
	plain := map[string]string{labelJobName: "p"}
	run := map[string]string{labelJobName: "hangar-r", labelRun: "r"}
	s := &sightings{m: map[string]*sighting{}}
	s.see(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, at(1))
	s.see(pod(plain, "", corev1.PodPending), at(2))
	s.see(pod(plain, "n", corev1.PodPending), at(3))
	s.see(pod(plain, "n", corev1.PodRunning), at(4))
	s.see(pod(plain, "n", corev1.PodSucceeded), at(5))
	s.see(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "hangar-r", Labels: run}}, at(6))
	s.see(pod(run, "n", corev1.PodPending), at(7))
	s.see(pod(run, "n", corev1.PodFailed), at(8))
	want := map[string]sighting{
		"job:p": {job: at(1), pod: at(2), scheduled: at(3), running: at(4)},
		"run:r": {job: at(6), pod: at(7), scheduled: at(7), running: at(8)},
	}
	for key, w := range want {
		if got := s.get(key); got != w {
			t.Errorf("%s: got %+v, want %+v", key, got, w)
		}
	}
}

// The list's latency is compared with the stage whose answer is as long (50 runs), `job show`'s
// and the CPU with the first stage.
func TestStageFiguresBaselines(t *testing.T) {
	ls := []stageLatency{
		{queued: 1, list: []float64{1}, show: []float64{1}, server: 1, apiserver: 10},
		{queued: 50, list: []float64{4}, show: []float64{2}, server: 2, apiserver: 10},
		{queued: 1000, list: []float64{8}, show: []float64{3}, server: 4, apiserver: 5},
	}
	lat, cpu := stageFigures(ls)
	type row struct {
		Baseline string
		Ratio    float64
	}
	got := map[string]row{}
	for _, f := range append(lat, cpu...) {
		got[f.Name] = row{f.Baseline, f.Ratio}
	}
	list := "`job list` (GET /api/jobs, newest 50), "
	show := "`job show` (GET /api/jobs/<id>) of a queued run, "
	server, apiserver := "hangar server CPU, ", "kube-apiserver CPU, "
	want := map[string]row{
		list + "1 queued: p50": {}, list + "50 queued: p50": {}, list + "1000 queued: p50": {list + "50 queued: p50", 2},
		list + "1 queued: p99": {}, list + "50 queued: p99": {}, list + "1000 queued: p99": {list + "50 queued: p99", 2},
		show + "1 queued: p50": {}, show + "50 queued: p50": {show + "1 queued: p50", 2}, show + "1000 queued: p50": {show + "1 queued: p50", 3},
		show + "1 queued: p99": {}, show + "50 queued: p99": {show + "1 queued: p99", 2}, show + "1000 queued: p99": {show + "1 queued: p99", 3},
		server + "1 run(s) Pending in Kubernetes":       {},
		server + "50 run(s) Pending in Kubernetes":      {server + "1 run(s) Pending in Kubernetes", 2},
		server + "1000 run(s) Pending in Kubernetes":    {server + "1 run(s) Pending in Kubernetes", 4},
		apiserver + "1 run(s) Pending in Kubernetes":    {},
		apiserver + "50 run(s) Pending in Kubernetes":   {apiserver + "1 run(s) Pending in Kubernetes", 1},
		apiserver + "1000 run(s) Pending in Kubernetes": {apiserver + "1 run(s) Pending in Kubernetes", 0.5},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("baselines and ratios (-want +got):\n%s", diff)
	}
}
