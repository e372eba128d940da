package kubernetes

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/hangar-ml/hangar/internal/compute"
)

// The client's own rate limit: a controller's, well above client-go's default of 5/s.
const (
	clientQPS   = 100
	clientBurst = 200
)

// client is one target's API client.
type client struct {
	cs      k8s.Interface
	host    string // the API server, for messages
	key     string // the spec's connection fields, to notice an update
	loaded  time.Time
	watches watches
	// tell and workspace: the watches tell tell about this workspace's runs that changed.
	tell      func(runID string)
	workspace string
	// leftoverAfter is Backend.LeftoverAfter.
	leftoverAfter time.Duration
	log           *slog.Logger
	// dyn reads what client-go has no types for (Kueue's Workloads); kueue watches them.
	dyn   dynamic.Interface
	kueue kueueWatches
	// serving holds a lock per online deployment's Deployment (deployment_run.go).
	serving struct {
		mu sync.Mutex
		m  map[string]*sync.Mutex
	}
}

type clients struct {
	mu sync.Mutex
	m  map[string]*client
}

// target returns the named target's spec and client, connecting the first time.
func (b *Backend) target(ctx context.Context, name string) (*client, *compute.Stored, error) {
	st, err := b.Targets(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if st.Spec.Kubernetes == nil {
		return nil, nil, fmt.Errorf("compute %s is not a kubernetes target", name)
	}
	k := st.Spec.Kubernetes
	key := k.Kubeconfig + "\x00" + k.Context
	b.clients.mu.Lock()
	defer b.clients.mu.Unlock()
	old := b.clients.m[name]
	if old != nil && old.key == key {
		return old, st, nil
	}
	if old != nil {
		old.stopAll()
	}
	c, err := connect(*k)
	if err != nil {
		return nil, nil, fmt.Errorf("compute %s: %w", name, err)
	}
	c.key, c.loaded = key, time.Now()
	c.tell, c.workspace, c.leftoverAfter = b.tell, b.Workspace, b.LeftoverAfter
	c.log = cmp.Or(b.Log, slog.Default())
	if b.clients.m == nil {
		b.clients.m = map[string]*client{}
	}
	b.clients.m[name] = c
	return c, st, nil
}

// connect builds a client from the target's kubeconfig and context (the default loading rules
// when it names no file: $KUBECONFIG, ~/.kube/config, or in-cluster).
func connect(k compute.KubernetesSpec) (*client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k.Kubeconfig != "" {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: k.Kubeconfig}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: k.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.Timeout = 30 * time.Second
	cfg.UserAgent = "hangar"
	// client-go's default (5 requests a second, bursts of 10) made a thousand submissions (a Job
	// and a Secret each) take 400 s, and their cancels as long; the API server's own priority
	// and fairness is the right limit for a controller's writes.
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	cs, err := k8s.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return &client{cs: cs, dyn: dyn, host: cfg.Host}, nil
}

// job reads the handle's Job; nil when it is gone or is another Job of the same name.
func (c *client) job(ctx context.Context, hd handle) (*batchv1.Job, error) {
	j, err := c.cs.BatchV1().Jobs(hd.Namespace).Get(ctx, hd.Job, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the Job %s/%s from %s: %w", hd.Namespace, hd.Job, c.host, err)
	case string(j.UID) != hd.UID:
		return nil, nil
	}
	return j, nil
}

// release removes Hangar's finalizer from a canceled run's Job, so Kubernetes finishes deleting
// it. The Job changes under it while it is deleted (the garbage collector's own finalizer, the
// Job controller's status): a conflict is retried on the Job as it is now.
func (c *client) release(ctx context.Context, j *batchv1.Job) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rest := slices.DeleteFunc(slices.Clone(j.Finalizers), func(f string) bool { return f == FinalizerResult })
		if len(rest) == len(j.Finalizers) {
			return nil
		}
		data, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": j.ResourceVersion, "finalizers": rest}})
		_, err := c.cs.BatchV1().Jobs(j.Namespace).Patch(ctx, j.Name, types.MergePatchType, data, metav1.PatchOptions{})
		if apierrors.IsConflict(err) {
			cur, gerr := c.cs.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(gerr):
				return nil
			case gerr != nil:
				return gerr
			case cur.UID != j.UID:
				return nil
			}
			j = cur
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}
