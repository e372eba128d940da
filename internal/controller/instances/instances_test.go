package instances

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
)

// The instance loop on a fake clock: a weekday 18:00 Berlin stop fires at 17:00 UTC in winter
// (the instance stops, its reason naming the schedule) and the 08:00 start the next morning.
func TestInstanceSchedulesFireOnTheClock(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	s := compute.Spec{Name: "dev1", Type: compute.TypeInstance, Instance: &compute.InstanceSpec{Size: "local-quarter",
		Provider: compute.Provider{Type: compute.ProviderLocal}, Owner: "alice",
		Schedules: &compute.Schedules{ComputeStartStop: []compute.StartStopSchedule{
			{Action: "stop", State: "enabled", Cron: "0 18 * * mon-fri", Trigger: compute.ScheduleTrigger{Type: "cron", TimeZone: "W. Europe Standard Time"}},
			{Action: "start", State: "enabled", Cron: "0 8 * * mon-fri", Trigger: compute.ScheduleTrigger{Type: "cron", TimeZone: "W. Europe Standard Time"}},
			{Action: "start", State: "disabled", Cron: "* * * * *"},
		}}}}
	if _, err := f.ctrl.Workspace.Computes.Create(ctx, s, false); err != nil {
		t.Fatal(err)
	}
	pass := func(at time.Time) *instanceView {
		t.Helper()
		f.clock.Advance(at.Sub(f.clock.Now()))
		if err := f.m.Pass(ctx, Options{}); err != nil {
			t.Fatal(err)
		}
		in, err := f.m.Instance(ctx, "dev1")
		if err != nil {
			t.Fatal(err)
		}
		return &instanceView{State: in.State, Reason: in.Reason}
	}
	day := func(d, h, m int) time.Time { return time.Date(2025, 3, d, h, m, 0, 0, time.UTC) } // 2025-03-04 is a Tuesday
	if got := pass(day(4, 10, 0)); got.State != string(instance.Starting) || got.Reason != "created by alice" {
		t.Fatalf("a new instance: %+v", got)
	}
	if got := pass(day(4, 16, 59)); got.State != string(instance.Starting) {
		t.Fatalf("before 18:00 Berlin: %+v", got)
	}
	got := pass(day(4, 17, 0))
	want := `schedule "stop at 0 18 * * mon-fri (Europe/Berlin)" fired at 2025-03-04 18:00 CET`
	if got.State != string(instance.Stopping) || got.Reason != want {
		t.Fatalf("at 18:00 Berlin: %+v, want Stopping %q", got, want)
	}
	if got := pass(day(4, 17, 1)); got.State != string(instance.Stopped) || got.Reason != want {
		t.Fatalf("no node left: %+v, want Stopped with the schedule's reason", got)
	}
	if got := pass(day(5, 6, 59)); got.State != string(instance.Stopped) {
		t.Fatalf("before 08:00 Berlin: %+v", got)
	}
	got = pass(day(5, 7, 0))
	if got.State != string(instance.Starting) || !strings.Contains(got.Reason, `"start at 0 8 * * mon-fri (Europe/Berlin)" fired at 2025-03-05 08:00 CET`) {
		t.Fatalf("at 08:00 Berlin: %+v", got)
	}
	if err := f.m.Admit(ctx, compute.Target{Name: "dev1"}); err != nil {
		t.Errorf("a starting instance refuses jobs: %v", err)
	}
	if _, err := f.m.Action(ctx, "dev1", "stop", false); err != nil {
		t.Fatal(err)
	}
	pass(day(5, 7, 1))
	err := f.m.Admit(ctx, compute.Target{Name: "dev1"})
	if err == nil || !strings.Contains(err.Error(), "is Stopped (stopped by the user); start it with hangar compute start dev1") {
		t.Errorf("a stopped instance admits a job: %v", err)
	}
	if err := f.ctrl.Workspace.Computes.Delete(ctx, "dev1", false); err != nil {
		t.Fatalf("delete a stopped instance: %v", err)
	}
	if rows, _ := f.ctrl.Store.Instances.List(ctx); len(rows) != 0 {
		t.Errorf("instance rows left after delete: %+v", rows)
	}
}

type instanceView struct{ State, Reason string }
