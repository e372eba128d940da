package kubernetes

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
)

// jobUIDLabel is the label Kubernetes puts on a Job's pods with the Job's UID.
const jobUIDLabel = "batch.kubernetes.io/controller-uid"

// syncTimeout bounds the first list of a namespace's watch; until it is synced, reads go to the
// API server directly.
const syncTimeout = 30 * time.Second

// watch is a namespace's Hangar Jobs and pods, kept current by one watch each (client-go
// informers), so that the status of a thousand queued runs costs no API call per run.
type watch struct {
	jobs batchlisters.JobLister
	// pods indexes the pods by their Job's UID: a run's check reads its own pods, not every pod
	// of the namespace (a thousand waiting runs made that scan most of the server's time).
	pods   cache.Indexer
	synced func() bool
	stop   chan struct{}
}

// byJobUID is the pod index of a watch.
const byJobUID = "job-uid"

type watches struct {
	mu sync.Mutex
	m  map[string]*watch // by namespace
}

// watch returns the namespace's watch, starting it the first time.
func (c *client) watch(ns string) *watch {
	c.watches.mu.Lock()
	defer c.watches.mu.Unlock()
	if w := c.watches.m[ns]; w != nil {
		return w
	}
	f := informers.NewSharedInformerFactoryWithOptions(c.cs, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelManagedBy + "=" + ManagedBy }),
		informers.WithTransform(stripManagedFields))
	ji, pi := f.Batch().V1().Jobs(), f.Core().V1().Pods()
	err := pi.Informer().AddIndexers(cache.Indexers{byJobUID: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Labels[jobUIDLabel] != "" {
			return []string{p.Labels[jobUIDLabel]}, nil
		}
		return nil, nil
	}})
	if err != nil { // only when the informer runs already: a programming error
		panic(fmt.Sprintf("index the pods: %v", err))
	}
	if c.tell != nil {
		h := changeHandler(c.tell, c.workspace)
		if _, err := ji.Informer().AddEventHandler(h); err != nil {
			panic(fmt.Sprintf("watch the Jobs: %v", err))
		}
		if _, err := pi.Informer().AddEventHandler(h); err != nil {
			panic(fmt.Sprintf("watch the pods: %v", err))
		}
	}
	w := &watch{jobs: ji.Lister(), pods: pi.Informer().GetIndexer(), stop: make(chan struct{})}
	jh, ph := ji.Informer().HasSynced, pi.Informer().HasSynced
	w.synced = func() bool { return jh() && ph() }
	f.Start(w.stop)
	go c.releaseLeftovers(w, ns)
	if c.watches.m == nil {
		c.watches.m = map[string]*watch{}
	}
	c.watches.m[ns] = w
	return w
}

// stripManagedFields drops the objects' server-side-apply bookkeeping before they are cached:
// Hangar never reads it, and it is a large part of every Job and pod the watch keeps in memory
// (and of the garbage collector's work) while a thousand runs wait.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// stopAll ends the client's watches (its target's spec changed).
func (c *client) stopAll() {
	c.watches.mu.Lock()
	defer c.watches.mu.Unlock()
	for _, w := range c.watches.m {
		close(w.stop)
	}
	c.watches.m = nil
}

// observe reads the handle's Job and its pods: from the namespace's watch once it has synced
// (a Job it has not seen yet, just created, is read from the API server), else from the API
// server. The Job is nil when it is gone or is another Job of the same name.
func (c *client) observe(ctx context.Context, hd handle) (*batchv1.Job, []corev1.Pod, error) {
	w := c.watch(hd.Namespace)
	if !w.synced() {
		sctx, cancel := context.WithTimeout(ctx, syncTimeout)
		cache.WaitForCacheSync(sctx.Done(), w.synced)
		cancel()
	}
	if w.synced() {
		j, err := w.jobs.Jobs(hd.Namespace).Get(hd.Job)
		if err == nil && string(j.UID) == hd.UID {
			objs, err := w.pods.ByIndex(byJobUID, hd.UID)
			if err == nil {
				out := make([]corev1.Pod, 0, len(objs))
				for _, o := range objs {
					if p, ok := o.(*corev1.Pod); ok {
						out = append(out, *p.DeepCopy())
					}
				}
				return j.DeepCopy(), out, nil
			}
		} else if err != nil && !apierrors.IsNotFound(err) {
			return nil, nil, err
		}
	}
	return c.read(ctx, hd)
}

