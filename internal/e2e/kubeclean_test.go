package e2e

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/store"
)

// kubeCleanup makes the test leave nothing of its workspace in the shared test cluster: when the
// test ends it stops the server (so nothing is created again: an endpoint would start a new
// replica), then deletes every Job, pod, Secret and Service labelled with the workspace's id,
// releasing Hangar's finalizer on the Jobs. Without it, replicas and killed-server runs stayed
// running in the bed for hours after the tests.
func (w *ws) kubeCleanup(kubeconfig string) {
	w.t.Cleanup(func() {
		if w.server != nil && w.server.Process != nil {
			_ = w.server.Process.Kill()
			_, _ = w.server.Process.Wait()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		id, err := workspaceID(ctx, w.dsn())
		if err != nil {
			w.t.Logf("kube cleanup: %v", err)
			return
		}
		if err := deleteWorkspaceObjects(ctx, kubeconfig, id); err != nil {
			w.t.Logf("kube cleanup of workspace %s: %v", id, err)
		}
	})
}

// workspaceID reads the id the server gave the workspace (its objects in Kubernetes carry it)
// from its database (dsn: ws.dsn).
func workspaceID(ctx context.Context, dsn string) (string, error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer st.Close()
	id, _, err := st.Setting(ctx, "workspace_id")
	return id, err
}

func deleteWorkspaceObjects(ctx context.Context, kubeconfig, id string) error {
	cs, err := kubetest.Client(kubeconfig)
	if err != nil {
		return err
	}
	sel := metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id}
	jobs := cs.BatchV1().Jobs(kubetest.Namespace)
	l, err := jobs.List(ctx, sel)
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	// Online deployments' Deployments first: their ReplicaSets would make the pods again.
	_ = cs.AppsV1().Deployments(kubetest.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, sel)
	for _, j := range l.Items {
		if len(j.Finalizers) > 0 {
			_, _ = jobs.Patch(ctx, j.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}
		_ = jobs.Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	}
	core := cs.CoreV1()
	_ = core.Pods(kubetest.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	_ = core.Secrets(kubetest.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	svcs, err := core.Services(kubetest.Namespace).List(ctx, sel)
	if err != nil {
		return err
	}
	for _, s := range svcs.Items {
		_ = core.Services(kubetest.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
	}
	return nil
}
