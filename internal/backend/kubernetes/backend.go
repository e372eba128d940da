package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// Backend runs runs as Jobs on attached Kubernetes clusters. It keeps one API client per target;
// everything else it knows of a run is in the cluster, found from the run's handle alone.
type Backend struct {
	// ServerURL is where supervisors reach the server, unless the target sets server_url.
	ServerURL func() string
	// ServerCA is the PEM of an https server's certificate, handed to the pods' supervisors in
	// their config Secret: the only one they trust.
	ServerCA []byte
	// Targets returns a target's spec with its secrets unsealed.
	Targets func(ctx context.Context, name string) (*compute.Stored, error)
	Log     *slog.Logger
	// Workspace is this workspace's id, on every object it creates: a Job of the same name made
	// by another workspace (run ids repeat) is never taken for this run's.
	Workspace string
	// Now stamps results Kubernetes gives no time for (default time.Now).
	Now func() time.Time
	// LeftoverAfter is how long a canceled run's Job whose pods are gone keeps Hangar's
	// finalizer when Status does not release it (nobody asks: the run ended otherwise);
	// default a minute.
	LeftoverAfter time.Duration
	// ClaimKey signs the claim tokens of the pods of online deployments' Deployments
	// (deployment.go); without it (tests) a replica run of a scoring script is a Job like any
	// other run, and one of an image that serves by its own entrypoint is refused.
	ClaimKey []byte

	clients clients
	notify  atomic.Pointer[func(runID string)]
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.Pender      = (*Backend)(nil)
	_ backend.Notifier    = (*Backend)(nil)
	_ backend.Attacher    = (*Backend)(nil)
	_ backend.SpecChecker = (*Backend)(nil)
)

// handle is the serialisable reference to a run's Job: a restarted server re-attaches to it by
// name and checks its UID (a Job of the same name created later is another run's).
type handle struct {
	Target    string `json:"target"`
	Namespace string `json:"namespace"`
	Job       string `json:"job,omitempty"`
	// Deployment and Run are set instead of Job for a replica run realised by a Deployment
	// (deployment.go); UID is then the Deployment's.
	Deployment string `json:"deployment,omitempty"`
	Run        string `json:"run,omitempty"`
	UID        string `json:"uid"`
}

