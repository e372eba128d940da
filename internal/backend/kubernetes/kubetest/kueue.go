package kubetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hangar-ml/hangar/internal/backend/backendtest"
)

// Kueue's resources in the test cluster (kueue.x-k8s.io/v1beta2).
var (
	ClusterQueues = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	LocalQueues   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	Workloads     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
)

// Kueue returns a dynamic client of the test cluster once Kueue runs there
// (scripts/setup/kubernetes.sh starts Kueue's manager when kueue-build.sh has built it): its
// LocalQueue team-a in Namespace is active. It skips the test when it is not; with CI set it
// fails instead.
func Kueue(t testing.TB, kubeconfig string) dynamic.Interface {
	t.Helper()
	dyn, err := Dynamic(kubeconfig)
	if err == nil {
		var lq *unstructured.Unstructured
		lq, err = dyn.Resource(LocalQueues).Namespace(Namespace).Get(t.Context(), "team-a", metav1.GetOptions{})
		if err == nil && !Active(lq) {
			err = fmt.Errorf("LocalQueue team-a is not active: %v", lq.Object["status"])
		}
	}
	if err == nil {
		return dyn
	}
	backendtest.Unavailable(t, fmt.Sprintf("this test needs Kueue in the Kubernetes test cluster (bash scripts/setup/kubernetes.sh with Kueue built: "+
		"scripts/setup/kueue-build.sh or HANGAR_K8S_BUILD=1): %v", err))
	return nil
}

// Dynamic is a dynamic API client from a kubeconfig file.
func Dynamic(path string) (dynamic.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 20 * time.Second
	return dynamic.NewForConfig(cfg)
}

// Active says whether a Kueue queue's Active condition is True.
func Active(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Active" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// Queue makes a ClusterQueue and a LocalQueue of the same name in Namespace, with quota on the
// kwok nodes' flavor (kwok), waits until Kueue made them active, and removes them when the test
// ends: a test's queue of its own is not shared with other tests or other runs of it.
func Queue(t testing.TB, dyn dynamic.Interface, name, cpu, memory string) {
	t.Helper()
	cq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"namespaceSelector": map[string]any{}, "queueingStrategy": "BestEffortFIFO",
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu", "memory"},
				"flavors": []any{map[string]any{"name": "kwok", "resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": cpu},
					map[string]any{"name": "memory", "nominalQuota": memory},
				}}},
			}},
		},
	}}
	lq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
		"metadata": map[string]any{"name": name, "namespace": Namespace},
		"spec":     map[string]any{"clusterQueue": name},
	}}
	ctx := t.Context()
	if _, err := dyn.Resource(ClusterQueues).Create(ctx, cq, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterQueue %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = dyn.Resource(LocalQueues).Namespace(Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		_ = dyn.Resource(ClusterQueues).Delete(ctx, name, metav1.DeleteOptions{})
	})
	if _, err := dyn.Resource(LocalQueues).Namespace(Namespace).Create(ctx, lq, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create LocalQueue %s: %v", name, err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		got, err := dyn.Resource(LocalQueues).Namespace(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && Active(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Kueue did not make LocalQueue %s active: %v %v", name, err, got)
		}
	}
}
