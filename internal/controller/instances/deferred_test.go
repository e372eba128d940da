package instances

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
	"github.com/hangar-ml/hangar/internal/job"
)

// A scheduled stop that fires while a job runs on the instance is deferred, and compute show
// says so; the deferral survives a server restart; when the job ends the instance stops, its
// reason naming the schedule.
func TestInstanceScheduledStopWaitsForItsJob(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	s := compute.Spec{Name: "dev1", Type: compute.TypeInstance, Instance: &compute.InstanceSpec{Size: "local-quarter",
		Provider: compute.Provider{Type: compute.ProviderLocal}, Owner: "alice",
		Schedules: &compute.Schedules{ComputeStartStop: []compute.StartStopSchedule{
			{Action: "stop", State: "enabled", Cron: "0 18 * * *", Trigger: compute.ScheduleTrigger{Type: "cron", TimeZone: "UTC"}},
		}}}}
	if _, err := f.ctrl.Workspace.Computes.Create(ctx, s, false); err != nil {
		t.Fatal(err)
	}
	day := func(h, m int) time.Time { return time.Date(2025, 3, 4, h, m, 0, 0, time.UTC) }
	pass := func(at time.Time) (state, reason, idle string) {
		t.Helper()
		f.clock.Advance(at.Sub(f.clock.Now()))
		if err := f.m.Pass(ctx, Options{}); err != nil {
			t.Fatal(err)
		}
		in, err := f.m.Instance(ctx, "dev1")
		if err != nil {
			t.Fatal(err)
		}
		return in.State, in.Reason, in.Idle
	}
	pass(day(17, 0))
	r := f.create(t, job.Spec{Compute: "dev1"})
	fired := `schedule "stop at 0 18 * * * (UTC)" fired at 2025-03-04 18:00 UTC`
	state, _, idle := pass(day(18, 0))
	if state != string(instance.Starting) || !strings.Contains(idle, fired+": stop deferred: job "+r.ID+" running") {
		t.Fatalf("at 18:00 with a job: %s, idle %q", state, idle)
	}
	f.restart()
	if state, _, idle := pass(day(18, 30)); state != string(instance.Starting) || !strings.Contains(idle, "stop deferred: job "+r.ID+" running") {
		t.Fatalf("after a restart: %s, idle %q", state, idle)
	}
	if _, err := f.ctrl.Cancel(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	// Its supervisor says it stopped (the run core's loop is not running here).
	if _, err := f.ctrl.Report(ctx, r.ID, api.StatusReport{State: job.Canceled, Time: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := f.run(t, r.ID); !got.Status.Terminal() {
		t.Fatalf("run %s is %s", r.ID, got.Status)
	}
	if state, reason, _ := pass(day(19, 0)); state != string(instance.Stopping) || reason != fired+": stop deferred until its jobs ended" {
		t.Fatalf("once the job ended: %s %q", state, reason)
	}
	if asked, kicks := f.runs.calls(); len(asked) != 0 || kicks == 0 {
		t.Errorf("asked of the run core: %q, %d kicks; want no job canceled by the scheduled stop, and the run loop woken", asked, kicks)
	}
}
