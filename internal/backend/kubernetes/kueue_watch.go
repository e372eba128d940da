package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// workloadsGVR is Kueue's Workload resource (the storage version of Kueue 0.15 and later).
var workloadsGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// kueueRecheck is how long a namespace whose Workloads could not be read (Kueue not installed,
// credentials without list/watch on workloads.kueue.x-k8s.io) waits before Hangar tries again.
const kueueRecheck = 5 * time.Minute

// Indexes of a Kueue watch's Workloads.
const (
	wlByJobUID = "job-uid"
	wlByQueue  = "queue"
)

// kueueWatches are a client's watches of Kueue's Workloads, one per namespace, started the first
// time a Job Kueue holds there is judged.
type kueueWatches struct {
	mu sync.Mutex
	m  map[string]*kueueWatch // by namespace
}

// kueueWatch is a namespace's Kueue Workloads, kept current by one watch: a thousand Jobs Kueue
// holds cost no API call each, and their positions are sorted once per change of the queue,
// not once per run.
type kueueWatch struct {
	// unread is why the namespace's Workloads cannot be read, since checked; "" when watched.
	unread  string
	checked time.Time
	idx     cache.Indexer
	synced  func() bool
	gen     atomic.Int64 // counts the changes the watch has seen

	mu     sync.Mutex
	orders map[string]queueOrder // by LocalQueue
}

// queueOrder is a LocalQueue's waiting Workloads' positions (1-based, by UID) as of gen.
type queueOrder struct {
	gen int64
	pos map[types.UID]int
}

// kueueReason says why the Job Kueue holds in queue waits: the Workload Kueue made for it, its
// position in the LocalQueue and Kueue's message, from the namespace's Workload watch.
func (c *client) kueueReason(ctx context.Context, j *batchv1.Job, queue string) string {
	kw := c.kueueWatch(ctx, j.Namespace)
	if kw.unread != "" {
		return KueueReason(queue, nil, 0, 0, kw.unread)
	}
	if !kw.synced() {
		sctx, cancel := context.WithTimeout(ctx, syncTimeout)
		cache.WaitForCacheSync(sctx.Done(), kw.synced)
		cancel()
	}
	var w *Workload
	objs, _ := kw.idx.ByIndex(wlByJobUID, string(j.UID))
	for _, o := range objs {
		if x, ok := o.(*Workload); ok && (w == nil || x.CreationTimestamp.After(w.CreationTimestamp.Time)) {
			w = x
		}
	}
	pos, total := 0, 0
	if w != nil && w.Waiting() {
		order := kw.order(w.Queue)
		pos, total = order[w.UID], len(order)
	}
	return KueueReason(queue, w, pos, total, "")
}

// order returns the LocalQueue's waiting Workloads' positions, sorted again only when the watch
// has seen a change since.
func (kw *kueueWatch) order(queue string) map[types.UID]int {
	gen := kw.gen.Load()
	kw.mu.Lock()
	defer kw.mu.Unlock()
	if o, ok := kw.orders[queue]; ok && o.gen == gen {
		return o.pos
	}
	objs, _ := kw.idx.ByIndex(wlByQueue, queue)
	all := make([]*Workload, 0, len(objs))
	for _, o := range objs {
		if w, ok := o.(*Workload); ok {
			all = append(all, w)
		}
	}
	pos := map[types.UID]int{}
	for i, uid := range QueueOrder(queue, all) {
		pos[uid] = i + 1
	}
	if kw.orders == nil {
		kw.orders = map[string]queueOrder{}
	}
	kw.orders[queue] = queueOrder{gen: gen, pos: pos}
	return pos
}

// kueueWatch returns the namespace's Workload watch, starting it the first time (and again
// kueueRecheck after the Workloads could not be read). One List of one Workload checks that
// they can be read before a watch is started: a watch of a resource the API server does not
// serve, or may not show, would retry (and log) forever.
func (c *client) kueueWatch(ctx context.Context, ns string) *kueueWatch {
	c.kueue.mu.Lock()
	defer c.kueue.mu.Unlock()
	if kw := c.kueue.m[ns]; kw != nil && (kw.unread == "" || time.Since(kw.checked) < kueueRecheck) {
		return kw
	}
	kw := &kueueWatch{checked: time.Now()}
	if c.kueue.m == nil {
		c.kueue.m = map[string]*kueueWatch{}
	}
	c.kueue.m[ns] = kw
	if _, err := c.dyn.Resource(workloadsGVR).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		kw.unread = fmt.Sprintf("Kueue's Workloads (%s) in namespace %s cannot be read: %v", workloadsGVR.GroupResource(), ns, err)
		if apierrors.IsNotFound(err) {
			kw.unread = fmt.Sprintf("the cluster does not serve Kueue's Workloads (%s %s): is Kueue 0.15 or later installed?",
				workloadsGVR.GroupResource(), workloadsGVR.Version)
		}
		return kw
	}
	jobs := c.watch(ns) // its Jobs name the run a Workload's change concerns; its stop ends this watch too
	inf := dynamicinformer.NewFilteredDynamicInformer(c.dyn, workloadsGVR, ns, 0, cache.Indexers{
		wlByJobUID: func(obj any) ([]string, error) {
			if w, ok := obj.(*Workload); ok && w.JobUID != "" {
				return []string{string(w.JobUID)}, nil
			}
			return nil, nil
		},
		wlByQueue: func(obj any) ([]string, error) {
			if w, ok := obj.(*Workload); ok {
				return []string{w.Queue}, nil
			}
			return nil, nil
		},
	}, nil).Informer()
	if err := inf.SetTransform(toWorkload); err != nil {
		panic(fmt.Sprintf("watch Kueue's Workloads: %v", err)) // only when the informer runs already
	}
	h := workloadHandler(kw, jobs, c.workspace, c.tell)
	if _, err := inf.AddEventHandler(h); err != nil {
		panic(fmt.Sprintf("watch Kueue's Workloads: %v", err))
	}
	kw.idx, kw.synced = inf.GetIndexer(), inf.HasSynced
	go inf.Run(jobs.stop)
	return kw
}

// toWorkload keeps what Hangar reads of a Workload in the watch's cache, not its pod templates.
func toWorkload(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return WorkloadFrom(u)
	}
	return obj, nil
}

// workloadHandler counts the watch's changes (the queues' positions are sorted again) and tells
// tell the run whose Job's Workload changed (this workspace's only). The runs behind it in its
// queue move up too; they are asked again on the controller's full pass, so that one admission
// does not make a thousand waiting runs' reasons be written at once.
func workloadHandler(kw *kueueWatch, jobs *watch, workspace string, tell func(runID string)) cache.ResourceEventHandlerFuncs {
	changed := func(obj any) {
		kw.gen.Add(1)
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		w, ok := obj.(*Workload)
		if !ok || tell == nil || len(w.OwnerReferences) == 0 {
			return
		}
		j, err := jobs.jobs.Jobs(w.Namespace).Get(w.OwnerReferences[0].Name)
		if err != nil || j.UID != w.JobUID || j.Labels[LabelWorkspace] != workspace {
			return
		}
		if id := j.Annotations[AnnotationRunID]; id != "" {
			tell(id)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	}
}