// read asks the API server for the handle's Job and its pods.
func (c *client) read(ctx context.Context, hd handle) (*batchv1.Job, []corev1.Pod, error) {
	j, err := c.job(ctx, hd)
	if err != nil || j == nil {
		return nil, nil, err
	}
	list, err := c.cs.CoreV1().Pods(hd.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: jobUIDLabel + "=" + hd.UID})
	if err != nil {
		return nil, nil, fmt.Errorf("list the pods of Job %s: %w", hd.Job, err)
	}
	return j, list.Items, nil
}

// Leftover canceled Jobs: a canceled run's Job keeps Hangar's finalizer until Status has seen its
// pods gone (the tombstone says "canceled"). When nobody asks any more (the supervisor reported
// the run's end itself, or the run was deleted), the watch lets such a Job go once its pods have
// been gone for Backend.LeftoverAfter (default a minute).
const defaultLeftoverAfter = time.Minute

// releaseLeftovers removes Hangar's finalizer from this namespace's deleted Jobs whose pods this
// watch has seen gone for c.leftoverAfter, until the watch stops. The wait counts from when the
// pods were gone, not from the deletion: pods may take their whole grace period to stop, and the
// Status that reports the cancel must get its chance first.
func (c *client) releaseLeftovers(w *watch, ns string) {
	after := cmp.Or(c.leftoverAfter, defaultLeftoverAfter)
	t := time.NewTicker(min(after/2, 15*time.Second))
	defer t.Stop()
	podsGone, idleSince := map[types.UID]time.Time{}, map[types.UID]time.Time{}
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		if !w.synced() {
			continue
		}
		jobs, err := w.jobs.Jobs(ns).List(labels.Everything())
		if err != nil {
			continue
		}
		var due []*batchv1.Job
		due, podsGone = leftovers(jobs, func(uid types.UID) bool {
			pods, err := w.pods.ByIndex(byJobUID, string(uid))
			return err == nil && len(pods) == 0
		}, podsGone, time.Now(), after)
		for _, j := range due {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = c.release(ctx, j.DeepCopy())
			cancel()
		}
		idleSince = c.releaseIdle(ns, idleSince, idleFactor*after) // idle.go
	}
}

// leftovers picks the canceled runs' tombstones to let go: deleted, still held by Hangar's
// finalizer, their pods gone (noPods) since at least after ago by goneSince, the first time each
// was seen without pods. It returns them and goneSince for the next look (Jobs no longer
// tombstones, or whose pods are back, are forgotten).
func leftovers(jobs []*batchv1.Job, noPods func(types.UID) bool, goneSince map[types.UID]time.Time, now time.Time, after time.Duration) ([]*batchv1.Job, map[types.UID]time.Time) {
	next := map[types.UID]time.Time{}
	var due []*batchv1.Job
	for _, j := range jobs {
		if j.DeletionTimestamp == nil || !slices.Contains(j.Finalizers, FinalizerResult) || !noPods(j.UID) {
			continue
		}
		if waited(j.UID, goneSince, next, now, after) {
			due = append(due, j)
		}
	}
	return due, next
}

// waited records in next when uid was first seen (by since, else now) and reports whether that
// was at least after ago.
func waited(uid types.UID, since, next map[types.UID]time.Time, now time.Time, after time.Duration) bool {
	s, ok := since[uid]
	if !ok {
		s = now
	}
	next[uid] = s
	return now.Sub(s) >= after
}

// changeHandler tells fn the run whose Job or pod was added, changed or removed (this workspace's
// objects only: run ids repeat across workspaces sharing a namespace).
func changeHandler(fn func(runID string), workspace string) cache.ResourceEventHandlerFuncs {
	tell := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, ok := obj.(metav1.Object)
		if !ok || m.GetLabels()[LabelWorkspace] != workspace {
			return
		}
		if id := m.GetAnnotations()[AnnotationRunID]; id != "" {
			fn(id)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    tell,
		UpdateFunc: func(_, obj any) { tell(obj) },
		DeleteFunc: tell,
	}
}
