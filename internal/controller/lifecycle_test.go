package controller

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/job"
)

func TestReportFollowsStateMachine(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.create(t, job.Spec{Name: "r"})

	// Forward skip: Queued → Running directly.
	startedAt := f.clock.Advance(2 * time.Second)
	if reply := f.report(t, r.ID, job.Running); reply.State != job.Running || reply.Cancel {
		t.Errorf("reply to Running = %+v", reply)
	}
	got := f.run(t, r.ID)
	if got.StartedAt == nil || !got.StartedAt.Equal(startedAt) {
		t.Errorf("StartedAt = %v, want %v", got.StartedAt, startedAt)
	}
	if !got.LastHeartbeat.Equal(startedAt) {
		t.Errorf("a report did not count as a heartbeat: LastHeartbeat %v", got.LastHeartbeat)
	}

	// A late report of an earlier phase changes nothing; a repeated one neither.
	f.clock.Advance(time.Second)
	if reply := f.report(t, r.ID, job.Preparing); reply.State != job.Running {
		t.Errorf("late Preparing: reply state %s, want Running", reply.State)
	}
	f.report(t, r.ID, job.Running)
	if got := f.run(t, r.ID); got.Status != job.Running || !got.StartedAt.Equal(startedAt) {
		t.Errorf("after late reports: status %s, started %v", got.Status, got.StartedAt)
	}

	// Warnings are kept once each, in the order first seen.
	for _, ws := range [][]string{{"w1"}, {"w1", "w2"}, {"w2", "w1"}} {
		if _, err := f.c.Report(ctx, r.ID, api.StatusReport{State: job.Running, Warnings: ws}); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"w1", "w2"}, f.run(t, r.ID).Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	endedAt := f.clock.Advance(10 * time.Second)
	exit := 0
	if _, err := f.c.Report(ctx, r.ID, api.StatusReport{State: job.Completed, ExitCode: &exit, Time: endedAt}); err != nil {
		t.Fatal(err)
	}
	got = f.run(t, r.ID)
	if got.Status != job.Completed || got.EndedAt == nil || !got.EndedAt.Equal(endedAt) || got.ExitCode == nil || *got.ExitCode != 0 {
		t.Errorf("completed run: status %s, ended %v, exit %v", got.Status, got.EndedAt, got.ExitCode)
	}

	// Leaving a terminal state is refused, and the reply says how the run ended.
	for _, s := range []job.State{job.Running, job.Failed, job.CancelRequested} {
		reply, err := f.c.Report(ctx, r.ID, api.StatusReport{State: s, Warnings: []string{"late"}})
		wantKind(t, err, Conflict, "run r is Completed: cannot become "+string(s))
		if reply == nil || reply.State != job.Completed || reply.Cancel {
			t.Errorf("reply to a late %s = %+v, want state Completed without cancel", s, reply)
		}
	}
	got = f.run(t, r.ID)
	if got.Status != job.Completed || *got.ExitCode != 0 || len(got.Warnings) != 2 {
		t.Errorf("a refused report changed the run: status %s, exit %d, warnings %q", got.Status, *got.ExitCode, got.Warnings)
	}
	want := []string{"->NotStarted", "NotStarted->Queued", "Queued->Running", "Running->Completed"}
	if diff := cmp.Diff(want, f.transitions(t, r.ID)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestReportUnknownRun(t *testing.T) {
	f := newFixture(t)
	_, err := f.c.Report(t.Context(), "ghost", api.StatusReport{State: job.Running})
	wantKind(t, err, NotFound)
	_, err = f.c.Heartbeat(t.Context(), "ghost")
	wantKind(t, err, NotFound)
}

func TestSubmit(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{Name: "r", Command: "python train.py"})
	f.reconcile(t)
	f.reconcile(t) // a submitted run is not submitted again
	ls := f.fake.Launches()
	if len(ls) != 1 {
		t.Fatalf("Submit called %d times, want 1", len(ls))
	}
	l := ls[0]
	if l.RunID != r.ID || l.Target.Name != "local" || l.Spec.Command != "python train.py" {
		t.Errorf("launch = %+v", l)
	}
	if cl, ok := f.c.Tokens.Verify(l.Token); !ok || cl.RunID != r.ID || cl.Attempt != 1 {
		t.Errorf("launch token verifies as %+v, %v", cl, ok)
	}
	got := f.run(t, r.ID)
	if string(got.Handle) == "" || !got.LastHeartbeat.Equal(f.clock.Now()) || got.Status != job.Queued {
		t.Errorf("after submit: handle %s, heartbeat %v, status %s", got.Handle, got.LastHeartbeat, got.Status)
	}
}

func TestSubmitFailureFailsRun(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{Name: "r"})
	f.fake.FailSubmit(errors.New("no space left"))
	f.reconcile(t)
	got := f.run(t, r.ID)
	if got.Status != job.Failed || got.StatusReason != "submit to local: no space left" || got.EndedAt == nil {
		t.Errorf("run after a failed submit: %s (%q), ended %v", got.Status, got.StatusReason, got.EndedAt)
	}
	f.reconcile(t)
	if n := len(f.fake.Submitted()); n != 1 {
		t.Errorf("Submit called %d times, want 1: a failed run is not retried", n)
	}
}

