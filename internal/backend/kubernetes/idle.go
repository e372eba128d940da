package kubernetes

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An online deployment's Deployment outlives its replicas: at 0 replicas it waits for the next
// one (a scale from zero reuses it). One that stayed empty for idleAfter (its online deployment
// deleted, or scaled to zero that long) is deleted with its Secret and Service; the next replica
// makes them again. Its canceled runs' tombstones go with it, so the wait is long enough for
// Status to have reported them.

// idleFactor is idleAfter in units of the leftover wait (default 5 minutes).
const idleFactor = 5

// idleDeployments picks this workspace's Deployments to delete: none of its runs left, no pod,
// not being deleted, and so since at least after by emptySince (when each was first seen so).
// It returns them and emptySince for the next look (Deployments that are not, or no longer,
// empty are forgotten).
func idleDeployments(deps []appsv1.Deployment, workspace string, emptySince map[types.UID]time.Time, now time.Time, after time.Duration) ([]appsv1.Deployment, map[types.UID]time.Time) {
	next := map[types.UID]time.Time{}
	var due []appsv1.Deployment
	for _, d := range deps {
		if workspace == "" || d.Labels[LabelWorkspace] != workspace || d.Labels[LabelManagedBy] != ManagedBy || !empty(d) {
			continue
		}
		if waited(d.UID, emptySince, next, now, after) {
			due = append(due, d)
		}
	}
	return due, next
}

// empty reports whether a Deployment holds no run and has no pod (its controller has seen its
// latest spec).
func empty(d appsv1.Deployment) bool {
	set, err := readSet(&d)
	if err != nil || len(set.Runs) > 0 || d.DeletionTimestamp != nil {
		return false
	}
	zero := d.Spec.Replicas != nil && *d.Spec.Replicas == 0
	return zero && d.Status.ObservedGeneration >= d.Generation && d.Status.Replicas == 0
}

// releaseIdle deletes this namespace's idle Deployments of this workspace (idleDeployments),
// each only as it was seen: a replica added meanwhile keeps it.
func (c *client) releaseIdle(ns string, emptySince map[types.UID]time.Time, after time.Duration) map[types.UID]time.Time {
	if c.workspace == "" {
		return emptySince
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	deps := c.cs.AppsV1().Deployments(ns)
	l, err := deps.List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy + "," + LabelWorkspace + "=" + c.workspace})
	if err != nil {
		return emptySince
	}
	due, next := idleDeployments(l.Items, c.workspace, emptySince, time.Now(), after)
	for _, d := range due {
		// Foreground: the Deployment stays (being deleted) until its pods, Secret and Service
		// are gone, so a replica submitted meanwhile waits for it and makes all three anew.
		fg := metav1.DeletePropagationForeground
		err := deps.Delete(ctx, d.Name, metav1.DeleteOptions{PropagationPolicy: &fg,
			Preconditions: &metav1.Preconditions{UID: &d.UID, ResourceVersion: &d.ResourceVersion}})
		switch {
		case err == nil:
			c.log.Info("deleted an idle kubernetes Deployment", "namespace", ns, "deployment", d.Name)
		case !apierrors.IsConflict(err) && !apierrors.IsNotFound(err):
			// Said again only after another wait (credentials without delete, say).
			c.log.Warn("delete an idle kubernetes Deployment", "namespace", ns, "deployment", d.Name, "err", err)
			delete(next, d.UID)
		}
	}
	return next
}
