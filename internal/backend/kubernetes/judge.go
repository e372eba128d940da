package kubernetes

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/job"
)

// Verdict is what a run's Job and pods say about the run: Status's answer, whether it waits
// for Kubernetes (Pending) and why, and whether the Job is a cancel's tombstone Hangar may now
// let go of (Release).
type Verdict struct {
	Status  backend.Status
	Pending bool
	// Release is set when the Job was deleted to cancel the run, its pods are gone and the run's
	// end is known: the finalizer that kept the Job for this answer can be removed.
	Release bool
}

// waitingReasons are container waiting reasons that mean the pod cannot start as it is,
// reported in Kubernetes' words.
var waitingReasons = map[string]bool{
	"ImagePullBackOff": true, "ErrImagePull": true, "ErrImageNeverPull": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// Judge reads a run's Job (nil when it is gone) and its pods. now stamps results Kubernetes
// gives no time for.
func Judge(j *batchv1.Job, pods []corev1.Pod, now time.Time) Verdict {
	if j == nil {
		return Verdict{Status: backend.Status{Reason: "the Kubernetes Job is gone (deleted, or removed after it finished)"}}
	}
	sort.SliceStable(pods, func(a, b int) bool { return index(pods[a]) < index(pods[b]) })
	live := livePods(pods)
	leader := leaderResult(pods)
	if j.DeletionTimestamp != nil {
		return deleted(j, live, leader)
	}
	if c := condition(j, batchv1.JobFailed); c != nil && len(live) == 0 {
		if leader != nil {
			return Verdict{Status: backend.Status{Final: leader}}
		}
		reason := "Kubernetes failed the Job: " + c.Reason
		if c.Message != "" {
			reason += ": " + c.Message
		}
		if why := podFailure(pods); why != "" {
			reason += "; " + why
		}
		return Verdict{Status: backend.Status{Final: &job.Result{State: job.Failed, Reason: reason, Time: c.LastTransitionTime.UTC()}}}
	}
	if leader != nil && len(live) == 0 {
		return Verdict{Status: backend.Status{Final: leader}}
	}
	if c := condition(j, batchv1.JobComplete); c != nil && len(live) == 0 {
		return Verdict{Status: backend.Status{Final: &job.Result{State: job.Failed, Time: c.LastTransitionTime.UTC(),
			Reason: "the supervisor ended without a result (the Kubernetes Job completed, its pod left no termination message)"}}}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		reason := "the Kubernetes Job is suspended"
		if q := j.Labels[LabelKueueQueue]; q != "" {
			reason = "waiting for Kueue to admit the Job (queue " + q + ")"
		}
		return Verdict{Status: backend.Status{Alive: true, Reason: reason}, Pending: true}
	}
	if reason, pending := waiting(j, pods, live); pending {
		return Verdict{Status: backend.Status{Alive: true, Reason: reason}, Pending: true}
	}
	return Verdict{Status: backend.Status{Alive: true, Reason: running(live)}}
}

// deleted judges a Job being deleted: alive while its pods stop; then canceled when Hangar
// deleted it, failed when someone else did.
func deleted(j *batchv1.Job, live []corev1.Pod, leader *job.Result) Verdict {
	canceled := j.Annotations[AnnotationCanceled] != ""
	if len(live) > 0 {
		return Verdict{Status: backend.Status{Alive: true, Reason: fmt.Sprintf("the Kubernetes Job is being deleted: %d pod(s) still stopping", len(live))}}
	}
	var res *job.Result
	switch {
	case leader != nil:
		res = leader
	case canceled:
		res = &job.Result{State: job.Canceled, Reason: "canceled: Hangar deleted the Kubernetes Job", Time: j.DeletionTimestamp.UTC()}
		if t, err := time.Parse(time.RFC3339, j.Annotations[AnnotationCanceled]); err == nil {
			res.Time = t.UTC()
		}
	default:
		res = &job.Result{State: job.Failed, Reason: "the Kubernetes Job was deleted (not by Hangar)", Time: j.DeletionTimestamp.UTC()}
	}
	return Verdict{Status: backend.Status{Final: res}, Release: hasFinalizer(j)}
}

// waiting says whether the run still waits for Kubernetes before its supervisors start, and why:
// no pods yet, a pod not scheduled (the scheduler's message), a container that cannot start.
func waiting(j *batchv1.Job, pods, live []corev1.Pod) (string, bool) {
	want := 1
	if j.Spec.Parallelism != nil {
		want = int(*j.Spec.Parallelism)
	}
	for _, p := range live {
		if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("pod %s is not scheduled: %s", p.Name, firstNonEmpty(c.Message, c.Reason)), true
		}
		for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if w := cs.State.Waiting; w != nil && waitingReasons[w.Reason] {
				return fmt.Sprintf("pod %s: %s: %s", p.Name, w.Reason, w.Message), true
			}
		}
	}
	if len(live) < want && len(pods) == 0 {
		return "waiting for Kubernetes to create the Job's pods", true
	}
	for _, p := range live {
		// A pod stays Pending while its init containers run; a supervisor sidecar that runs
		// means the run is under way (fetching the model before the image starts).
		if p.Status.Phase == corev1.PodPending && !sidecarRunning(p) {
			where := ""
			if p.Spec.NodeName != "" {
				where = " on node " + p.Spec.NodeName
			}
			return fmt.Sprintf("pod %s is starting%s", p.Name, where), true
		}
	}
	return "", false
}

// sidecarRunning says whether the pod's supervisor runs as its sidecar.
func sidecarRunning(p corev1.Pod) bool {
	for _, cs := range p.Status.InitContainerStatuses {
		if cs.Name == containerName && cs.State.Running != nil {
			return true
		}
	}
	return false
}

func running(live []corev1.Pod) string {
	var nodes []string
	for _, p := range live {
		nodes = append(nodes, p.Spec.NodeName)
	}
	return "running on Kubernetes node(s) " + strings.Join(nodes, ", ")
}

// livePods are the pods that have not ended (a pod being deleted still runs until it stops).
func livePods(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// leaderResult is the result node 0's supervisor wrote as its termination message.
func leaderResult(pods []corev1.Pod) *job.Result {
	for _, p := range pods {
		if index(p) != 0 {
			continue
		}
		// The supervisor is the pod's container, or its sidecar (an init container) when the
		// image serves by its own entrypoint (sidecar.go).
		for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			if t := cs.State.Terminated; cs.Name == containerName && t != nil && t.Message != "" {
				if r, ok := job.ParseResult([]byte(t.Message)); ok {
					return r
				}
			}
		}
	}
	return nil
}

// podFailure says how the first failed pod's container ended (OOMKilled, Error, its exit code).
func podFailure(pods []corev1.Pod) string {
	for _, p := range pods {
		if p.Status.Phase != corev1.PodFailed {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil {
				return fmt.Sprintf("pod %s: container %s %s (exit code %d)", p.Name, cs.Name, firstNonEmpty(t.Reason, "ended"), t.ExitCode)
			}
		}
		return fmt.Sprintf("pod %s failed: %s", p.Name, firstNonEmpty(p.Status.Message, p.Status.Reason))
	}
	return ""
}

func index(p corev1.Pod) int {
	if i, err := strconv.Atoi(p.Labels[LabelCompletionIndex]); err == nil {
		return i
	}
	if i, err := strconv.Atoi(p.Annotations[LabelCompletionIndex]); err == nil {
		return i
	}
	return 0
}

func condition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func podCondition(p corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i, c := range p.Status.Conditions {
		if c.Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func hasFinalizer(j *batchv1.Job) bool {
	for _, f := range j.Finalizers {
		if f == FinalizerResult {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
