package kubernetes_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	kube "github.com/hangar-ml/hangar/internal/backend/kubernetes"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// These tests place runs on the test cluster's kwok nodes: Kubernetes' own API server,
// controllers and scheduler decide, kwok plays the kubelets (it never executes a command, so
// these tests read what Kubernetes did with the run's objects; TestConformance runs commands
// on the real kubelet).

// kwokCluster is a kubernetes target on the kwok nodes and a backend for it.
type kwokCluster struct {
	t  *testing.T
	cs kubetest.Interface
	b  *kube.Backend
}

// newKwok makes a target whose pods kwok "runs" for podTime (then completes them), with the
// extra pod labels given.
func newKwok(t *testing.T, podTime string, podLabels map[string]string) *kwokCluster {
	t.Parallel() // a cancel waits for kwok to delete the pods, which takes up to their grace period
	kc := kubetest.Config(t)
	cs, err := kubetest.Client(kc)
	if err != nil {
		t.Fatal(err)
	}
	kwok := map[string]string{"hangar.test/kind": "kwok"}
	target := backendtest.Target(t, compute.Spec{Name: "kwok", Type: compute.TypeKubernetes, Kubernetes: &compute.KubernetesSpec{
		Namespace: kubetest.Namespace, Kubeconfig: kc, DefaultImage: "localhost/hangar-busybox:latest",
		Supervisor:          compute.KubeSupervisor{Image: "localhost/hangar-supervisor:never-pulled"},
		DefaultInstanceType: "cpu",
		InstanceTypes: map[string]compute.InstanceType{
			"cpu": {NodeSelector: kwok, Requests: compute.ResourceList{CPU: "1", Memory: "1Gi"}},
			"gpu": {NodeSelector: kwok, Requests: compute.ResourceList{GPU: 1}, Limits: compute.ResourceList{GPU: 1}},
		},
		PodAnnotations: kwokPodTime(t, podTime),
		PodLabels:      podLabels,
	}})
	b := &kube.Backend{ServerURL: func() string { return "http://127.0.0.1:1" }, Targets: backendtest.Resolver(target),
		Log: slog.New(slog.DiscardHandler)}
	return &kwokCluster{t: t, cs: cs, b: b}
}

// kwokPodTime is the annotations that make kwok complete a pod after d. kwok's Stage.Delay
// answers the stage's jitter instead of the delay when the jitter is not above it, and the bed's
// pod-complete stage has a default jitter of 5 s: without a jitter-delay above d, a pod meant to
// run for ten minutes completes after about 5 s.
func kwokPodTime(t *testing.T, d string) map[string]string {
	t.Helper()
	dur, err := time.ParseDuration(d)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"pod-complete.stage.kwok.x-k8s.io/delay":        d,
		"pod-complete.stage.kwok.x-k8s.io/jitter-delay": (dur + time.Second).String(),
	}
}

func (k *kwokCluster) submit(spec job.Spec) (backend.Launch, backend.Handle) {
	k.t.Helper()
	return k.submitWith(k.b, spec)
}

// submitWith submits a run through the given backend (another workspace's, say).
func (k *kwokCluster) submitWith(b *kube.Backend, spec job.Spec) (backend.Launch, backend.Handle) {
	k.t.Helper()
	id := "kwok-" + strings.ToLower(k.t.Name()[len("TestKwok"):min(len(k.t.Name()), 30)]) + "-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	spec.Compute = "kwok"
	l := backend.Launch{RunID: id, Token: id + ".secret", Attempt: 1, Spec: spec,
		Target: compute.Target{Name: "kwok", Type: compute.TypeKubernetes}}
	h, err := b.Submit(k.t.Context(), l)
	if err != nil {
		k.t.Fatalf("Submit: %v", err)
	}
	k.t.Cleanup(func() { k.deleteRun(id) })
	return l, h
}

func (k *kwokCluster) deleteRun(runID string) {
	bg := metav1.DeletePropagationBackground
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = k.cs.BatchV1().Jobs(kubetest.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg},
		metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + kube.RunLabel(runID)})
}