// Submit creates the run's Job, then its Secret (the supervisor's config) and, for several
// nodes, its headless Service, both owned by the Job. Called again for the same run and attempt
// it returns the Job that exists and creates what is missing.
func (b *Backend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	c, st, err := b.target(ctx, l.Target.Name)
	if err != nil {
		return nil, err
	}
	if b.byDeployment(l) {
		return b.submitReplica(ctx, c, l, b.runOf(l, st))
	}
	objs, err := Build(b.runOf(l, st))
	if err != nil {
		return nil, err
	}
	jobs := c.cs.BatchV1().Jobs(objs.Job.Namespace)
	j, err := jobs.Create(ctx, objs.Job, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		j, err = jobs.Get(ctx, objs.Job.Name, metav1.GetOptions{})
		if err == nil && (j.Annotations[AnnotationRunID] != l.RunID || j.Labels[LabelWorkspace] != b.Workspace) {
			return nil, fmt.Errorf("a Job named %s in namespace %s belongs to run %q of workspace %q, not to run %s of this workspace (%q)",
				j.Name, j.Namespace, j.Annotations[AnnotationRunID], j.Labels[LabelWorkspace], l.RunID, b.Workspace)
		}
		if err == nil && j.DeletionTimestamp != nil {
			return nil, fmt.Errorf("the Job %s of run %s is being deleted", j.Name, l.RunID)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create the Job of run %s on %s: %w", l.RunID, l.Target.Name, err)
	}
	objs.SetOwner(j)
	if _, err := c.cs.CoreV1().Secrets(j.Namespace).Create(ctx, objs.Secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create the Secret of run %s: %w", l.RunID, err)
	}
	if objs.Service != nil {
		if _, err := c.cs.CoreV1().Services(j.Namespace).Create(ctx, objs.Service, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create the Service of run %s: %w", l.RunID, err)
		}
	}
	c.watch(j.Namespace) // from now on, a change of the run's Job or pods is told (Notify)
	b.Log.Info("submitted to kubernetes", "run", l.RunID, "target", l.Target.Name, "namespace", j.Namespace, "job", j.Name)
	return json.Marshal(handle{Target: l.Target.Name, Namespace: j.Namespace, Job: j.Name, UID: string(j.UID)})
}

func (b *Backend) runOf(l backend.Launch, st *compute.Stored) Run {
	url := b.ServerURL()
	if st.Spec.Kubernetes.ServerURL != "" {
		url = st.Spec.Kubernetes.ServerURL
	}
	return Run{RunID: l.RunID, Token: l.Token, Attempt: l.Attempt, Spec: l.Spec, Target: *st.Spec.Kubernetes, ServerURL: url,
		ServerCA: string(b.ServerCA), Workspace: b.Workspace}
}

// Notify makes the namespaces' watches tell fn about this workspace's runs whose Job or pods
// changed (backend.Notifier): the controller then asks Pending and a canceled run's Status only
// then, not every pass.
func (b *Backend) Notify(fn func(runID string)) { b.notify.Store(&fn) }

func (b *Backend) tell(runID string) {
	if fn := b.notify.Load(); fn != nil {
		(*fn)(runID)
	}
}

// Status judges the run's Job and pods. A Job deleted by a cancel is kept by Hangar's finalizer
// until its pods are gone; Status then reports the cancel and lets the Job go.
func (b *Backend) Status(ctx context.Context, h backend.Handle) (backend.Status, error) {
	v, err := b.judge(ctx, h, true)
	return v.Status, err
}

// Pending reports whether the run still waits for Kubernetes, in Kubernetes' words.
// It never lets a canceled run's Job go: only Status, which reports the cancel, may (else the
// cancel's end would be lost with the Job, and Status would find nothing).
func (b *Backend) Pending(ctx context.Context, h backend.Handle) (string, bool, error) {
	v, err := b.judge(ctx, h, false)
	return v.Status.Reason, v.Pending, err
}

// judge reads and judges the run's Job and pods; with release, it removes the finalizer of a
// canceled run's Job whose end it now reports.
func (b *Backend) judge(ctx context.Context, hb backend.Handle, release bool) (Verdict, error) {
	hd, c, err := b.resolve(ctx, hb)
	if err != nil {
		return Verdict{}, err
	}
	if hd.Deployment != "" {
		return c.judgeReplica(ctx, hd)
	}
	j, pods, err := c.observe(ctx, hd)
	if err != nil {
		return Verdict{}, err
	}
	v := Judge(j, pods, b.now())
	if q := kueueQueue(j); q != "" && v.Pending {
		v.Status.Reason = c.kueueReason(ctx, j, q) // Kueue's view: the queue position, its message
	}
	if v.Release && release {
		// The run is not reported Canceled before its Job can go: asked again, Status retries.
		if err := c.release(ctx, j); err != nil {
			return Verdict{}, fmt.Errorf("remove the finalizer %s of the canceled run's Job %s: %w", FinalizerResult, hd.Job, err)
		}
	}
	return v, nil
}

// Cancel deletes the run's Job with foreground propagation: Kubernetes stops its pods (SIGTERM:
// the supervisor stops the command, still ships outputs and logs, and reports), and a finalizer
// keeps the Job, marked canceled, until Status has seen the pods gone. A Job that ended or is
// gone needs nothing.
func (b *Backend) Cancel(ctx context.Context, hb backend.Handle) error {
	hd, c, err := b.resolve(ctx, hb)
	if err != nil {
		return err
	}
	if hd.Deployment != "" {
		return b.cancelReplica(ctx, c, hd)
	}
	// The Job controller writes the Job's status while the run ends, so a conflict is retried on
	// the Job as it is now (which may by then have ended and need nothing).
	done := false
	err = onConflict(func() error {
		j, err := c.job(ctx, hd)
		if err != nil || j == nil || j.DeletionTimestamp != nil ||
			condition(j, batchv1.JobComplete) != nil || condition(j, batchv1.JobFailed) != nil {
			done = true
			return err
		}
		patch := map[string]any{"metadata": map[string]any{
			"resourceVersion": j.ResourceVersion,
			"annotations":     map[string]string{AnnotationCanceled: b.now().UTC().Format(time.RFC3339)},
			"finalizers":      append(slices.Clone(j.Finalizers), FinalizerResult),
		}}
		data, _ := json.Marshal(patch)
		_, err = c.cs.BatchV1().Jobs(hd.Namespace).Patch(ctx, hd.Job, types.MergePatchType, data, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			done = true
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("mark the Job %s canceled: %w", hd.Job, err)
	}
	if done {
		return nil
	}
	fg := metav1.DeletePropagationForeground
	uid := types.UID(hd.UID)
	err = c.cs.BatchV1().Jobs(hd.Namespace).Delete(ctx, hd.Job, metav1.DeleteOptions{PropagationPolicy: &fg,
		Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the Job %s: %w", hd.Job, err)
	}
	b.Log.Info("canceled on kubernetes", "job", hd.Job, "namespace", hd.Namespace)
	return nil
}

// CheckSpec refuses, when a job is created, what the target's objects cannot be built for (an
// unknown instance type, no image).
func (b *Backend) CheckSpec(_ context.Context, t compute.Target, sp job.Spec) error {
	st, err := compute.Load(t)
	if err != nil || st.Spec.Kubernetes == nil {
		return err
	}
	r := Run{RunID: "check", Attempt: 1, Spec: sp, Target: *st.Spec.Kubernetes}
	if sp.Serve != nil && len(b.ClaimKey) > 0 {
		_, err = BuildServing(r)
		return err
	}
	_, err = Build(r)
	return err
}

// resolve decodes a handle and finds its target's client.
func (b *Backend) resolve(ctx context.Context, hb backend.Handle) (handle, *client, error) {
	var hd handle
	if err := backend.DecodeHandle(hb, &hd); err != nil {
		return hd, nil, err
	}
	replica := hd.Deployment != "" && hd.Run != "" && hd.Job == ""
	if hd.Target == "" || hd.Namespace == "" || (hd.Job == "" && !replica) || hd.UID == "" {
		return hd, nil, fmt.Errorf("%w: kubernetes handle %s lacks its target, namespace, Job (or Deployment and run) or UID", backend.ErrBadHandle, hb)
	}
	c, _, err := b.target(ctx, hd.Target)
	return hd, c, err
}

func (b *Backend) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}