func TestCancelBeforeSubmit(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{Name: "r"})
	got, err := f.c.Cancel(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.CancelRequested {
		t.Errorf("Cancel returned status %s, want CancelRequested", got.Status)
	}
	f.reconcile(t)
	got = f.run(t, r.ID)
	if got.Status != job.Canceled || got.StatusReason != "canceled before it started" {
		t.Errorf("after reconcile: %s (%q), want Canceled", got.Status, got.StatusReason)
	}
	if s, c := f.fake.Submitted(), f.fake.Canceled(); len(s) != 0 || len(c) != 0 {
		t.Errorf("backend saw submits %v and cancels %v for a run canceled before it started", s, c)
	}
	_, err = f.c.Cancel(t.Context(), r.ID)
	wantKind(t, err, Conflict, "already ended: Canceled")
}

func TestCancelAfterSubmit(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.create(t, job.Spec{Name: "r"})
	f.reconcile(t)
	f.report(t, r.ID, job.Running)
	if _, err := f.c.Cancel(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		f.reconcile(t)
	}
	if diff := cmp.Diff([]string{r.ID}, f.fake.Canceled()); diff != "" {
		t.Errorf("backend cancels (-want +got):\n%s", diff)
	}
	if got := f.run(t, r.ID); !got.CancelSent || got.Status != job.CancelRequested {
		t.Errorf("after delivering the cancel: status %s, CancelSent %v", got.Status, got.CancelSent)
	}
	// The supervisor's phase reports are absorbed and told to cancel; heartbeats too.
	if reply := f.report(t, r.ID, job.Finalizing); reply.State != job.CancelRequested || !reply.Cancel {
		t.Errorf("reply to Finalizing during cancel = %+v", reply)
	}
	if reply, err := f.c.Heartbeat(ctx, r.ID); err != nil || !reply.Cancel {
		t.Errorf("heartbeat during cancel = %+v, %v", reply, err)
	}
	f.report(t, r.ID, job.Canceled)
	if got := f.run(t, r.ID); got.Status != job.Canceled {
		t.Errorf("status %s, want Canceled", got.Status)
	}
	want := []string{"->NotStarted", "NotStarted->Queued", "Queued->Running", "Running->CancelRequested", "CancelRequested->Canceled"}
	if diff := cmp.Diff(want, f.transitions(t, r.ID)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestCancelDeliveryRetried(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{Name: "r"})
	f.reconcile(t)
	if _, err := f.c.Cancel(t.Context(), r.ID); err != nil {
		t.Fatal(err)
	}
	f.fake.FailCancel(errors.New("host unreachable"))
	f.reconcile(t)
	if f.run(t, r.ID).CancelSent {
		t.Fatal("CancelSent set although the backend refused the cancel")
	}
	f.fake.FailCancel(nil)
	f.reconcile(t)
	f.reconcile(t)
	if diff := cmp.Diff([]string{r.ID, r.ID}, f.fake.Canceled()); diff != "" {
		t.Errorf("backend cancels: one refused, one delivered (-want +got):\n%s", diff)
	}
}

// startRun creates a run, submits it and reports phase; it returns the run's ID.
func startRun(t testing.TB, f *fixture, name string, phase job.State) string {
	t.Helper()
	r := f.create(t, job.Spec{Name: name})
	f.reconcile(t)
	f.report(t, r.ID, phase)
	return r.ID
}

func TestWatchSilentRuns(t *testing.T) {
	exit := 3
	tests := []struct {
		name       string
		status     backend.Status
		silent     time.Duration
		wantStatus job.State
		wantReason string
		wantExit   *int
		wantAsked  bool // whether the backend was asked
	}{
		{
			name: "recently heard from: backend not asked", status: backend.Status{Alive: false},
			silent: 14 * time.Second, wantStatus: job.Running,
		},
		{
			name:   "ended with a result file",
			status: backend.Status{Alive: false, Final: &job.Result{State: job.Failed, ExitCode: &exit, Reason: "the command exited with code 3"}},
			silent: 15 * time.Second, wantStatus: job.Failed, wantReason: "the command exited with code 3", wantExit: &exit, wantAsked: true,
		},
		{
			name:   "result wins over liveness",
			status: backend.Status{Alive: true, Final: &job.Result{State: job.Completed}},
			silent: 20 * time.Second, wantStatus: job.Completed, wantAsked: true,
		},
		{
			name:   "vanished without a result",
			status: backend.Status{Alive: false, Reason: "the supervisor process is gone"},
			silent: 20 * time.Second, wantStatus: job.Failed, wantReason: "lost: the supervisor process is gone", wantAsked: true,
		},
		{
			name: "alive and silent, not for long enough", status: backend.Status{Alive: true},
			silent: 59 * time.Second, wantStatus: job.Running, wantAsked: true,
		},
		{
			name: "alive and silent too long", status: backend.Status{Alive: true},
			silent: 60 * time.Second, wantStatus: job.NotResponding, wantReason: "no heartbeat for 1m0s", wantAsked: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id := startRun(t, f, "r", job.Running)
			f.fake.SetStatus(id, tt.status)
			f.clock.Advance(tt.silent)
			f.reconcile(t)
			got := f.run(t, id)
			if got.Status != tt.wantStatus || got.StatusReason != tt.wantReason {
				t.Errorf("status %s (%q), want %s (%q)", got.Status, got.StatusReason, tt.wantStatus, tt.wantReason)
			}
			if diff := cmp.Diff(tt.wantExit, got.ExitCode); diff != "" {
				t.Errorf("exit code (-want +got):\n%s", diff)
			}
			if asked := len(f.fake.StatusCalls()) > 0; asked != tt.wantAsked {
				t.Errorf("backend asked: %v, want %v", asked, tt.wantAsked)
			}
			if tt.wantStatus.Terminal() && (got.EndedAt == nil || !got.EndedAt.Equal(f.clock.Now())) {
				t.Errorf("EndedAt = %v, want %v", got.EndedAt, f.clock.Now())
			}
		})
	}
}

