package kubernetes

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// workloadJSON is a Workload as Kueue 0.17 writes it for a Job it holds for want of quota
// (trimmed of its pod template), as the API server returns it.
const workloadJSON = `{
  "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
  "metadata": {"name": "job-hangar-r2-1-3f0b2", "namespace": "hangar-test", "uid": "wl-2",
    "creationTimestamp": "2026-11-24T06:00:02Z", "resourceVersion": "812",
    "labels": {"kueue.x-k8s.io/job-uid": "job-2"},
    "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "hangar-r2-1", "uid": "job-2",
      "controller": true, "blockOwnerDeletion": true}]},
  "spec": {"queueName": "team-a", "priority": 0, "active": true,
    "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "run", "image": "x"}]}}}]},
  "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
    "message": "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor kwok, 1 more needed",
    "lastTransitionTime": "2026-11-24T06:00:02Z"}]}
}`

func TestWorkloadFromKeepsWhatTheReasonNeeds(t *testing.T) {
	var u unstructured.Unstructured
	if err := json.Unmarshal([]byte(workloadJSON), &u.Object); err != nil {
		t.Fatal(err)
	}
	w, err := WorkloadFrom(&u)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "job-hangar-r2-1-3f0b2" || w.UID != "wl-2" || w.Queue != "team-a" || !w.Active || w.JobUID != "job-2" ||
		!w.CreationTimestamp.Equal(&metav1.Time{Time: t0.Add(2 * time.Second)}) || len(w.OwnerReferences) != 1 ||
		w.OwnerReferences[0].Name != "hangar-r2-1" || !w.Waiting() {
		t.Errorf("workload %+v", w)
	}
	got := KueueReason("team-a", w, 1, 2, "")
	want := "waiting for Kueue to admit the Job (queue team-a, position 1 of 2 in the LocalQueue): " +
		"couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor kwok, 1 more needed"
	if got != want {
		t.Errorf("reason\n got %q\nwant %q", got, want)
	}
}

func wl(uid string, created int, mods ...func(*Workload)) *Workload {
	w := &Workload{Queue: "team-a", Active: true}
	w.UID, w.Name = types.UID(uid), "wl-"+uid
	w.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(created) * time.Second))
	for _, m := range mods {
		m(w)
	}
	return w
}

func wlCond(typ string, status metav1.ConditionStatus, reason, msg string, at int) func(*Workload) {
	return func(w *Workload) {
		w.Conditions = append(w.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
			LastTransitionTime: metav1.NewTime(t0.Add(time.Duration(at) * time.Second))})
	}
}

// The queue is ordered as Kueue orders it: priority, then queue time (an eviction by an
// admission check puts a Workload back at the time of its eviction), then UID; Workloads with
// quota reserved, finished, deactivated or of another queue are not in line.
func TestQueueOrder(t *testing.T) {
	all := []*Workload{
		wl("e", 5),
		wl("a", 1, wlCond(wlQuotaReserved, metav1.ConditionTrue, "QuotaReserved", "", 1)), // admitted
		wl("c", 3),
		wl("b", 3),
		wl("hi", 9, func(w *Workload) { w.Priority = 100 }),
		wl("x", 0, func(w *Workload) { w.Queue = "team-b" }),
		wl("f", 0, wlCond(wlFinished, metav1.ConditionTrue, "JobFinished", "", 2)),
		wl("off", 0, func(w *Workload) { w.Active = false }),
		wl("ev", 0, wlCond(wlEvicted, metav1.ConditionTrue, "AdmissionCheck", "", 4)),
		wl("pr", 0, wlCond(wlEvicted, metav1.ConditionTrue, "Preempted", "", 8)), // keeps its creation time
	}
	got := QueueOrder("team-a", all)
	want := []types.UID{"hi", "pr", "b", "c", "ev", "e"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestKueueReason(t *testing.T) {
	quota := "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor kwok, 1 more needed"
	tests := []struct {
		name       string
		w          *Workload
		pos, total int
		unread     string
		want       string
	}{
		{"no workload yet", nil, 0, 0, "", "waiting for Kueue to admit the Job (queue team-a): Kueue has made no Workload for it yet"},
		{"workloads unreadable", nil, 0, 0, "workloads.kueue.x-k8s.io is forbidden",
			"waiting for Kueue to admit the Job (queue team-a); its queue position is unknown: workloads.kueue.x-k8s.io is forbidden"},
		{"waiting, Kueue's message", wl("b", 1, wlCond(wlQuotaReserved, metav1.ConditionFalse, "Pending", quota, 1)), 3, 5, "",
			"waiting for Kueue to admit the Job (queue team-a, position 3 of 5 in the LocalQueue): " + quota},
		{"waiting, not looked at yet", wl("b", 1), 1, 1, "", "waiting for Kueue to admit the Job (queue team-a, position 1 of 1 in the LocalQueue)"},
		{"the LocalQueue does not exist", wl("b", 1, wlCond(wlQuotaReserved, metav1.ConditionFalse, "Inadmissible",
			"LocalQueue team-a doesn't exist", 1)), 1, 1, "",
			"waiting for Kueue to admit the Job (queue team-a, position 1 of 1 in the LocalQueue): LocalQueue team-a doesn't exist"},
		{"quota reserved, admission checks pending", wl("b", 1, func(w *Workload) { w.ClusterQueue = "cq" },
			wlCond(wlQuotaReserved, metav1.ConditionTrue, "QuotaReserved", "Quota reserved in ClusterQueue cq", 2),
			wlCond(wlAdmitted, metav1.ConditionFalse, "NoChecks", "The workload has not all checks ready", 2)), 0, 0, "",
			"Kueue reserved quota for the Job in cluster queue cq and has not admitted it yet (queue team-a): The workload has not all checks ready"},
		{"deactivated", wl("b", 1, func(w *Workload) { w.Active = false },
			wlCond(wlEvicted, metav1.ConditionTrue, "Deactivated", "The workload is deactivated", 3)), 0, 0, "",
			"Kueue deactivated the Job's Workload wl-b (queue team-a): The workload is deactivated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KueueReason("team-a", tt.w, tt.pos, tt.total, tt.unread); got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Only a Job Kueue holds (suspended, with the queue label) waits for Kueue.
func TestKueueQueue(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		j    *batchv1.Job
		want string
	}{
		{"suspended with a queue", kjob(func(j *batchv1.Job) { j.Spec.Suspend = &yes; j.Labels[LabelKueueQueue] = "team-a" }), "team-a"},
		{"admitted", kjob(func(j *batchv1.Job) { j.Spec.Suspend = &no; j.Labels[LabelKueueQueue] = "team-a" }), ""},
		{"suspended, no queue", kjob(func(j *batchv1.Job) { j.Spec.Suspend = &yes }), ""},
		{"gone", nil, ""},
	}
	for _, tt := range tests {
		if got := kueueQueue(tt.j); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
