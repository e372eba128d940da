package backendtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/hangar-ml/hangar/internal/backend"
)

// Fake is an in-memory backend: Submit hands out a handle naming the run, Status returns what
// the test set with SetStatus (alive and silent by default), and every call is recorded.
// It is safe for concurrent use.
type Fake struct {
	mu        sync.Mutex
	launches  []backend.Launch
	statusFor []string
	cancels   []string
	status    map[string]backend.Status
	submitErr error
	onSubmit  func(backend.Launch)
	statusErr error
	cancelErr error
}

// New returns a Fake with no runs.
func New() *Fake { return &Fake{status: map[string]backend.Status{}} }

var _ backend.Backend = (*Fake)(nil)

// fakeHandle is the Fake's serialisable handle.
type fakeHandle struct {
	RunID string `json:"run_id"`
}

// HandleFor is the handle Submit returns for a run.
func HandleFor(runID string) backend.Handle {
	b, _ := json.Marshal(fakeHandle{RunID: runID})
	return b
}

func decode(h backend.Handle) (string, error) {
	var fh fakeHandle
	if err := backend.DecodeHandle(h, &fh); err != nil {
		return "", err
	}
	if fh.RunID == "" {
		return "", fmt.Errorf("%w: not a fake backend handle: %q", backend.ErrBadHandle, h)
	}
	return fh.RunID, nil
}

// Submit records the launch and returns the run's handle (the same one every time).
func (f *Fake) Submit(_ context.Context, l backend.Launch) (backend.Handle, error) {
	f.mu.Lock()
	f.launches = append(f.launches, l)
	err, hook := f.submitErr, f.onSubmit
	f.mu.Unlock()
	if hook != nil {
		hook(l)
	}
	if err != nil {
		return nil, err
	}
	return HandleFor(l.RunID), nil
}

// OnSubmit sets a function called during every Submit, after it is recorded (to act while a
// submit is in flight); nil removes it.
func (f *Fake) OnSubmit(fn func(backend.Launch)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onSubmit = fn
}

// Status returns the status set for the handle's run; an alive run without result by default.
func (f *Fake) Status(_ context.Context, h backend.Handle) (backend.Status, error) {
	id, err := decode(h)
	if err != nil {
		return backend.Status{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusFor = append(f.statusFor, id)
	if f.statusErr != nil {
		return backend.Status{}, f.statusErr
	}
	st, ok := f.status[id]
	if !ok {
		return backend.Status{Alive: true}, nil
	}
	return st, nil
}

// Cancel records the cancel.
func (f *Fake) Cancel(_ context.Context, h backend.Handle) error {
	id, err := decode(h)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels = append(f.cancels, id)
	return f.cancelErr
}

// SetStatus sets what Status answers for a run from now on.
func (f *Fake) SetStatus(runID string, st backend.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status[runID] = st
}

// FailSubmit makes Submit fail with err (nil: succeed again); the call is still recorded.
func (f *Fake) FailSubmit(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitErr = err
}

// FailStatus makes Status fail with err (nil: succeed again).
func (f *Fake) FailStatus(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusErr = err
}

// FailCancel makes Cancel fail with err (nil: succeed again); the call is still recorded.
func (f *Fake) FailCancel(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelErr = err
}

// Launches returns every Submit call's launch, in order.
func (f *Fake) Launches() []backend.Launch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.launches)
}

// Submitted returns the run IDs of every Submit call, in order.
func (f *Fake) Submitted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, l := range f.launches {
		ids = append(ids, l.RunID)
	}
	return ids
}

// StatusCalls returns the run IDs of every Status call, in order.
func (f *Fake) StatusCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.statusFor)
}

// Canceled returns the run IDs of every Cancel call, in order.
func (f *Fake) Canceled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.cancels)
}