func TestNotRespondingRecoversPreviousPhase(t *testing.T) {
	for _, phase := range []job.State{job.Preparing, job.Running, job.Finalizing} {
		t.Run(string(phase), func(t *testing.T) {
			f := newFixture(t)
			id := startRun(t, f, "r", phase)
			f.clock.Advance(61 * time.Second)
			f.reconcile(t)
			f.clock.Advance(30 * time.Second)
			f.reconcile(t) // still silent: no second NotResponding event
			if got := f.run(t, id).Status; got != job.NotResponding {
				t.Fatalf("status %s, want NotResponding", got)
			}
			reply, err := f.c.Heartbeat(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if reply.State != phase || reply.Cancel {
				t.Errorf("heartbeat reply %+v, want state %s", reply, phase)
			}
			got := f.run(t, id)
			if got.Status != phase || got.StatusReason != "heartbeats resumed" || !got.LastHeartbeat.Equal(f.clock.Now()) {
				t.Errorf("after heartbeat: %s (%q), heartbeat %v", got.Status, got.StatusReason, got.LastHeartbeat)
			}
			want := []string{"->NotStarted", "NotStarted->Queued", "Queued->" + string(phase),
				string(phase) + "->NotResponding", "NotResponding->" + string(phase)}
			if diff := cmp.Diff(want, f.transitions(t, id)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// Heard from again: the next reconcile leaves it alone.
			f.reconcile(t)
			if got := f.run(t, id).Status; got != phase {
				t.Errorf("status %s after a reconcile, want %s", got, phase)
			}
		})
	}
}

func TestNotRespondingRunReportsNextPhase(t *testing.T) {
	f := newFixture(t)
	id := startRun(t, f, "r", job.Running)
	f.clock.Advance(2 * time.Minute)
	f.reconcile(t)
	f.report(t, id, job.Finalizing)
	if got := f.run(t, id).Status; got != job.Finalizing {
		t.Errorf("status %s, want Finalizing", got)
	}
}

func TestWatchWaitsAfterControllerStart(t *testing.T) {
	f := newFixture(t)
	id := startRun(t, f, "r", job.Running)
	f.fake.SetStatus(id, backend.Status{Alive: false})
	// The server was away for an hour; a new controller starts now.
	f.clock.Advance(time.Hour)
	c2 := New(f.c.Config)
	if err := c2.reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	c2.calls.wait()
	if got := f.run(t, id).Status; got != job.Running || len(f.fake.StatusCalls()) != 0 {
		t.Fatalf("a just-started controller judged a silent run: status %s, status calls %v", got, f.fake.StatusCalls())
	}
	// Once it has been up for StaleAfter without a word from the run, the run is checked.
	f.clock.Advance(15 * time.Second)
	if err := c2.reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	c2.calls.wait()
	if got := f.run(t, id); got.Status != job.Failed {
		t.Errorf("status %s (%q), want Failed", got.Status, got.StatusReason)
	}
}

func TestRunSpec(t *testing.T) {
	f := newFixture(t)
	f.c.Settings.CancelGrace = 7 * time.Second
	f.c.Settings.Heartbeat = 2 * time.Second
	r := f.create(t, job.Spec{Name: "r", Command: "make train"})
	spec, err := f.c.RunSpec(t.Context(), r.ID, "", "http://ws")
	if err != nil {
		t.Fatal(err)
	}
	// The fields this test is about (RunSpec grows; other fields have their own tests).
	type view struct {
		RunID, URL       string
		Spec             job.Spec
		Grace, Heartbeat int
	}
	want := view{"r", "http://ws", f.run(t, r.ID).Spec, 7, 2}
	got := view{spec.RunID, spec.WorkspaceURL, spec.Spec, spec.CancelGraceSeconds, spec.HeartbeatSeconds}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunSpec (-want +got):\n%s", diff)
	}
	f.report(t, r.ID, job.Failed)
	_, err = f.c.RunSpec(t.Context(), r.ID, "", "http://ws")
	wantKind(t, err, Conflict, "already ended")
	_, err = f.c.RunSpec(t.Context(), "ghost", "", "http://ws")
	wantKind(t, err, NotFound)
}

func TestCancelWhileSubmitting(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{Name: "r"})
	f.fake.OnSubmit(func(l backend.Launch) {
		if _, err := f.c.Cancel(t.Context(), l.RunID); err != nil {
			t.Errorf("Cancel during submit: %v", err)
		}
	})
	f.reconcile(t)
	f.fake.OnSubmit(nil)
	if got := f.fake.Canceled(); len(got) == 0 || got[0] != r.ID {
		t.Fatalf("a run canceled while it was being submitted was not canceled with the backend: cancels %v", got)
	}
	f.reconcile(t)
	got := f.run(t, r.ID)
	if got.Status != job.CancelRequested || len(got.Handle) == 0 || !got.CancelSent {
		t.Errorf("after reconcile: status %s, handle %s, CancelSent %v", got.Status, got.Handle, got.CancelSent)
	}
}