// until polls Status (and Pending) until cond holds.
func (k *kwokCluster) until(h backend.Handle, what string, cond func(st backend.Status, reason string, pending bool) bool) backend.Status {
	k.t.Helper()
	// kwok removes a deleted pod only after its grace period (Hangar's pods get 120 s), so a
	// cancel's end comes after that, later still on a loaded machine.
	deadline := time.Now().Add(4 * time.Minute)
	var st backend.Status
	var reason string
	var pending bool
	for {
		var err error
		if st, err = k.b.Status(k.t.Context(), h); err != nil {
			k.t.Fatalf("Status: %v", err)
		}
		if reason, pending, err = k.b.Pending(k.t.Context(), h); err != nil {
			k.t.Fatalf("Pending: %v", err)
		}
		if cond(st, reason, pending) {
			return st
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("timed out waiting for %s; last status %+v (final %+v), pending %v %q", what, st, st.Final, pending, reason)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (k *kwokCluster) objects(runID string) (jobs []batchv1.Job, pods []corev1.Pod, secrets []corev1.Secret, svcs []corev1.Service) {
	k.t.Helper()
	ctx := k.t.Context()
	o := metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + kube.RunLabel(runID)}
	ns := kubetest.Namespace
	jl, err1 := k.cs.BatchV1().Jobs(ns).List(ctx, o)
	pl, err2 := k.cs.CoreV1().Pods(ns).List(ctx, o)
	sl, err3 := k.cs.CoreV1().Secrets(ns).List(ctx, o)
	vl, err4 := k.cs.CoreV1().Services(ns).List(ctx, o)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			k.t.Fatal(err)
		}
	}
	return jl.Items, pl.Items, sl.Items, vl.Items
}

// A submitted run becomes one Job whose pod Kubernetes schedules and runs; its Secret is owned by
// the Job; the run is alive while the pod runs. A pod that ends without the supervisor's result
// (kwok never ran it) ends the run Failed, saying so.
func TestKwokSubmitRunsAndEnds(t *testing.T) {
	k := newKwok(t, "4s", nil)
	l, h := k.submit(job.Spec{Command: "python train.py"})
	st := k.until(h, "the pod to run", func(st backend.Status, _ string, pending bool) bool { return st.Alive && !pending })
	if !strings.Contains(st.Reason, "running on Kubernetes node(s) kwok-node-") {
		t.Errorf("running reason %q", st.Reason)
	}
	jobs, pods, secrets, _ := k.objects(l.RunID)
	if len(jobs) != 1 || len(pods) != 1 || len(secrets) != 1 {
		t.Fatalf("%d jobs, %d pods, %d secrets; want one of each", len(jobs), len(pods), len(secrets))
	}
	j, p, s := jobs[0], pods[0], secrets[0]
	if j.Labels[kube.LabelManagedBy] != "hangar" || j.Annotations[kube.AnnotationRunID] != l.RunID {
		t.Errorf("job labels %v annotations %v", j.Labels, j.Annotations)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != j.UID {
		t.Errorf("secret owners %+v, want the Job %s", s.OwnerReferences, j.UID)
	}
	var cfg api.SupervisorConfig
	if err := json.Unmarshal(s.Data["supervisor.json"], &cfg); err != nil || cfg.RunID != l.RunID || cfg.Token != l.Token {
		t.Errorf("supervisor config %+v: %v", cfg, err)
	}
	if c := p.Spec.Containers[0]; c.Image != "localhost/hangar-busybox:latest" || c.Resources.Requests.Cpu().String() != "1" ||
		*p.Spec.AutomountServiceAccountToken || !strings.HasPrefix(p.Spec.NodeName, "kwok-node-") {
		t.Errorf("pod: image %s requests %v token %v node %s", c.Image, c.Resources.Requests, *p.Spec.AutomountServiceAccountToken, p.Spec.NodeName)
	}
	if again, err := k.b.Submit(t.Context(), l); err != nil || string(again) != string(h) {
		t.Errorf("Submit again: %s, %v; want the same handle %s", again, err, h)
	}
	st = k.until(h, "the end", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil })
	if st.Alive || st.Final.State != job.Failed || !strings.Contains(st.Final.Reason, "the supervisor ended without a result") {
		t.Errorf("final %+v", st.Final)
	}
}

