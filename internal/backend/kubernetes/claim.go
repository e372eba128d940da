package kubernetes

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// ErrClaimDenied is ClaimReplica's answer, wrapped, to a claim its token or pod does not allow:
// an invalid token, a Deployment that is gone, a pod that is not one of its own.
var ErrClaimDenied error = &ClaimError{Denied: true, msg: "replica claim refused"}

// ErrNothingToClaim is ClaimReplica's answer, wrapped, when the Deployment holds no run the pod
// may take now (all are claimed, or none is of its template): the pod asks again later.
var ErrNothingToClaim error = &ClaimError{msg: "no replica run to claim"}

// ClaimError is the kind of a refused claim; the server maps it to a status code through its
// ClaimDenied method (401 when denied, else 409: ask again later).
type ClaimError struct {
	Denied bool
	msg    string
}

func (e *ClaimError) Error() string { return e.msg }

// ClaimDenied says whether the claim may never succeed (the token or the pod is wrong).
func (e *ClaimError) ClaimDenied() bool { return e.Denied }

// ClaimReplica binds the pod named pod, of the Deployment the claim token was minted for, to one
// of that Deployment's submitted, unclaimed runs that has not ended, and returns that run's
// supervisor config (without its run token, which the server mints). A pod that claimed a run
// still going gets it again (its container restarted); one whose run ended takes another.
// The binding is written to the Deployment under its resourceVersion first, so two pods never
// take one run; then the pod is annotated with the run (for Status, the watch and people).
//
// ended says whether a run has ended (or is unknown to the server): such a run is never handed
// out, and leaves the set.
func (b *Backend) ClaimReplica(ctx context.Context, token, pod string, ended func(ctx context.Context, runID string) (bool, error)) (api.SupervisorConfig, error) {
	scope, ok := tokens.Claim{Key: b.ClaimKey}.Verify(token)
	if !ok || len(b.ClaimKey) == 0 {
		return api.SupervisorConfig{}, fmt.Errorf("%w: not a valid replica claim token", ErrClaimDenied)
	}
	c, _, err := b.target(ctx, scope.Target)
	if err != nil {
		return api.SupervisorConfig{}, err
	}
	var runID string
	var p *corev1.Pod
	err = onConflict(func() error {
		runID, p, err = c.claim(ctx, scope, pod, ended)
		return err
	})
	if err != nil {
		return api.SupervisorConfig{}, err
	}
	if err := c.annotateClaim(ctx, p, runID); err != nil {
		return api.SupervisorConfig{}, err
	}
	c.watch(scope.Namespace)
	b.tell(runID)
	b.Log.Info("replica claimed", "run", runID, "pod", pod, "deployment", scope.Deployment)
	return c.claimConfig(ctx, scope, runID)
}