func TestCreateSameNameConcurrently(t *testing.T) {
	f := newFixture(t)
	for round := range 20 {
		name := fmt.Sprintf("run-%d", round)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range errs {
			wg.Go(func() {
				<-start
				_, errs[i] = f.c.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: name, Command: "x"}})
			})
		}
		close(start)
		wg.Wait()
		created := 0
		for _, err := range errs {
			if err == nil {
				created++
				continue
			}
			wantKind(t, err, Conflict, "already exists")
		}
		if created != 1 {
			t.Errorf("%s: %d creates succeeded, want 1", name, created)
		}
	}
}

// A run that ended Canceled before its backend took the cancel (a Kubernetes replica: its pod
// stopped, then scaling the Deployment down failed) is sent the cancel again, also after the
// loop's restart, until the backend takes it; after owedCancelWindow the loop gives up.
func TestCancelOwedToAnEndedRunIsSentAgain(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{Name: "r"})
	f.reconcile(t)
	f.report(t, r.ID, job.Running)
	if _, err := f.c.Cancel(t.Context(), r.ID); err != nil {
		t.Fatal(err)
	}
	f.fake.FailCancel(errors.New("scale down: context deadline exceeded"))
	f.reconcile(t)
	f.report(t, r.ID, job.Canceled) // the supervisor stopped: the run is final, the cancel not taken
	if got := f.run(t, r.ID); got.Status != job.Canceled || got.CancelSent {
		t.Fatalf("status %s, CancelSent %v; want Canceled, not sent", got.Status, got.CancelSent)
	}
	f.reconcile(t)
	f.reconcile(t)
	if n := len(f.fake.Canceled()); n < 3 {
		t.Fatalf("backend cancels %d, want the refused one sent again after the run ended", n)
	}

	// A new view (the server restarted: nothing in memory) finds the owed cancel on its first, full pass.
	f.c.view = view{runs: map[string]runView{}, placed: map[string]*job.Run{}, owed: map[string]runView{}}
	f.fake.FailCancel(nil)
	before := len(f.fake.Canceled())
	f.reconcile(t)
	f.reconcile(t)
	if got := f.run(t, r.ID); !got.CancelSent || got.Status != job.Canceled {
		t.Errorf("after the backend took it: status %s, CancelSent %v", got.Status, got.CancelSent)
	}
	f.reconcile(t)
	if n := len(f.fake.Canceled()) - before; n != 1 {
		t.Errorf("cancels after the restart %d, want 1 (none once delivered)", n)
	}
}

