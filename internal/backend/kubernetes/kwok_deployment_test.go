package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/backend"
	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// servingKwok is a kwok target whose backend realises replica runs with Deployments, and the
// workspace id that keeps this test's Deployments apart from other runs of it.
func servingKwok(t *testing.T) (*kwokCluster, string) {
	k := newKwok(t, "1h", nil)
	ws := "ws-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	k.b = &kube.Backend{ServerURL: k.b.ServerURL, Targets: k.b.Targets, Log: slog.New(slog.DiscardHandler),
		Workspace: ws, ClaimKey: []byte("test-claim-key")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		bg := metav1.DeletePropagationBackground
		_ = k.cs.AppsV1().Deployments(kubetest.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg},
			metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + ws})
	})
	return k, ws
}

func replicaSpec(deployment string) job.Spec {
	return job.Spec{Command: "python score.py", Serve: &job.Serve{Endpoint: "ep", Deployment: deployment, Probe: "/health"}}
}

// claimToken reads the claim token the Deployment's pods get (the claim file of its Secret).
func claimToken(t *testing.T, k *kwokCluster, name string) string {
	t.Helper()
	s, err := k.cs.CoreV1().Secrets(kubetest.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Claim kube.ClaimConfig }
	if err := json.Unmarshal(s.Data["claim.json"], &f); err != nil || f.Claim.Token == "" {
		t.Fatalf("claim.json of %s: %s (%v)", name, s.Data["claim.json"], err)
	}
	return f.Claim.Token
}

// livePodsOf waits for n pods of the Deployment that are placed and not being deleted.
func livePodsOf(t *testing.T, k *kwokCluster, name string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	testwait.Within(t, 3*time.Minute, "the Deployment's pods", func() bool {
		l, err := k.cs.CoreV1().Pods(kubetest.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: kube.LabelServing + "=" + name})
		if err != nil {
			t.Fatal(err)
		}
		pods = pods[:0]
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
				pods = append(pods, p)
			}
		}
		return len(pods) == n
	})
	return pods
}

func neverEnded(context.Context, string) (bool, error) { return false, nil }

// An online deployment's replica runs are one Deployment (replicas = its live runs) and one
// ClusterIP Service selecting its pods on the scoring port, with probes; a pod claims a run with
// the Deployment's claim token: two concurrent claims never get one run, an ended run is never
// handed out, a token of deployment A cannot claim for a pod of deployment B; Status follows the
// claim; a cancel removes exactly the canceled run's pod.
func TestKwokReplicasAreADeployment(t *testing.T) {
	k, ws := servingKwok(t)
	l1, h1 := k.submit(replicaSpec("blue"))
	l2, h2 := k.submit(replicaSpec("blue"))
	name := kube.DeploymentName(ws, "ep", "blue")
	if jobs, _, _, _ := k.objects(l1.RunID); len(jobs) != 0 {
		t.Fatalf("a replica run made %d Jobs", len(jobs))
	}
	d, err := k.cs.AppsV1().Deployments(kubetest.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 2 || d.Labels[kube.LabelWorkspace] != ws {
		t.Errorf("Deployment %s: replicas %d, labels %v", name, *d.Spec.Replicas, d.Labels)
	}
	checkServingObjects(t, k, d)
	if again, err := k.b.Submit(t.Context(), l1); err != nil || string(again) != string(h1) {
		t.Errorf("Submit again: %s, %v; want %s", again, err, h1)
	}
	st := k.until(h1, "the waiting reason", func(st backend.Status, _ string, pending bool) bool { return pending })
	if !strings.Contains(st.Reason, "waiting for a pod of Deployment "+name+" to claim it (replicas 2") {
		t.Errorf("reason before a claim: %q", st.Reason)
	}
	pods := livePodsOf(t, k, name, 2)
	tok := claimToken(t, k, name)

	// Run 2 has ended: only run 1 may be handed out, to exactly one of two concurrent claims.
	owner := claimRace(t, k, tok, pods, l1.RunID, l2.RunID)
	cfg, err := k.b.ClaimReplica(t.Context(), tok, owner.Name, neverEnded)
	if err != nil || cfg.RunID != l1.RunID || cfg.Dir != "/hangar/runs/"+l1.RunID || cfg.ServePort != kube.DefaultServePort || cfg.Token != "" {
		t.Errorf("the same pod claiming again: %+v, %v; want run %s again", cfg, err, l1.RunID)
	}
	st = k.until(h1, "run 1 to run in its pod", func(st backend.Status, _ string, pending bool) bool { return st.Alive && !pending })
	if !strings.Contains(st.Reason, "pod "+owner.Name+" of Deployment "+name) {
		t.Errorf("run 1: %q", st.Reason)
	}
	if st := k.until(h2, "run 2's end", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil }); st.Final.State != job.Failed {
		t.Errorf("run 2 ended before it was claimed: %+v", st.Final)
	}

	// Deployment green's token cannot take blue's pods, nor blue's token green's.
	_, h3 := k.submit(replicaSpec("green"))
	green := kube.DeploymentName(ws, "ep", "green")
	gpods := livePodsOf(t, k, green, 1)
	if _, err := k.b.ClaimReplica(t.Context(), claimToken(t, k, green), owner.Name, neverEnded); !errors.Is(err, kube.ErrClaimDenied) {
		t.Errorf("green's token claiming for blue's pod: %v; want refused", err)
	}
	if _, err := k.b.ClaimReplica(t.Context(), tok, gpods[0].Name, neverEnded); !errors.Is(err, kube.ErrClaimDenied) {
		t.Errorf("blue's token claiming for green's pod: %v; want refused", err)
	}
	if _, err := k.b.ClaimReplica(t.Context(), tok+"x", owner.Name, neverEnded); !errors.Is(err, kube.ErrClaimDenied) {
		t.Errorf("a forged token: %v; want refused", err)
	}
	// A claim whose caller went away fails (client-go's RetryOnConflict answered nil for it, and
	// the server then annotated no pod: a nil pointer).
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if cfg, err := k.b.ClaimReplica(gone, tok, owner.Name, neverEnded); err == nil {
		t.Errorf("a claim with a canceled context: %+v, no error", cfg)
	}
	if st, _ := k.b.Status(t.Context(), h3); !st.Alive || st.Final != nil {
		t.Errorf("green's run: %+v", st)
	}

	// Blue gets a second run; cancel run 1: its pod, not the other, is removed.
	cancelRemovesItsPod(t, k, tok, name, owner, h1, l1.RunID)
}

