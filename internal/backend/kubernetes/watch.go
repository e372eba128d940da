package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// syncTimeout bounds the first list of a namespace's watch; until it is synced, reads go to the
// API server directly.
const syncTimeout = 30 * time.Second

// watch is a namespace's Hangar Jobs and pods, kept current by one watch each (client-go
// informers), so that the status of a thousand queued runs costs no API call per run.
type watch struct {
	jobs   batchlisters.JobLister
	pods   corelisters.PodLister
	synced func() bool
	stop   chan struct{}
}

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
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelManagedBy + "=" + ManagedBy }))
	ji, pi := f.Batch().V1().Jobs(), f.Core().V1().Pods()
	w := &watch{jobs: ji.Lister(), pods: pi.Lister(), stop: make(chan struct{})}
	jh, ph := ji.Informer().HasSynced, pi.Informer().HasSynced
	w.synced = func() bool { return jh() && ph() }
	f.Start(w.stop)
	if c.watches.m == nil {
		c.watches.m = map[string]*watch{}
	}
	c.watches.m[ns] = w
	return w
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
			sel := labels.SelectorFromSet(labels.Set{"batch.kubernetes.io/controller-uid": hd.UID})
			ps, err := w.pods.Pods(hd.Namespace).List(sel)
			if err == nil {
				out := make([]corev1.Pod, len(ps))
				for i, p := range ps {
					out[i] = *p.DeepCopy()
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
		LabelSelector: "batch.kubernetes.io/controller-uid=" + hd.UID})
	if err != nil {
		return nil, nil, fmt.Errorf("list the pods of Job %s: %w", hd.Job, err)
	}
	return j, list.Items, nil
}