// Two instances: an Indexed Job of two pods (indexes 0 and 1) running at once, each the host
// <job>-<index> under a headless Service of the Job's name, so that node 0's name, which the
// supervisors get as MASTER_ADDR, resolves in the cluster.
func TestKwokTwoInstancesIndexedJob(t *testing.T) {
	k := newKwok(t, "600s", nil)
	l, h := k.submit(job.Spec{Command: "torchrun train.py", Resources: job.Resources{InstanceCount: 2},
		Distribution: &job.Distribution{Type: "pytorch", ProcessCountPerInstance: 1}})
	k.until(h, "the pods to run", func(st backend.Status, _ string, pending bool) bool { return st.Alive && !pending })
	name := kube.JobName(l.RunID, 1)
	var jobs []batchv1.Job
	var pods []corev1.Pod
	var secrets []corev1.Secret
	var svcs []corev1.Service
	var idx []string
	// kwok marks the two pods running one after the other: wait for both.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		jobs, pods, secrets, svcs = k.objects(l.RunID)
		idx = idx[:0]
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.Spec.Subdomain == name && p.Spec.Hostname == name+"-"+p.Labels[kube.LabelCompletionIndex] {
				idx = append(idx, p.Labels[kube.LabelCompletionIndex])
			}
		}
		if slices.Sort(idx); strings.Join(idx, ",") == "0,1" || time.Now().After(deadline) {
			break
		}
	}
	if len(jobs) != 1 || *jobs[0].Spec.CompletionMode != batchv1.IndexedCompletion || *jobs[0].Spec.Completions != 2 {
		t.Fatalf("jobs %+v", jobs)
	}
	if strings.Join(idx, ",") != "0,1" {
		t.Errorf("running pods with their host names by index: %v (pods %d)", idx, len(pods))
		for _, p := range pods {
			t.Logf("pod %s: phase %s, subdomain %q, hostname %q, index %q (Job %q)", p.Name, p.Status.Phase, p.Spec.Subdomain, p.Spec.Hostname, p.Labels[kube.LabelCompletionIndex], name)
		}
	}
	if len(svcs) != 1 || svcs[0].Spec.ClusterIP != corev1.ClusterIPNone || svcs[0].Name != name || svcs[0].OwnerReferences[0].UID != jobs[0].UID {
		t.Errorf("services %+v", svcs)
	}
	var cfg api.SupervisorConfig
	_ = json.Unmarshal(secrets[0].Data["supervisor.json"], &cfg)
	if len(cfg.Nodes) != 2 || cfg.Nodes[0] != name+"-0."+name {
		t.Errorf("the supervisors' nodes %v, want %s-0.%s first", cfg.Nodes, name, name)
	}
}

// A GPU request no node can give waits, with the scheduler's own words as the reason.
func TestKwokGPURequestPendsWithTheSchedulersReason(t *testing.T) {
	k := newKwok(t, "600s", nil)
	_, h := k.submit(job.Spec{Command: "python train.py", Resources: job.Resources{InstanceType: "gpu"}})
	k.until(h, "the scheduler's reason", func(st backend.Status, reason string, pending bool) bool {
		return pending && st.Alive && strings.Contains(reason, "0/3 nodes are available") && strings.Contains(reason, "Insufficient nvidia.com/gpu")
	})
}

// A pod Kubernetes fails (kwok's chaos stage: its container fails while running) fails the run
// with Kubernetes' reason.
func TestKwokPodFailureFailsTheRunWithTheReason(t *testing.T) {
	k := newKwok(t, "600s", map[string]string{"pod-container-running-failed.stage.kwok.x-k8s.io": "true"})
	_, h := k.submit(job.Spec{Command: "python train.py"})
	st := k.until(h, "the failure", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil })
	if st.Final.State != job.Failed || !strings.Contains(st.Final.Reason, "Kubernetes failed the Job: PodFailurePolicy") {
		t.Errorf("final %+v, want Failed with Kubernetes' reason", st.Final)
	}
}

// Pending never lets a canceled run's Job go: asked while the pods stop and after they are gone
// (the controller asks it of runs waiting in Kubernetes), it leaves the cancel's end for Status
// to report. Before, Pending removed the finalizer, the Job vanished, and Status found nothing.
func TestKwokPendingKeepsTheCancelForStatus(t *testing.T) {
	k := newKwok(t, "600s", nil)
	l, h := k.submit(job.Spec{Command: "sleep 600"})
	k.until(h, "the pod to run", func(st backend.Status, _ string, pending bool) bool { return st.Alive && !pending })
	if err := k.b.Cancel(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	// Ask Pending until the watch has seen the pods gone (it no longer says they stop), then
	// once more: without the fix, either call let the Job go.
	deadline := time.Now().Add(4 * time.Minute)
	for {
		reason, _, err := k.b.Pending(t.Context(), h)
		if err != nil {
			t.Fatalf("Pending: %v", err)
		}
		if _, pods, _, _ := k.objects(l.RunID); len(pods) == 0 && !strings.Contains(reason, "stopping") && !strings.Contains(reason, "running") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the canceled run's pod did not go; Pending says %q", reason)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, _, err := k.b.Pending(t.Context(), h); err != nil {
		t.Fatalf("Pending: %v", err)
	}
	st := k.until(h, "the cancel's end", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil })
	if st.Final.State != job.Canceled {
		t.Errorf("final %+v, want Canceled", st.Final)
	}
}

