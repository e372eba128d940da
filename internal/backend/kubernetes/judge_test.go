package kubernetes

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/job"
)

var t0 = time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)

func kjob(mods ...func(*batchv1.Job)) *batchv1.Job {
	one := int32(1)
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "hangar-r", Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec: batchv1.JobSpec{Parallelism: &one}}
	for _, m := range mods {
		m(j)
	}
	return j
}

func jobCond(t batchv1.JobConditionType, reason, msg string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue,
			Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(t0)})
	}
}

func pod(idx string, phase corev1.PodPhase, mods ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hangar-r-" + idx, Labels: map[string]string{LabelCompletionIndex: idx}},
		Spec: corev1.PodSpec{NodeName: "node-a"}, Status: corev1.PodStatus{Phase: phase}}
	for _, m := range mods {
		m(&p)
	}
	return p
}

func terminated(code int32, reason, msg string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: containerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: msg}}}}
	}
}

func TestJudge(t *testing.T) {
	result := `{"state":"Failed","exit_code":3,"reason":"the command exited with code 3","time":"2026-11-24T05:59:00Z"}`
	deleting := func(j *batchv1.Job) {
		j.DeletionTimestamp = &metav1.Time{Time: t0}
		j.Finalizers = []string{FinalizerResult}
	}
	canceled := func(j *batchv1.Job) { j.Annotations[AnnotationCanceled] = "2026-11-24T05:58:00Z" }
	for _, tc := range []struct {
		name                  string
		job                   *batchv1.Job
		pods                  []corev1.Pod
		alive, pending, final bool
		state                 job.State
		reason                string
		release               bool
	}{
		{name: "gone", job: nil, reason: "the Kubernetes Job is gone"},
		{name: "no pods yet", job: kjob(), alive: true, pending: true, reason: "waiting for Kubernetes to create the Job's pods"},
		{name: "unschedulable: the scheduler's words", job: kjob(), pending: true, alive: true,
			pods: []corev1.Pod{pod("0", corev1.PodPending, func(p *corev1.Pod) {
				p.Spec.NodeName = ""
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
					Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}
			})},
			reason: "pod hangar-r-0 is not scheduled: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."},
		{name: "image pull back-off", job: kjob(), pending: true, alive: true,
			pods: []corev1.Pod{pod("0", corev1.PodPending, func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: containerName, State: corev1.ContainerState{
					Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope:1"`}}}}
			})},
			reason: `pod hangar-r-0: ImagePullBackOff: Back-off pulling image "nope:1"`},
		{name: "suspended by Kueue", job: kjob(func(j *batchv1.Job) { j.Spec.Suspend = new(true); j.Labels[LabelKueueQueue] = "team-a" }),
			alive: true, pending: true, reason: "waiting for Kueue to admit the Job (queue team-a)"},
		{name: "running", job: kjob(), pods: []corev1.Pod{pod("0", corev1.PodRunning)}, alive: true, reason: "running on Kubernetes node(s) node-a"},
		{name: "ended: the supervisor's result", job: kjob(jobCond(batchv1.JobFailed, "PodFailurePolicy", "Container run exited with 1")),
			pods: []corev1.Pod{pod("0", corev1.PodFailed, terminated(1, "Error", result))}, final: true, state: job.Failed, reason: "the command exited with code 3"},
		{name: "failed without a result: Kubernetes' reason", job: kjob(jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")),
			pods: []corev1.Pod{pod("0", corev1.PodFailed, terminated(137, "OOMKilled", ""))}, final: true, state: job.Failed,
			reason: "Kubernetes failed the Job: BackoffLimitExceeded: Job has reached the specified backoff limit; pod hangar-r-0: container run OOMKilled (exit code 137)"},
		{name: "complete without a result", job: kjob(jobCond(batchv1.JobComplete, "", "")), pods: []corev1.Pod{pod("0", corev1.PodSucceeded)},
			final: true, state: job.Failed, reason: "the supervisor ended without a result"},
		{name: "worker still runs after the leader ended", job: kjob(),
			pods: []corev1.Pod{pod("1", corev1.PodRunning), pod("0", corev1.PodSucceeded, terminated(0, "Completed", result))}, alive: true},
		// An image that serves by its own entrypoint (sidecar.go): the supervisor is an init
		// container, the image the main one.
		{name: "sidecar: fetching the model before the image starts", job: kjob(),
			pods: []corev1.Pod{pod("0", corev1.PodPending, sidecar(corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}))},
			alive: true, reason: "running on Kubernetes node(s) node-a"},
		{name: "sidecar: the image's pull fails", job: kjob(), pending: true, alive: true,
			pods: []corev1.Pod{pod("0", corev1.PodPending, sidecar(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}},
				corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}))},
			reason: "pod hangar-r-0: ErrImagePull: not found"},
		{name: "sidecar: the image ended, the supervisor's result", job: kjob(jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{pod("0", corev1.PodFailed, sidecar(
				corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: sidecarResult}},
				corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 4, Reason: "Error"}}))},
			final: true, state: job.Failed, reason: "the image's container ended"},
		{name: "sidecar: both killed, no result: the image's exit", job: kjob(jobCond(batchv1.JobFailed, "BackoffLimitExceeded", "")),
			pods: []corev1.Pod{pod("0", corev1.PodFailed, sidecar(
				corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}},
				corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}))},
			final: true, state: job.Failed, reason: "pod hangar-r-0: container serve OOMKilled (exit code 137)"},
		{name: "canceled, pods stopping", job: kjob(deleting, canceled), pods: []corev1.Pod{pod("0", corev1.PodRunning)}, alive: true, reason: "being deleted"},
		{name: "canceled, pods gone", job: kjob(deleting, canceled), final: true, state: job.Canceled, reason: "canceled: Hangar deleted the Kubernetes Job", release: true},
		{name: "deleted by someone else", job: kjob(func(j *batchv1.Job) { j.DeletionTimestamp = &metav1.Time{Time: t0} }), final: true, state: job.Failed,
			reason: "the Kubernetes Job was deleted (not by Hangar)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.job, tc.pods, t0)
			st := v.Status
			if st.Alive != tc.alive || v.Pending != tc.pending || (st.Final != nil) != tc.final || v.Release != tc.release {
				t.Fatalf("verdict %+v (final %+v), want alive %v pending %v final %v release %v", v, st.Final, tc.alive, tc.pending, tc.final, tc.release)
			}
			reason := st.Reason
			if st.Final != nil {
				reason = st.Final.Reason
				if st.Final.State != tc.state || st.Final.Time.IsZero() {
					t.Errorf("final %+v, want %s with a time", st.Final, tc.state)
				}
			}
			if !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q, want it to hold %q", reason, tc.reason)
			}
		})
	}
}

const sidecarResult = `{"state":"Failed","reason":"the image's container ended (Kubernetes stops the supervisor beside it then)","time":"2026-11-24T05:59:00Z"}`

// sidecar gives a pod the statuses of a supervisor sidecar and the image's main container.
func sidecar(sup, serve corev1.ContainerState) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: containerName, State: sup}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: serveContainer, State: serve}}
	}
}