// checkServingObjects checks the Deployment's Service, Secret and pod template.
func checkServingObjects(t *testing.T, k *kwokCluster, d *appsv1.Deployment) {
	t.Helper()
	svc, err := k.cs.CoreV1().Services(kubetest.Namespace).Get(t.Context(), d.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Selector[kube.LabelServing] != d.Name ||
		len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != kube.DefaultServePort || len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != d.UID {
		t.Errorf("Service %+v", svc.Spec)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/health" || c.LivenessProbe == nil ||
		d.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || strings.Contains(strings.Join(c.Command, " "), "rank-env") {
		t.Errorf("pod template: probes %+v %+v, restart %s, command %v", c.ReadinessProbe, c.LivenessProbe, d.Spec.Template.Spec.RestartPolicy, c.Command)
	}
}

// claimRace makes both pods claim at once while ended says run ended has ended: exactly one gets
// run want, the other nothing; it returns the winner.
func claimRace(t *testing.T, k *kwokCluster, tok string, pods []corev1.Pod, want, ended string) corev1.Pod {
	t.Helper()
	isEnded := func(_ context.Context, id string) (bool, error) { return id == ended, nil }
	got := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			cfg, err := k.b.ClaimReplica(t.Context(), tok, pods[i].Name, isEnded)
			got[i], errs[i] = cfg.RunID, err
		})
	}
	wg.Wait()
	winner := -1
	for i := range 2 {
		switch {
		case errs[i] == nil && got[i] == want && winner < 0:
			winner = i
		case errs[i] != nil && (errors.Is(errs[i], kube.ErrNothingToClaim) || errors.Is(errs[i], kube.ErrClaimDenied)):
		default:
			t.Fatalf("claims: runs %q, errors %v; want run %s once and nothing for the other", got, errs, want)
		}
	}
	if winner < 0 {
		t.Fatalf("no claim got run %s: %v", want, errs)
	}
	return pods[winner]
}

