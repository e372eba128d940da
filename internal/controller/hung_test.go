package controller

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// hungBackend is a backend whose every call blocks until the test answers it (or the call's
// context ends), as a host whose SSH port accepts and never answers does.
type hungBackend struct {
	entered chan string   // the run (or handle) of each call that started
	answer  chan error    // each call returns the next answer: nil is a success
	stop    chan struct{} // closed when the test ends: every call returns

	mu    sync.Mutex
	calls int
}

func newHung() *hungBackend {
	return &hungBackend{entered: make(chan string, 100), answer: make(chan error), stop: make(chan struct{})}
}

func (h *hungBackend) wait(ctx context.Context, what string) error {
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
	h.entered <- what
	select {
	case err := <-h.answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-h.stop:
		return context.Canceled
	}
}

// answerAll answers every call from now on with err, until the test ends.
func (h *hungBackend) answerAll(err error) {
	go func() {
		for {
			select {
			case <-h.entered:
			case <-h.stop:
				return
			}
			select {
			case h.answer <- err:
			case <-h.stop:
				return
			}
		}
	}()
}

func (h *hungBackend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	if err := h.wait(ctx, l.RunID); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"run": l.RunID})
}

func (h *hungBackend) Status(ctx context.Context, hd backend.Handle) (backend.Status, error) {
	return backend.Status{Alive: true}, h.wait(ctx, string(hd))
}

func (h *hungBackend) Cancel(ctx context.Context, hd backend.Handle) error {
	return h.wait(ctx, string(hd))
}

func (h *hungBackend) callCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// newHungFixture is the fixture with an ssh target "vm" served by a hungBackend.
func newHungFixture(t *testing.T) (*fixture, *hungBackend) {
	t.Helper()
	f := newFixture(t)
	h := newHung()
	f.c.Backends[compute.TypeSSH] = h
	props, _ := json.Marshal(compute.Stored{Spec: compute.Spec{Name: "vm", Type: compute.TypeSSH,
		SSH: &compute.SSHSpec{SSHHost: compute.SSHHost{Host: "10.0.0.9", AdminUsername: "u"}}}})
	if err := f.c.Store.Cluster.PutCompute(t.Context(), compute.Target{Name: "vm", Type: compute.TypeSSH, Properties: props,
		CreatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(h.stop); f.c.calls.wait() })
	return f, h
}

