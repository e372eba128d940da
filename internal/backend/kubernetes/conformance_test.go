package kubernetes_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/compute"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// realNode is the instance type that puts a pod on the test cluster's real kubelet node (its
// taint keeps every other pod away), where its command really runs: in the image
// localhost/hangar-python (imported into containerd), in the node's network so that it reaches
// the test's workspace on 127.0.0.1, with the hangar binary mounted from this machine.
func realTarget(t *testing.T, kubeconfig string) compute.Target {
	return backendtest.Target(t, realSpec(t, kubeconfig))
}

func realSpec(t *testing.T, kubeconfig string) compute.Spec {
	return compute.Spec{Name: "kube", Type: compute.TypeKubernetes, Kubernetes: &compute.KubernetesSpec{
		Namespace: kubetest.Namespace, Kubeconfig: kubeconfig, DefaultImage: "localhost/hangar-python:latest",
		Supervisor: compute.KubeSupervisor{HostPath: backendtest.StaticBinary(t)}, HostNetwork: true,
		DefaultInstanceType: "real",
		InstanceTypes: map[string]compute.InstanceType{"real": {
			NodeSelector: map[string]string{"hangar.test/kind": "real"},
			Tolerations:  []compute.Toleration{{Key: "hangar.test/real", Operator: "Exists", Effect: "NoSchedule"}},
		}},
	}}
}

// The Kubernetes backend passes the conformance suite on the test cluster's real kubelet: one
// Indexed Job per run, the supervisor as its pod's entry, the command run by containerd and runc.
func TestConformance(t *testing.T) {
	kc := kubetest.Config(t)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	backendtest.Run(t, func(t *testing.T, ws *backendtest.Workspace) *backendtest.Engine {
		target := realTarget(t, kc)
		return &backendtest.Engine{
			Target: target,
			New: func() backend.Backend {
				return &kube.Backend{ServerURL: func() string { return ws.URL }, Targets: backendtest.Resolver(target),
					Log: slog.New(slog.DiscardHandler)}
			},
			// A second Job (or a pod started twice) would show here: count the run's pods that run.
			Supervisors: func(runID string) int { return len(livePods(t, cs, runID)) },
			Cleanup:     func(runID, _ string) { cleanupRun(cs, runID) },
		}
	})
}

func livePods(t testing.TB, cs kubetest.Interface, runID string) []corev1.Pod {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, err := cs.CoreV1().Pods(kubetest.Namespace).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + kube.RunLabel(runID)})
	if err != nil {
		t.Errorf("list pods: %v", err)
		return nil
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// cleanupRun deletes what a test's run left in the cluster.
func cleanupRun(cs kubetest.Interface, runID string) {
	bg := metav1.DeletePropagationBackground
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = cs.BatchV1().Jobs(kubetest.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg},
		metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + kube.RunLabel(runID)})
}

func logHasLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}
