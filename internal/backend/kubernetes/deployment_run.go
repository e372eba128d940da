package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/job"
)

// deployment reads the handle's Deployment; nil when it is gone or is another of the same name.
func (c *client) deployment(ctx context.Context, ns, name, uid string) (*appsv1.Deployment, error) {
	d, err := c.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the Deployment %s/%s from %s: %w", ns, name, c.host, err)
	case uid != "" && string(d.UID) != uid:
		return nil, nil
	}
	return d, nil
}

// replicaOf reads the handle's Deployment (nil: gone, or another of the same name), its set of
// runs, and the run's entry there (ok false: the run is not in the set).
func (c *client) replicaOf(ctx context.Context, hd handle) (d *appsv1.Deployment, set replicaSet, e replicaEntry, ok bool, err error) {
	d, err = c.deployment(ctx, hd.Namespace, hd.Deployment, hd.UID)
	if err != nil || d == nil {
		return nil, set, e, false, err
	}
	if set, err = readSet(d); err != nil {
		return nil, set, e, false, err
	}
	e, ok = set.Runs[hd.Run]
	return d, set, e, ok, nil
}

// pod reads a pod; nil when it is gone, or is another pod than uid ("" : any).
func (c *client) pod(ctx context.Context, ns, name, uid string) (*corev1.Pod, error) {
	p, err := c.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the pod %s/%s: %w", ns, name, err)
	case uid != "" && string(p.UID) != uid:
		return nil, nil
	}
	return p, nil
}

// judgeReplica is a replica run's status: waiting for a pod of its Deployment to claim it, then
// its claimed pod's, judged as a Job's pod is; lost once that pod is gone or took another run.
func (c *client) judgeReplica(ctx context.Context, hd handle) (Verdict, error) {
	d, set, e, ok, err := c.replicaOf(ctx, hd)
	if err != nil {
		return Verdict{}, err
	}
	if d == nil {
		return final(job.Failed, "the Kubernetes Deployment "+hd.Deployment+" of the replica is gone"), nil
	}
	if !ok {
		return c.judgeLeft(ctx, hd, d, set)
	}
	if e.Pod == "" {
		return Verdict{Status: backend.Status{Alive: true,
			Reason: fmt.Sprintf("waiting for a pod of Deployment %s to claim it (%s)", d.Name, replicaCount(d))}, Pending: true}, nil
	}
	p, err := c.pod(ctx, hd.Namespace, e.Pod, e.PodUID)
	if err != nil {
		return Verdict{}, err
	}
	if p == nil || p.Annotations[AnnotationRunID] != hd.Run {
		return final(job.Failed, fmt.Sprintf("lost: the pod %s of Deployment %s that ran the replica is gone or took another run", e.Pod, d.Name)), nil
	}
	return judgeReplicaPod(*p, d.Name), nil
}

// judgeLeft judges a run that left its Deployment's set: canceled by Hangar (alive while its
// pod stops), or ended otherwise.
func (c *client) judgeLeft(ctx context.Context, hd handle, d *appsv1.Deployment, set replicaSet) (Verdict, error) {
	ce, ok := set.Canceled[hd.Run]
	if !ok {
		return final(job.Failed, "the replica is no longer among the runs of Deployment "+d.Name+" (its pod is gone or took another run)"), nil
	}
	if ce.Pod != "" {
		p, err := c.pod(ctx, hd.Namespace, ce.Pod, "")
		if err != nil {
			return Verdict{}, err
		}
		if p != nil && p.Annotations[AnnotationRunID] == hd.Run && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return Verdict{Status: backend.Status{Alive: true, Reason: "canceled: the pod " + p.Name + " is stopping"}}, nil
		}
	}
	res := &job.Result{State: job.Canceled, Reason: "canceled: Hangar scaled the Kubernetes Deployment " + d.Name + " down"}
	if t, err := time.Parse(time.RFC3339, ce.At); err == nil {
		res.Time = t.UTC()
	}
	return Verdict{Status: backend.Status{Final: res}}, nil
}

// judgeReplicaPod judges a claimed pod as waiting (not scheduled, a container that cannot
// start) or running.
func judgeReplicaPod(p corev1.Pod, deployment string) Verdict {
	if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		return Verdict{Status: backend.Status{Alive: true, Reason: fmt.Sprintf("pod %s is not scheduled: %s", p.Name, firstNonEmpty(c.Message, c.Reason))}, Pending: true}
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && waitingReasons[w.Reason] {
			return Verdict{Status: backend.Status{Alive: true, Reason: fmt.Sprintf("pod %s: %s: %s", p.Name, w.Reason, w.Message)}, Pending: true}
		}
	}
	if p.DeletionTimestamp != nil {
		return Verdict{Status: backend.Status{Alive: true, Reason: "pod " + p.Name + " of Deployment " + deployment + " is being deleted"}}
	}
	return Verdict{Status: backend.Status{Alive: true, Reason: fmt.Sprintf("running on Kubernetes node %s (pod %s of Deployment %s)", p.Spec.NodeName, p.Name, deployment)}}
}

func final(state job.State, reason string) Verdict {
	return Verdict{Status: backend.Status{Final: &job.Result{State: state, Reason: reason, Time: time.Now().UTC()}}}
}