// Cancel deletes the Job: the run ends Canceled once its pods are gone, and nothing of it is left
// in the cluster (Job, pods, Secret, Service).
func TestKwokCancelCleansUp(t *testing.T) {
	k := newKwok(t, "600s", nil)
	l, h := k.submit(job.Spec{Command: "sleep 600", Resources: job.Resources{InstanceCount: 2}})
	k.until(h, "the pods to run", func(st backend.Status, _ string, pending bool) bool { return st.Alive && !pending })
	if err := k.b.Cancel(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	st := k.until(h, "the cancel's end", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil })
	if st.Final.State != job.Canceled || !strings.Contains(st.Final.Reason, "canceled") {
		t.Errorf("final %+v, want Canceled", st.Final)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		jobs, pods, secrets, svcs := k.objects(l.RunID)
		if len(jobs)+len(pods)+len(secrets)+len(svcs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after the cancel: %d jobs, %d pods, %d secrets, %d services", len(jobs), len(pods), len(secrets), len(svcs))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := k.b.Cancel(t.Context(), h); err != nil {
		t.Errorf("cancel after the end: %v", err)
	}
}

// Run ids repeat across workspaces: a second workspace submitting a run of the same id into the
// same namespace is refused, instead of taking the first one's Job (and its result) for its own.
func TestKwokAnotherWorkspacesJobIsNotThisRuns(t *testing.T) {
	k := newKwok(t, "600s", nil)
	k.b.Workspace = "ws-one"
	l, _ := k.submit(job.Spec{Command: "python train.py"})
	other := &kube.Backend{ServerURL: k.b.ServerURL, Targets: k.b.Targets, Log: k.b.Log, Workspace: "ws-two"}
	_, err := other.Submit(t.Context(), l)
	if err == nil || !strings.Contains(err.Error(), `of workspace "ws-one", not to run`) {
		t.Errorf("Submit from another workspace: %v; want a refusal naming the Job's workspace", err)
	}
	if again, err := k.b.Submit(t.Context(), l); err != nil {
		t.Errorf("Submit again from the same workspace: %s, %v", again, err)
	}
}

// told collects the run ids a Backend's watches tell (backend.Notifier).
type told struct {
	mu  sync.Mutex
	ids map[string]int
}

func (w *told) tell(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ids[id]++
}

func (w *told) count(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ids[id]
}

// The backend tells the controller which run changed (its Job or pods), so that a thousand
// waiting runs are asked about when Kubernetes changes them, not every pass; another
// workspace's watches sharing the namespace hear nothing of this workspace's runs.
func TestKwokTellsWhichRunChanged(t *testing.T) {
	k := newKwok(t, "600s", nil)
	k.b.Workspace = "ws-tell"
	mine, theirs := &told{ids: map[string]int{}}, &told{ids: map[string]int{}}
	k.b.Notify(mine.tell)
	other := &kube.Backend{ServerURL: k.b.ServerURL, Targets: k.b.Targets, Log: k.b.Log, Workspace: "ws-other"}
	other.Notify(theirs.tell)
	_, oh := k.submitWith(other, job.Spec{Command: "true"})
	if _, _, err := other.Pending(t.Context(), oh); err != nil { // its watch of the namespace runs
		t.Fatal(err)
	}
	l, h := k.submit(job.Spec{Command: "python train.py", Resources: job.Resources{InstanceType: "gpu"}})
	k.until(h, "the scheduler's reason", func(_ backend.Status, reason string, pending bool) bool {
		return pending && strings.Contains(reason, "Insufficient nvidia.com/gpu")
	})
	waitTold := func(what string, cond func() bool) {
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: told %d times", what, mine.count(l.RunID))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The Job and its pod (their creation and changes may reach the watch as one state each).
	waitTold("the Job and its unschedulable pod", func() bool { return mine.count(l.RunID) >= 2 })
	before := mine.count(l.RunID)
	if err := k.b.Cancel(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	waitTold("the cancel", func() bool { return mine.count(l.RunID) > before })
	k.until(h, "the cancel's end", func(st backend.Status, _ string, _ bool) bool { return st.Final != nil })
	if n := theirs.count(l.RunID); n != 0 {
		t.Errorf("another workspace's backend was told %d times of this workspace's run", n)
	}
}

// A canceled run's Job is let go even when nobody asks its Status again (the supervisor reported
// the run's end itself, or the server went away and the run was deleted): once its pods have
// been gone for LeftoverAfter, nothing of the run stays in the cluster.
func TestKwokCanceledJobNobodyAsksAboutIsLetGo(t *testing.T) {
	k := newKwok(t, "600s", nil)
	k.b.LeftoverAfter = 2 * time.Second
	l, h := k.submit(job.Spec{Command: "sleep 600"})
	k.until(h, "the pod to run", func(st backend.Status, _ string, pending bool) bool { return st.Alive && !pending })
	if err := k.b.Cancel(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	// kwok removes a deleted pod only after its grace period (Hangar's pods get 120 s).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		jobs, pods, secrets, _ := k.objects(l.RunID)
		if len(jobs)+len(pods)+len(secrets) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("left 3 minutes after the cancel, Status never asked: %d jobs (finalizers %v), %d pods, %d secrets",
				len(jobs), finalizers(jobs), len(pods), len(secrets))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func finalizers(jobs []batchv1.Job) [][]string {
	var out [][]string
	for _, j := range jobs {
		out = append(out, j.Finalizers)
	}
	return out
}
