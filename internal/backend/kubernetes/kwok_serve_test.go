package kubernetes_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/backend"
	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// onHostNetwork makes the kwok target's pods share their node's network.
func onHostNetwork(k *kwokCluster) {
	targets := k.b.Targets
	k.b.Targets = func(ctx context.Context, name string) (*compute.Stored, error) {
		st, err := targets(ctx, name)
		if err != nil {
			return nil, err
		}
		c, kc := *st, *st.Spec.Kubernetes
		kc.HostNetwork = true
		c.Spec.Kubernetes = &kc
		return &c, nil
	}
}

// The replicas of an image that serves by its own entrypoint, on a target whose pods share the
// node's network, are one Deployment too, which the API server takes (a native sidecar that
// claims the run, a gate, the image as the main container restarted in place, its port a
// hostPort) and whose pods the scheduler keeps on distinct nodes: the test cluster has two kwok
// nodes, so a third replica's pod waits for a free port, in the scheduler's words. The image's
// log reads as empty while the image has not started (kwok never starts containers of its own
// accord).
func TestKwokServesByEntrypoint(t *testing.T) {
	k, ws := servingKwok(t)
	onHostNetwork(k)
	// A port of this run's own: an earlier run's pods, still stopping, may hold theirs.
	port := 20000 + int(time.Now().UnixNano()/int64(time.Millisecond)%10000)
	spec := job.Spec{Environment: job.Environment{Image: "localhost/hangar-busybox:latest"},
		EnvironmentVariables: map[string]string{"GREETING": "hi"},
		Serve: &job.Serve{Endpoint: "e", Deployment: "d", Entrypoint: true, Port: port, Probe: "/",
			ModelInput: "model", ModelMount: "/var/azureml-app/azureml-models/m/1"}}
	l1, h1 := k.submit(spec)
	k.submit(spec)
	name := kube.DeploymentName(ws, "e", "d")
	if jobs, _, _, _ := k.objects(l1.RunID); len(jobs) != 0 {
		t.Fatalf("a replica run made %d Jobs", len(jobs))
	}
	pods := livePodsOf(t, k, name, 2)
	if pods[0].Spec.NodeName == pods[1].Spec.NodeName {
		t.Errorf("two replicas of host port %d on node %s", port, pods[0].Spec.NodeName)
	}
	p := pods[0].Spec
	var init []string
	for _, c := range p.InitContainers {
		init = append(init, c.Name)
	}
	if !slices.Equal(init, []string{"hangar", "run", "gate"}) || len(p.Containers) != 1 || p.Containers[0].Name != "serve" ||
		p.Containers[0].Command != nil || p.InitContainers[1].RestartPolicy == nil || p.RestartPolicy != corev1.RestartPolicyAlways ||
		!p.HostNetwork || len(p.Containers[0].Ports) != 1 || p.Containers[0].Ports[0].HostPort != int32(port) {
		t.Errorf("the pod as the API server stored it: init %v, containers %+v, host network %v", init, p.Containers, p.HostNetwork)
	}
	rc, err := k.b.ContainerLog(t.Context(), h1, time.Time{}, 0)
	if err != nil {
		t.Fatalf("ContainerLog before a pod claimed the run: %v", err)
	}
	if b, _ := io.ReadAll(rc); len(b) != 0 {
		t.Errorf("log before a pod claimed the run: %q", b)
	}
	rc.Close()
	if _, err := k.b.ClaimReplica(t.Context(), claimToken(t, k, name), pods[0].Name, neverEnded); err != nil {
		t.Fatal(err)
	}
	st := k.until(h1, "run 1 to be claimed", func(st backend.Status, _ string, pending bool) bool { return st.Alive && !pending })
	if !strings.Contains(st.Reason, "of Deployment "+name) {
		t.Errorf("run 1: %q", st.Reason)
	}

	k.submit(spec)
	testwait.Within(t, 3*time.Minute, "the third replica's pod to wait for a node with its port free", func() bool {
		l, err := k.cs.CoreV1().Pods(kubetest.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: kube.LabelServing + "=" + name})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range l.Items {
			for _, c := range q.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "free ports") {
					return true
				}
			}
		}
		return false
	})
}
