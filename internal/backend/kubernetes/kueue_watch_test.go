package kubernetes

import (
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// workloadObj is a Workload of queue team-a for the Job of uid jobUID, made at t0 + created s.
func workloadObj(name, jobUID string, created int, conds ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": "wl-" + name,
			"creationTimestamp": t0.Add(time.Duration(created) * time.Second).Format(time.RFC3339),
			"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "job-" + name,
				"uid": jobUID, "controller": true}}},
		"spec": map[string]any{"queueName": "team-a", "active": true},
	}}
	if len(conds) > 0 {
		c := make([]any, len(conds))
		for i := range conds {
			c[i] = conds[i]
		}
		u.Object["status"] = map[string]any{"conditions": c}
	}
	return u
}

var noQuota = map[string]any{"type": "QuotaReserved", "status": "False", "reason": "Pending",
	"message":            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor kwok, 1 more needed",
	"lastTransitionTime": t0.Format(time.RFC3339)}

// A Job Kueue holds is explained from the namespace's Workload watch: its position among the
// LocalQueue's waiting Workloads and Kueue's message. When Kueue admits the Workload ahead of it,
// the run is told (backend.Notifier) and its position moves up; another workspace's run is
// never told.
func TestKueueReasonFromTheWorkloadWatch(t *testing.T) {
	yes := true
	job := func(name, uid, runID, ws string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid),
			Labels:      map[string]string{LabelManagedBy: ManagedBy, LabelWorkspace: ws, LabelKueueQueue: "team-a"},
			Annotations: map[string]string{AnnotationRunID: runID}}, Spec: batchv1.JobSpec{Suspend: &yes}}
	}
	mine, theirs := job("job-b", "job-b", "run-b", "ws"), job("job-a", "job-a", "run-a", "other")
	cs := k8sfake.NewClientset(mine, theirs)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{workloadsGVR: "WorkloadList"},
		workloadObj("a", "job-a", 1, noQuota), workloadObj("b", "job-b", 2, noQuota), workloadObj("c", "job-c", 3, noQuota))
	var mu sync.Mutex
	told := map[string]int{}
	c := &client{cs: cs, dyn: dyn, workspace: "ws", tell: func(id string) { mu.Lock(); told[id]++; mu.Unlock() }}
	t.Cleanup(c.stopAll)

	want := "waiting for Kueue to admit the Job (queue team-a, position 2 of 3 in the LocalQueue): " +
		"couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor kwok, 1 more needed"
	if got := c.kueueReason(t.Context(), mine, "team-a"); got != want {
		t.Fatalf("reason\n got %q\nwant %q", got, want)
	}

	admitted := workloadObj("a", "job-a", 1, map[string]any{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
		"message": "Quota reserved in ClusterQueue cq", "lastTransitionTime": t0.Format(time.RFC3339)})
	if _, err := dyn.Resource(workloadsGVR).Namespace("ns").Update(t.Context(), admitted, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := workloadObj("b", "job-b", 2, noQuota)
	unstructured.SetNestedField(b.Object, int64(5), "spec", "priority") // Kueue's change of this run's Workload
	if _, err := dyn.Resource(workloadsGVR).Namespace("ns").Update(t.Context(), b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := c.kueueReason(t.Context(), mine, "team-a")
		mu.Lock()
		n, other := told["run-b"], told["run-a"]
		mu.Unlock()
		if strings.Contains(got, "position 1 of 2 in the LocalQueue") && n > 0 {
			if other != 0 {
				t.Errorf("another workspace's run was told %d times", other)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the Workload ahead was admitted: %q, run-b told %d times", got, n)
		}
	}
}

// Where Kueue's Workloads cannot be read (Kueue is not installed), the reason says so, and no
// watch is started that would retry forever.
func TestKueueReasonWithoutKueue(t *testing.T) {
	yes := true
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "u"}, Spec: batchv1.JobSpec{Suspend: &yes}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{workloadsGVR: "WorkloadList"})
	lists := 0
	dyn.PrependReactor("list", "workloads", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists++
		return true, nil, apierrors.NewNotFound(workloadsGVR.GroupResource(), "")
	})
	c := &client{cs: k8sfake.NewClientset(), dyn: dyn}
	t.Cleanup(c.stopAll)
	want := "waiting for Kueue to admit the Job (queue team-a); its queue position is unknown: " +
		"the cluster does not serve Kueue's Workloads (workloads.kueue.x-k8s.io v1beta2): is Kueue 0.15 or later installed?"
	for range 3 {
		if got := c.kueueReason(t.Context(), j, "team-a"); got != want {
			t.Errorf("reason\n got %q\nwant %q", got, want)
		}
	}
	if lists != 1 {
		t.Errorf("Workloads listed %d times for three reasons, want once (again only after %s)", lists, kueueRecheck)
	}
	if c.watches.m["ns"] != nil {
		t.Error("a Job watch was started for a namespace whose Workloads cannot be read")
	}
}