// cancelReplica stops the run's pod, then takes the run out of its Deployment's set and scales
// the Deployment down. The pod is deleted by Hangar (SIGTERM: the supervisor finds the cancel and
// reports it) rather than chosen by the ReplicaSet, and the scale-down waits until the
// ReplicaSet has made the pod that replaces it: a ReplicaSet acting on a view of the pods older
// than the deletion would remove another run's pod (seen in the e2e test), while the new pod,
// not ready and unclaimed (the run is being canceled), is the one a scale-down removes first.
// Cancels of one Deployment are serialised for that. A Deployment whose set is empty stays, at 0
// replicas: the online deployment's next replica reuses it.
func (b *Backend) cancelReplica(ctx context.Context, c *client, hd handle) error {
	d, _, e, ok, err := c.replicaOf(ctx, hd)
	if err != nil || !ok {
		return err
	}
	unlock := c.servingLock(hd.Namespace + "/" + hd.Deployment)
	defer unlock()
	if e.Pod != "" {
		before, err := c.podNames(ctx, hd.Namespace, d.Name)
		if err != nil {
			return err
		}
		if err := c.stopPod(ctx, hd.Namespace, e); err != nil {
			return fmt.Errorf("cancel replica run %s: %w", hd.Run, err)
		}
		c.awaitReplacement(ctx, hd.Namespace, d.Name, before)
	}
	deps := c.cs.AppsV1().Deployments(hd.Namespace)
	err = onConflict(func() error {
		d, set, e, ok, err := c.replicaOf(ctx, hd)
		if err != nil || !ok {
			return err
		}
		delete(set.Runs, hd.Run)
		set.Canceled[hd.Run] = canceledEntry{At: b.now().UTC().Format(time.RFC3339), Pod: e.Pod}
		set.write(d)
		_, err = deps.Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("cancel replica run %s of Deployment %s: %w", hd.Run, hd.Deployment, err)
	}
	b.Log.Info("canceled replica on kubernetes", "run", hd.Run, "deployment", hd.Deployment, "pod", e.Pod)
	return nil
}

// stopPod marks the run's pod the cheapest to remove and deletes it (that pod only: its UID).
func (c *client) stopPod(ctx context.Context, ns string, e replicaEntry) error {
	if err := c.markCanceled(ctx, ns, e); err != nil {
		return err
	}
	uid := types.UID(e.PodUID)
	err := c.cs.CoreV1().Pods(ns).Delete(ctx, e.Pod, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s: %w", e.Pod, err)
	}
	return nil
}

// markCanceled makes the run's pod the one its ReplicaSet removes first.
func (c *client) markCanceled(ctx context.Context, ns string, e replicaEntry) error {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": e.PodUID, "annotations": map[string]string{AnnotationDeletionCost: canceledCost}}})
	_, err := c.cs.CoreV1().Pods(ns).Patch(ctx, e.Pod, types.MergePatchType, data, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or another pod of that name
		return nil
	}
	if err != nil {
		return fmt.Errorf("mark pod %s to be removed first: %w", e.Pod, err)
	}
	return nil
}

// replacementWait bounds how long a cancel waits for the ReplicaSet to replace the stopped pod
// (it does not when it has pods to spare): then it scales down anyway. scaleDownReserve is what
// the wait leaves of the cancel's own deadline for the scale-down after it: a ReplicaSet slow to
// replace the pod (a loaded control plane) must not use up the call, or the Deployment keeps the
// replica and its new pod, and the cancel fails after the run has ended.
const (
	replacementWait  = 20 * time.Second
	scaleDownReserve = 5 * time.Second
)

// podNames are the names of the Deployment's pods now.
func (c *client) podNames(ctx context.Context, ns, deployment string) (map[string]bool, error) {
	l, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelServing + "=" + deployment})
	if err != nil {
		return nil, fmt.Errorf("list the pods of Deployment %s: %w", deployment, err)
	}
	out := map[string]bool{}
	for _, p := range l.Items {
		out[p.Name] = true
	}
	return out, nil
}

// awaitReplacement polls until the Deployment has a pod that is not among before (the
// ReplicaSet saw the deletion), for at most replacementWait and never into the last
// scaleDownReserve before ctx's deadline.
func (c *client) awaitReplacement(ctx context.Context, ns, deployment string, before map[string]bool) {
	ctx, cancel := context.WithTimeout(ctx, replacementBudget(ctx, time.Now()))
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		now, err := c.podNames(ctx, ns, deployment)
		if err == nil {
			for name := range now {
				if !before[name] {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// servingLock serialises the cancels of one Deployment (key: namespace/name).
func (c *client) servingLock(key string) func() {
	c.serving.mu.Lock()
	if c.serving.m == nil {
		c.serving.m = map[string]*sync.Mutex{}
	}
	m := c.serving.m[key]
	if m == nil {
		m = &sync.Mutex{}
		c.serving.m[key] = m
	}
	c.serving.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// replacementBudget is how long awaitReplacement may wait from now: replacementWait, less where
// ctx's deadline comes sooner than that plus scaleDownReserve (zero when it is closer than the
// reserve).
func replacementBudget(ctx context.Context, now time.Time) time.Duration {
	wait := replacementWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, dl.Sub(now)-scaleDownReserve)
	}
	return max(wait, 0)
}