// pass runs one pass and waits for the calls of the local target only: the hung target's may
// go on.
func (f *fixture) passLocal(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.c.reconcile(t.Context()); err != nil {
			t.Errorf("reconcile: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // generous: a pass that waits for the hung target never ends
		t.Fatalf("a pass waited for the hung target")
	}
}

// waitHandled polls (with a deadline) until the run was handed to its backend.
func (f *fixture) waitHandled(t *testing.T, id string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); len(f.run(t, id).Handle) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("run %s was never handed to its backend (status %s)", id, f.run(t, id).Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A target that never answers delays nobody else: while its submit hangs, runs on local are
// submitted and a running run's status is asked; a timeout leaves its run Queued with the
// reason, the target backed off (no call) and shown unreachable, until the limit fails it.
func TestHungTargetDelaysNoOtherTarget(t *testing.T) {
	f, hung := newHungFixture(t)
	quiet := startRun(t, f, "quiet", job.Running)
	vmRun := f.create(t, job.Spec{Compute: "vm"})
	f.passLocal(t)
	if got := <-hung.entered; got != vmRun.ID {
		t.Fatalf("hung call for %s, want the vm's run", got)
	}
	f.fake.SetStatus(quiet, backend.Status{Final: &job.Result{State: job.Completed, Reason: "done"}})
	f.clock.Advance(20 * time.Second) // quiet is silent: its status is asked
	local := f.create(t, job.Spec{})
	f.passLocal(t)
	f.waitHandled(t, local.ID)
	for deadline := time.Now().Add(time.Minute); f.run(t, quiet).Status != job.Completed; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the status of a local run waited for the hung target: %s", f.run(t, quiet).Status)
		}
	}

	// The handshake times out: the run waits, with the reason, and the target is shown down.
	hung.answer <- timeoutErr{"connect to vm: ssh u@10.0.0.9:22: SSH handshake timed out after 15s"}
	f.c.calls.wait()
	want := "host vm unreachable since 10:00 UTC: connect to vm: ssh u@10.0.0.9:22: SSH handshake timed out after 15s"
	if got := f.run(t, vmRun.ID); got.Status != job.Queued || got.StatusReason != want {
		t.Errorf("vm's run: %s %q, want Queued %q", got.Status, got.StatusReason, want)
	}
	vm, _ := f.c.Store.Cluster.Compute(t.Context(), "vm")
	if st := f.c.TargetState(*vm); !strings.HasPrefix(st, "unreachable since 10:00 UTC: connect to vm") {
		t.Errorf("TargetState = %q", st)
	}
	// Backed off: a second run there waits with the reason, and no call is made.
	second := f.create(t, job.Spec{Compute: "vm"})
	f.reconcile(t)
	if got := f.run(t, second.ID); got.Status != job.Queued || got.StatusReason != want {
		t.Errorf("second vm run: %s %q", got.Status, got.StatusReason)
	}
	if n := hung.callCount(); n != 1 {
		t.Errorf("%d calls to the backed-off target, want 1", n)
	}
	// The limit passes (the probes keep timing out): both runs fail with the reason.
	f.clock.Advance(f.c.Settings.UnreachableLimit)
	hung.answerAll(timeoutErr{"connect to vm: ssh u@10.0.0.9:22: SSH handshake timed out after 15s"})
	f.reconcile(t)
	f.reconcile(t)
	for _, id := range []string{vmRun.ID, second.ID} {
		if got := f.run(t, id); got.Status != job.Failed || !strings.HasPrefix(got.StatusReason, want) {
			t.Errorf("after the limit: %s %q, want Failed %q", got.Status, got.StatusReason, want)
		}
	}
}

// A refusal (bad spec, refused authentication) fails the run at once, and the target is not
// held for it.
func TestRefusingTargetFailsAtOnce(t *testing.T) {
	f, hung := newHungFixture(t)
	r := f.create(t, job.Spec{Compute: "vm"})
	f.passLocal(t)
	<-hung.entered
	hung.answer <- errors.New("ssh u@10.0.0.9:22: authentication failed: the host refused the key")
	f.c.calls.wait()
	if got := f.run(t, r.ID); got.Status != job.Failed || !strings.Contains(got.StatusReason, "authentication failed") {
		t.Errorf("run: %s %q, want Failed at once", got.Status, got.StatusReason)
	}
	vm, _ := f.c.Store.Cluster.Compute(t.Context(), "vm")
	if st := f.c.TargetState(*vm); st != "" {
		t.Errorf("a refusing target shown as %q", st)
	}
}

// A target that comes back is used again: after its backoff one probe goes, and when it
// succeeds the waiting runs are submitted.
func TestUnreachableTargetComesBack(t *testing.T) {
	f, hung := newHungFixture(t)
	a := f.create(t, job.Spec{Compute: "vm"})
	b := f.create(t, job.Spec{Compute: "vm"})
	f.passLocal(t)
	for i := 0; i < 2; i++ {
		<-hung.entered
		hung.answer <- timeoutErr{"ssh: connect timed out"}
	}
	f.c.calls.wait()
	f.clock.Advance(healthBase)
	hung.answerAll(nil)
	f.reconcile(t) // the probe (the oldest run) succeeds
	f.reconcile(t) // the others follow
	for _, id := range []string{a.ID, b.ID} {
		if got := f.run(t, id); len(got.Handle) == 0 {
			t.Errorf("run %s not submitted after the target came back: %s %q", id, got.Status, got.StatusReason)
		}
	}
	vm, _ := f.c.Store.Cluster.Compute(t.Context(), "vm")
	if st := f.c.TargetState(*vm); st != "" {
		t.Errorf("target still shown %q", st)
	}
}