func TestPickOwed(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	owed := func(id string, ago time.Duration) runView {
		return runView{ID: id, Compute: "kube", Status: job.Canceled, Handled: true, Ended: t0.Add(-ago)}
	}
	tests := []struct {
		name string
		owed []runView
		busy []string
		want looks
	}{
		{"none", nil, nil, looks{}},
		{"within the window: sent, the earliest end first",
			[]runView{owed("b", time.Minute), owed("a", 10*time.Minute)}, nil, looks{Cancel: []string{"a", "b"}}},
		{"a call under way: left alone", []runView{owed("a", time.Minute)}, []string{"a"}, looks{}},
		{"out of the window: given up",
			[]runView{owed("old", owedCancelWindow+time.Second), owed("new", time.Second)}, nil,
			looks{Cancel: []string{"new"}, GiveUp: []string{"old"}}},
		{"its target deleted: given up",
			[]runView{{ID: "gone", Compute: "deleted", Status: job.Canceled, Handled: true, Ended: t0}}, nil,
			looks{GiveUp: []string{"gone"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := passInput{Now: t0, Owed: map[string]runView{}, Busy: map[string]bool{},
				Targets: map[string]targetPass{"kube": {Name: "kube"}}}
			for _, v := range tt.owed {
				in.Owed[v.ID] = v
			}
			for _, id := range tt.busy {
				in.Busy[id] = true
			}
			if diff := cmp.Diff(tt.want, pass(in)); diff != "" {
				t.Errorf("looks (-want +got):\n%s", diff)
			}
		})
	}
}
