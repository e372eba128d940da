package kubernetes

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Kueue's Workload condition types (kueue.x-k8s.io/v1beta2) Hangar reads.
const (
	wlQuotaReserved      = "QuotaReserved"
	wlAdmitted           = "Admitted"
	wlFinished           = "Finished"
	wlEvicted            = "Evicted"
	wlDeactivationTarget = "DeactivationTarget"
)

// Workload is what Hangar keeps of a Kueue Workload, the object Kueue makes for each Job it
// manages and queues, admits or holds: the queue it waits in, its order there (priority, then
// queue time, then UID, as Kueue's own queues order them) and Kueue's conditions, whose
// messages say why it waits. The Workload's pod sets, which are most of it, are not kept.
type Workload struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Queue    string // spec.queueName: the LocalQueue
	Priority int32
	Active   bool      // false once Kueue (or someone) deactivated it
	JobUID   types.UID // its Job's, from the controller owner reference
	// ClusterQueue is status.admission.clusterQueue, set once Kueue reserved quota there.
	ClusterQueue string
	Conditions   []metav1.Condition
}

// DeepCopyObject makes Workload a runtime.Object, so a watch's cache can keep it.
func (w *Workload) DeepCopyObject() runtime.Object {
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Conditions = slices.Clone(w.Conditions)
	return &c
}

// WorkloadFrom reads a Workload object (kueue.x-k8s.io/v1beta2, as the API server gives it).
func WorkloadFrom(u *unstructured.Unstructured) (*Workload, error) {
	var raw struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     struct {
			QueueName string `json:"queueName"`
			Priority  *int32 `json:"priority"`
			Active    *bool  `json:"active"`
		} `json:"spec"`
		Status struct {
			Conditions []metav1.Condition `json:"conditions"`
			Admission  *struct {
				ClusterQueue string `json:"clusterQueue"`
			} `json:"admission"`
		} `json:"status"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &raw); err != nil {
		return nil, fmt.Errorf("read the Kueue Workload %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	w := &Workload{TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		Queue: raw.Spec.QueueName, Active: raw.Spec.Active == nil || *raw.Spec.Active, Conditions: raw.Status.Conditions}
	w.Name, w.Namespace, w.UID, w.ResourceVersion = raw.Metadata.Name, raw.Metadata.Namespace, raw.Metadata.UID, raw.Metadata.ResourceVersion
	w.CreationTimestamp, w.DeletionTimestamp = raw.Metadata.CreationTimestamp, raw.Metadata.DeletionTimestamp
	if raw.Spec.Priority != nil {
		w.Priority = *raw.Spec.Priority
	}
	if raw.Status.Admission != nil {
		w.ClusterQueue = raw.Status.Admission.ClusterQueue
	}
	for _, o := range raw.Metadata.OwnerReferences {
		if o.Kind == "Job" && strings.HasPrefix(o.APIVersion, "batch/") && o.Controller != nil && *o.Controller {
			w.JobUID = o.UID
			w.OwnerReferences = []metav1.OwnerReference{o}
		}
	}
	return w, nil
}

func (w *Workload) condition(t string) *metav1.Condition {
	return apimeta.FindStatusCondition(w.Conditions, t)
}

func (w *Workload) isTrue(t string) bool {
	c := w.condition(t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// Waiting says whether the Workload waits in its LocalQueue: active, no quota reserved, not
// finished (what Kueue's queues hold).
func (w *Workload) Waiting() bool {
	return w.Active && w.DeletionTimestamp == nil && !w.isTrue(wlQuotaReserved) && !w.isTrue(wlFinished)
}

// queueTime is the time Kueue orders the Workload by: when it was evicted to wait again (by
// an admission check or the pods-ready timeout), else when it was made.
func (w *Workload) queueTime() time.Time {
	if c := w.condition(wlEvicted); c != nil && c.Status == metav1.ConditionTrue &&
		(c.Reason == "AdmissionCheck" || c.Reason == "PodsReadyTimeout") {
		return c.LastTransitionTime.Time
	}
	return w.CreationTimestamp.Time
}

// compareWorkloads orders a queue as Kueue's ClusterQueues do (without fair sharing): higher
// priority first, then the earlier queue time, then the UID.
func compareWorkloads(a, b *Workload) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if ta, tb := a.queueTime(), b.queueTime(); !ta.Equal(tb) {
		return ta.Compare(tb)
	}
	return cmp.Compare(a.UID, b.UID)
}

// QueueOrder returns the UIDs of the Workloads waiting in the LocalQueue queue, first in line
// first: the order of the LocalQueue's Workloads within its ClusterQueue. Kueue admits in this
// order under StrictFIFO; under BestEffortFIFO (the default) it may admit a later one that
// fits while an earlier one does not.
func QueueOrder(queue string, all []*Workload) []types.UID {
	var waiting []*Workload
	for _, w := range all {
		if w.Queue == queue && w.Waiting() {
			waiting = append(waiting, w)
		}
	}
	slices.SortFunc(waiting, compareWorkloads)
	out := make([]types.UID, len(waiting))
	for i, w := range waiting {
		out[i] = w.UID
	}
	return out
}

// kueueQueue is the LocalQueue a Job waits in for Kueue's admission: its queue label while
// Kueue holds it suspended, else "".
func kueueQueue(j *batchv1.Job) string {
	if j == nil || j.Spec.Suspend == nil || !*j.Spec.Suspend {
		return ""
	}
	return j.Labels[LabelKueueQueue]
}

// KueueReason says why a Job held by Kueue waits, in Kueue's words where it has them: its
// position among the LocalQueue's waiting Workloads (pos of total, 1-based; 0 when unknown) and
// the message of its QuotaReserved condition ("couldn't assign flavors to pod set main:
// insufficient unused quota for cpu in flavor ..."). w is nil when Kueue has made no Workload
// for the Job yet; unread is why Workloads could not be read ("" when they could).
func KueueReason(queue string, w *Workload, pos, total int, unread string) string {
	base := "waiting for Kueue to admit the Job (queue " + queue
	switch {
	case unread != "":
		return base + "); its queue position is unknown: " + unread
	case w == nil:
		return base + "): Kueue has made no Workload for it yet"
	case !w.Active:
		return "Kueue deactivated the Job's Workload " + w.Name + " (queue " + queue + ")" +
			suffix(firstMessage(w, wlDeactivationTarget, wlEvicted, wlQuotaReserved))
	case w.isTrue(wlQuotaReserved):
		return "Kueue reserved quota for the Job in cluster queue " + w.ClusterQueue + " and has not admitted it yet (queue " +
			queue + ")" + suffix(falseMessage(w, wlAdmitted))
	case pos > 0:
		return fmt.Sprintf("%s, position %d of %d in the LocalQueue)%s", base, pos, total, suffix(falseMessage(w, wlQuotaReserved)))
	}
	return base + ")" + suffix(falseMessage(w, wlQuotaReserved))
}

// falseMessage is the message of the Workload's condition t when that is False.
func falseMessage(w *Workload, t string) string {
	if c := w.condition(t); c != nil && c.Status == metav1.ConditionFalse {
		return c.Message
	}
	return ""
}

// firstMessage is the first non-empty message of the Workload's conditions of the types given.
func firstMessage(w *Workload, kinds ...string) string {
	for _, t := range kinds {
		if c := w.condition(t); c != nil && c.Message != "" {
			return c.Message
		}
	}
	return ""
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}