// cancelRemovesItsPod submits a second run of the Deployment, lets the other pod claim it, and
// cancels run (h, claimed by owner): owner is removed, the other pod and its run stay.
func cancelRemovesItsPod(t *testing.T, k *kwokCluster, tok, name string, owner corev1.Pod, h backend.Handle, run string) {
	t.Helper()
	_, h4 := k.submit(replicaSpec("blue"))
	bpods := livePodsOf(t, k, name, 2)
	other := bpods[0]
	if other.Name == owner.Name {
		other = bpods[1]
	}
	if cfg, err := k.b.ClaimReplica(t.Context(), tok, other.Name, neverEnded); err != nil || cfg.RunID == run {
		t.Fatalf("the other pod's claim: %+v, %v", cfg, err)
	}
	if err := k.b.Cancel(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	testwait.Within(t, 3*time.Minute, "run 1's pod to be removed", func() bool {
		p, err := k.cs.CoreV1().Pods(kubetest.Namespace).Get(t.Context(), owner.Name, metav1.GetOptions{})
		return err != nil || p.DeletionTimestamp != nil
	})
	if p, err := k.cs.CoreV1().Pods(kubetest.Namespace).Get(t.Context(), other.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the pod of the run left running was removed: %v", err)
	}
	if st, _ := k.b.Status(t.Context(), h4); !st.Alive || st.Final != nil {
		t.Errorf("the run left running: %+v", st)
	}
	st := k.until(h, "run 1's cancel", func(st backend.Status, _ string, _ bool) bool {
		return st.Final != nil || strings.Contains(st.Reason, "is stopping")
	})
	if st.Final != nil && st.Final.State != job.Canceled {
		t.Errorf("run 1 after its cancel: %+v", st.Final)
	}
}

// An online deployment's Deployment left empty (its replicas canceled: the online deployment
// deleted, or scaled to zero) is deleted with its Secret and Service after the idle wait; the
// next replica makes all three again, and a pod of the new Deployment claims it with the new
// Secret's token. A Secret left behind by an earlier Deployment of the same name (deleted
// without its dependents) is taken over, not kept with a claim token for a Deployment gone.
func TestKwokIdleDeploymentIsDeletedAndMadeAgain(t *testing.T) {
	k, ws := servingKwok(t)
	k.b.LeftoverAfter = time.Second // idle after 5 s
	ctx := t.Context()
	name := kube.DeploymentName(ws, "ep", "idle")
	left := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kubetest.Namespace},
		Data: map[string][]byte{"claim.json": []byte(`{"claim":{"token":"of-a-deployment-gone"}}`)}}
	if _, err := k.cs.CoreV1().Secrets(kubetest.Namespace).Create(ctx, left, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.cs.CoreV1().Secrets(kubetest.Namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	l1, h1 := k.submit(replicaSpec("idle"))
	first, err := k.cs.AppsV1().Deployments(kubetest.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkServingObjects(t, k, first)
	claims(t, k, name, l1.RunID)
	if err := k.b.Cancel(ctx, h1); err != nil {
		t.Fatal(err)
	}
	testwait.Within(t, 3*time.Minute, "the idle Deployment, its Secret and Service to be deleted", func() bool {
		_, d := k.cs.AppsV1().Deployments(kubetest.Namespace).Get(ctx, name, metav1.GetOptions{})
		_, s := k.cs.CoreV1().Secrets(kubetest.Namespace).Get(ctx, name, metav1.GetOptions{})
		_, v := k.cs.CoreV1().Services(kubetest.Namespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(d) && apierrors.IsNotFound(s) && apierrors.IsNotFound(v)
	})

	l2, _ := k.submit(replicaSpec("idle"))
	again, err := k.cs.AppsV1().Deployments(kubetest.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.UID == first.UID || *again.Spec.Replicas != 1 {
		t.Errorf("the next replica's Deployment: uid %s (first %s), replicas %d", again.UID, first.UID, *again.Spec.Replicas)
	}
	checkServingObjects(t, k, again)
	claims(t, k, name, l2.RunID)
}

// claims checks that the Deployment's Secret is its own and that one of its pods claims run
// with the Secret's token.
func claims(t *testing.T, k *kwokCluster, name, run string) {
	t.Helper()
	d, err := k.cs.AppsV1().Deployments(kubetest.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.cs.CoreV1().Secrets(kubetest.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != d.UID {
		t.Errorf("Secret %s is owned by %+v, want the Deployment %s", name, s.OwnerReferences, d.UID)
	}
	pods := livePodsOf(t, k, name, 1)
	cfg, err := k.b.ClaimReplica(t.Context(), claimToken(t, k, name), pods[0].Name, neverEnded)
	if err != nil || cfg.RunID != run {
		t.Errorf("a pod of %s claiming: %+v, %v; want run %s", name, cfg, err, run)
	}
}