// claim is one try of ClaimReplica's binding; a conflict means the Deployment changed under it.
func (c *client) claim(ctx context.Context, scope tokens.ClaimScope, pod string, ended func(context.Context, string) (bool, error)) (string, *corev1.Pod, error) {
	d, err := c.deployment(ctx, scope.Namespace, scope.Deployment, scope.UID)
	if err != nil {
		return "", nil, err
	}
	if d == nil {
		return "", nil, fmt.Errorf("%w: the Deployment %s of this claim token is gone", ErrClaimDenied, scope.Deployment)
	}
	p, err := c.pod(ctx, scope.Namespace, pod, "")
	if err != nil {
		return "", nil, err
	}
	if p == nil || p.Labels[LabelServing] != d.Name || p.DeletionTimestamp != nil {
		return "", nil, fmt.Errorf("%w: %q is not a live pod of Deployment %s", ErrClaimDenied, pod, d.Name)
	}
	set, err := readSet(d)
	if err != nil {
		return "", nil, err
	}
	before := len(set.Runs)
	if err := c.pruneGone(ctx, d.Namespace, &set); err != nil {
		return "", nil, err
	}
	changed, err := settle(ctx, &set, p, ended)
	changed = changed || len(set.Runs) != before
	if err != nil {
		return "", nil, err
	}
	if id, ok := heldBy(set, p); ok { // this pod's run, still going
		return id, p, c.saveSet(ctx, d, set, changed)
	}
	id, ok := nextUnclaimed(set, p.Annotations[AnnotationTemplate])
	if !ok {
		if err := c.saveSet(ctx, d, set, changed); err != nil {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("%w: the %d run(s) of Deployment %s are claimed", ErrNothingToClaim, len(set.Runs), d.Name)
	}
	e := set.Runs[id]
	e.Pod, e.PodUID = p.Name, string(p.UID)
	set.Runs[id] = e
	return id, p, c.saveSet(ctx, d, set, true)
}

// settle drops from set the runs that ended: the pod's own (it asks for another), and unclaimed
// ones (never handed out). It says whether it dropped any.
func settle(ctx context.Context, set *replicaSet, p *corev1.Pod, ended func(context.Context, string) (bool, error)) (bool, error) {
	changed := false
	for _, id := range slices.Sorted(maps.Keys(set.Runs)) {
		e := set.Runs[id]
		mine := e.Pod == p.Name && e.PodUID == string(p.UID)
		if !mine && e.Pod != "" {
			continue
		}
		done, err := ended(ctx, id)
		if err != nil {
			return false, fmt.Errorf("check replica run %s: %w", id, err)
		}
		if done {
			delete(set.Runs, id)
			changed = true
		}
	}
	return changed, nil
}

func heldBy(set replicaSet, p *corev1.Pod) (string, bool) {
	for id, e := range set.Runs {
		if e.Pod == p.Name && e.PodUID == string(p.UID) {
			return id, true
		}
	}
	return "", false
}

// nextUnclaimed is the earliest submitted unclaimed run of the pod's template.
func nextUnclaimed(set replicaSet, template string) (string, bool) {
	best, found := "", false
	for id, e := range set.Runs {
		if e.Pod != "" || e.Template != template {
			continue
		}
		if !found || cmp.Or(cmp.Compare(e.Seq, set.Runs[best].Seq), cmp.Compare(id, best)) < 0 {
			best, found = id, true
		}
	}
	return best, found
}

// saveSet writes a claim's change of the set, leaving the Deployment's replicas as they are: a
// claim that drops ended runs must not scale down, or the ReplicaSet, acting on a view of the
// pods that may predate the claim's annotations, could remove a pod that holds a live run. The
// next submit or cancel sets replicas to the set's size (a pod whose run ended meanwhile waits,
// unready, and claims the run that replaces it).
func (c *client) saveSet(ctx context.Context, d *appsv1.Deployment, set replicaSet, changed bool) error {
	if !changed {
		return nil
	}
	replicas := d.Spec.Replicas
	set.write(d)
	d.Spec.Replicas = replicas
	_, err := c.cs.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{})
	return err
}

// annotateClaim marks the pod with its run (and as costly to remove), under the pod's
// resourceVersion: a pod changed meanwhile (the kubelet's status) is read again, and one that
// is gone or replaced is not marked.
func (c *client) annotateClaim(ctx context.Context, p *corev1.Pod, runID string) error {
	uid := p.UID
	return onConflict(func() error {
		data, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"uid": uid, "resourceVersion": p.ResourceVersion,
			"labels":      map[string]string{LabelRun: RunLabel(runID)},
			"annotations": map[string]string{AnnotationRunID: runID, AnnotationDeletionCost: claimedCost},
		}})
		_, err := c.cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, data, metav1.PatchOptions{})
		if apierrors.IsConflict(err) {
			cur, gerr := c.pod(ctx, p.Namespace, p.Name, string(uid))
			if gerr != nil || cur == nil {
				return gerr
			}
			p = cur
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// claimConfig is the claimed run's supervisor config: the Deployment's template, with the run.
func (c *client) claimConfig(ctx context.Context, scope tokens.ClaimScope, runID string) (api.SupervisorConfig, error) {
	var cfg api.SupervisorConfig
	s, err := c.cs.CoreV1().Secrets(scope.Namespace).Get(ctx, scope.Deployment, metav1.GetOptions{})
	if err != nil {
		return cfg, fmt.Errorf("read the Secret of Deployment %s: %w", scope.Deployment, err)
	}
	if err := json.Unmarshal(s.Data[templateKey], &cfg); err != nil {
		return cfg, fmt.Errorf("the Secret of Deployment %s: %s: %w", scope.Deployment, templateKey, err)
	}
	cfg.RunID, cfg.Dir = runID, path.Join(runsDir, runID)
	return cfg, nil
}

// onConflict runs fn again while it fails with a conflict (retry.RetryOnConflict's backoff), and
// returns fn's last error: RetryOnConflict itself answers nil when fn's error was a canceled
// context (it takes that for its own interruption).
func onConflict(fn func() error) error {
	var last error
	_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		last = fn()
		return last
	})
	return last
}
