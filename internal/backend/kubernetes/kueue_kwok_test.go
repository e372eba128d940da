package kubernetes_test

import (
	"fmt"
	"log/slog"
	"regexp"
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

// Real Kueue admits the runs of a target with a queue_name: its LocalQueue's quota (one CPU)
// admits one run at a time. The first runs; the two behind it wait, each with its position in
// the LocalQueue and Kueue's own message about the quota; when the first ends, Kueue admits the
// one that was first in line (Hangar's order is Kueue's), and then the last, and each runs to
// its end on the kwok nodes.
func TestKwokKueueAdmitsInQueueOrder(t *testing.T) {
	t.Parallel()
	kc := kubetest.Config(t)
	dyn := kubetest.Kueue(t, kc)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	queue := "hangar-kq-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	kubetest.Queue(t, dyn, queue, "1", "4Gi")
	// The first run's pod runs long enough for the others' wait to be seen; theirs end at once.
	target := func(name, podTime string) compute.Target {
		return backendtest.Target(t, compute.Spec{Name: name, Type: compute.TypeKubernetes, Kubernetes: &compute.KubernetesSpec{
			Namespace: kubetest.Namespace, Kubeconfig: kc, DefaultImage: "localhost/hangar-busybox:latest",
			Supervisor:          compute.KubeSupervisor{Image: "localhost/hangar-supervisor:never-pulled"},
			QueueName:           queue,
			DefaultInstanceType: "cpu",
			InstanceTypes: map[string]compute.InstanceType{"cpu": {NodeSelector: map[string]string{"hangar.test/kind": "kwok"},
				Requests: compute.ResourceList{CPU: "1", Memory: "1Gi"}}},
			PodAnnotations: kwokPodTime(t, podTime),
		}})
	}
	b := &kube.Backend{ServerURL: func() string { return "http://127.0.0.1:1" },
		Targets: backendtest.Resolver(target("kueue-long", "20s"), target("kueue-short", "1s")),
		Log:     slog.New(slog.DiscardHandler)}
	k := &kwokCluster{t: t, cs: cs, b: b}
	submit := func(n int, targetName string) backend.Handle {
		id := fmt.Sprintf("%s-%d", queue, n)
		l := backend.Launch{RunID: id, Token: id + ".secret", Attempt: 1, Spec: job.Spec{Command: "python train.py", Compute: targetName},
			Target: compute.Target{Name: targetName, Type: compute.TypeKubernetes}}
		h, err := b.Submit(t.Context(), l)
		if err != nil {
			t.Fatalf("Submit %s: %v", id, err)
		}
		t.Cleanup(func() { k.deleteRun(id) })
		return h
	}

	first := submit(1, "kueue-long")
	k.until(first, "Kueue to admit the first run", func(st backend.Status, _ string, pending bool) bool {
		return st.Alive && !pending && strings.Contains(st.Reason, "running on Kubernetes node(s) kwok-node-")
	})
	second, third := submit(2, "kueue-short"), submit(3, "kueue-short")
	quota := "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor kwok"
	position := regexp.MustCompile(`^waiting for Kueue to admit the Job \(queue ` + queue + `, position ([12]) of 2 in the LocalQueue\): `)
	waitPos := func(h backend.Handle) (string, string) {
		var pos string
		k.until(h, "the position and Kueue's message", func(_ backend.Status, reason string, pending bool) bool {
			m := position.FindStringSubmatch(reason)
			if pending && m != nil && strings.Contains(reason, quota) {
				pos = m[1]
				return true
			}
			return false
		})
		reason, _, _ := b.Pending(t.Context(), h)
		return pos, reason
	}
	pos2, why2 := waitPos(second)
	pos3, why3 := waitPos(third)
	if pos2 == pos3 {
		t.Fatalf("both waiting runs at position %s:\n%s\n%s", pos2, why2, why3)
	}
	t.Logf("waiting: %q", why2)
	next, last := second, third
	if pos3 == "1" {
		next, last = third, second
	}

	// The first run ends (kwok completes its pod): Kueue admits the run first in line.
	k.until(first, "the first run's end", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil })
	k.until(next, "Kueue to admit the run first in line", func(_ backend.Status, _ string, pending bool) bool { return !pending })
	if reason, pending, err := b.Pending(t.Context(), last); err != nil || !pending || !strings.Contains(reason, "position 1 of 1") {
		t.Errorf("the last run, while the one before it was admitted: %q pending %v, %v; want position 1 of 1", reason, pending, err)
	}
	for _, h := range []backend.Handle{next, last} {
		st := k.until(h, "the run's end", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil })
		if st.Final.State != job.Failed || !strings.Contains(st.Final.Reason, "the Kubernetes Job completed") {
			t.Errorf("final %+v; want the end of a Job kwok completed", st.Final)
		}
	}
	wls, err := dyn.Resource(kubetest.Workloads).Namespace(kubetest.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	finished := 0
	for _, u := range wls.Items {
		if w, err := kube.WorkloadFrom(&u); err == nil && w.Queue == queue && !w.Waiting() {
			finished++
		}
	}
	if finished != 3 {
		t.Errorf("%d of the queue's Workloads admitted or finished, want 3", finished)
	}
}
