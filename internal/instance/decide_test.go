package instance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC) // a Monday

func mins(n int) time.Duration { return time.Duration(n) * time.Minute }

// quiet is an agent's report of a node nobody uses.
func quiet() Signals { return Signals{ReportedAt: t0.Add(-10 * time.Second), CPUPercent: 0.4} }

func with(f func(*Signals)) Signals { s := quiet(); f(&s); return s }

func sched(t *testing.T, a Action, expr, zone string) Schedule {
	t.Helper()
	s, err := NewSchedule(a, expr, zone)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecideIdle(t *testing.T) {
	thirty := Settings{IdleMinutes: 30}
	for _, tc := range []struct {
		name string
		in   Input
		want Decision
	}{
		{"idle, not yet long enough",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(12)), Signals: quiet(), Settings: thirty},
			Decision{Idle: "idle for 12 of 30 minutes: no job, no SSH session, no Jupyter kernel, CPU 0.4 %", ActiveAt: t0.Add(-mins(12))}},
		{"idle long enough: shut down with the reason",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(31)), Signals: quiet(), Settings: thirty},
			Decision{Action: Stop, Reason: "idle shutdown: idle for 30 of 30 minutes: no job, no SSH session, no Jupyter kernel, CPU 0.4 %",
				Idle: "idle for 30 of 30 minutes: no job, no SSH session, no Jupyter kernel, CPU 0.4 %", ActiveAt: t0.Add(-mins(31))}},
		{"a job keeps it busy and restarts the idle time",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(40)), Signals: with(func(s *Signals) { s.Jobs = []string{"train_1"} }), Settings: thirty},
			Decision{Idle: "busy: job train_1", ActiveAt: t0}},
		{"an SSH session keeps it busy",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(40)), Signals: with(func(s *Signals) { s.SSHSessions = 2 }), Settings: thirty},
			Decision{Idle: "busy: 2 SSH sessions", ActiveAt: t0}},
		{"a Jupyter kernel keeps it busy",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(40)), Signals: with(func(s *Signals) { s.JupyterKernels = 1 }), Settings: thirty},
			Decision{Idle: "busy: 1 Jupyter kernel", ActiveAt: t0}},
		{"CPU above the threshold keeps it busy",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(40)), Signals: with(func(s *Signals) { s.CPUPercent = 37 }), Settings: thirty},
			Decision{Idle: "busy: CPU 37.0 %", ActiveAt: t0}},
		{"GPU use counts where there is a GPU",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(40)), Signals: with(func(s *Signals) { s.HasGPU, s.GPUPercent = true, 80 }), Settings: thirty},
			Decision{Idle: "busy: GPU 80.0 %", ActiveAt: t0}},
		{"an idle GPU is named among the quiet signals",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(5)), Signals: with(func(s *Signals) { s.HasGPU = true }), Settings: thirty},
			Decision{Idle: "idle for 5 of 30 minutes: no job, no SSH session, no Jupyter kernel, CPU 0.4 %, GPU 0.0 %", ActiveAt: t0.Add(-mins(5))}},
		{"no report from the node: not judged idle",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(40)), Settings: thirty},
			Decision{Idle: "busy: no activity report from its node yet", ActiveAt: t0}},
		{"a stale report: not judged idle",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(40)), Signals: with(func(s *Signals) { s.ReportedAt = t0.Add(-mins(10)) }), Settings: thirty},
			Decision{Idle: "busy: no activity report from its node since 2025-03-03T11:50:00Z", ActiveAt: t0}},
		{"idle shutdown off",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-mins(400)), Signals: quiet()},
			Decision{Idle: "idle for 400 minutes (idle shutdown is off): no job, no SSH session, no Jupyter kernel, CPU 0.4 %", ActiveAt: t0.Add(-mins(400))}},
		{"a stopped instance is not judged, its idle time starts again",
			Input{Now: t0, State: Stopped, ActiveAt: t0.Add(-mins(400)), Settings: thirty},
			Decision{Idle: "stopped", ActiveAt: t0}},
		{"a starting instance is not shut down while its script runs",
			Input{Now: t0, State: Starting, ActiveAt: t0.Add(-mins(40)), Signals: with(func(s *Signals) { s.Jobs = []string{"dev-startup-1"} }), Settings: thirty},
			Decision{Idle: "busy: job dev-startup-1", ActiveAt: t0}},
		{"the test knob: 30 minutes of one second each",
			Input{Now: t0, State: Running, ActiveAt: t0.Add(-31 * time.Second), Signals: quiet(), Settings: Settings{IdleMinutes: 30, Minute: time.Second}},
			Decision{Action: Stop, Reason: "idle shutdown: idle for 30 of 30 minutes: no job, no SSH session, no Jupyter kernel, CPU 0.4 %",
				Idle: "idle for 30 of 30 minutes: no job, no SSH session, no Jupyter kernel, CPU 0.4 %", ActiveAt: t0.Add(-31 * time.Second)}},
	} {
		tc.want.CheckedTo = tc.in.Now
		if diff := cmp.Diff(tc.want, Decide(tc.in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestDecideSchedules(t *testing.T) {
	stop18 := sched(t, Stop, "0 18 * * mon-fri", "Europe/Berlin") // 17:00 UTC in winter
	start8 := sched(t, Start, "0 8 * * mon-fri", "Europe/Berlin") // 07:00 UTC in winter
	at := func(h, m int) time.Time { return time.Date(2025, 3, 3, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name       string
		in         Input
		wantAction Action
		wantReason string
	}{
		{"a stop fires", Input{Now: at(17, 0), CheckedTo: at(16, 59), State: Running, Signals: quiet(), Schedules: []Schedule{stop18, start8}},
			Stop, `schedule "stop at 0 18 * * mon-fri (Europe/Berlin)" fired at 2025-03-03 18:00 CET`},
		{"a start fires", Input{Now: at(7, 1), CheckedTo: at(6, 59), State: Stopped, Schedules: []Schedule{stop18, start8}},
			Start, `schedule "start at 0 8 * * mon-fri (Europe/Berlin)" fired at 2025-03-03 08:00 CET`},
		{"a start of a running instance does nothing", Input{Now: at(7, 1), CheckedTo: at(6, 59), State: Running, Signals: with(func(s *Signals) { s.CPUPercent = 50 }), Schedules: []Schedule{start8}},
			None, ""},
		{"a stop with a job running is deferred, with the reason", Input{Now: at(17, 0), CheckedTo: at(16, 59), State: Running,
			Signals: with(func(s *Signals) { s.Jobs = []string{"train_1"} }), Schedules: []Schedule{stop18}},
			None, `schedule "stop at 0 18 * * mon-fri (Europe/Berlin)" fired at 2025-03-03 18:00 CET: stop deferred: job train_1 running`},
		{"nothing fires before it is due", Input{Now: at(16, 59), CheckedTo: at(16, 58), State: Running, Signals: with(func(s *Signals) { s.CPUPercent = 50 }), Schedules: []Schedule{stop18}},
			None, ""},
		{"never checked: nothing fires retroactively", Input{Now: at(17, 30), State: Running, Signals: with(func(s *Signals) { s.CPUPercent = 50 }), Schedules: []Schedule{stop18}},
			None, ""},
		{"the latest firing wins", Input{Now: at(18, 0), CheckedTo: at(6, 0), State: Running, Signals: quiet(), Schedules: []Schedule{stop18, start8}},
			Stop, `schedule "stop at 0 18 * * mon-fri (Europe/Berlin)" fired at 2025-03-03 18:00 CET`},
		{"a schedule wins over idleness", Input{Now: at(7, 0), CheckedTo: at(6, 59), State: Stopped, Schedules: []Schedule{start8}, Settings: Settings{IdleMinutes: 15}},
			Start, `schedule "start at 0 8 * * mon-fri (Europe/Berlin)" fired at 2025-03-03 08:00 CET`},
	} {
		d := Decide(tc.in)
		if d.Action != tc.wantAction || d.Reason != tc.wantReason {
			t.Errorf("%s: got %q %q, want %q %q", tc.name, d.Action, d.Reason, tc.wantAction, tc.wantReason)
		}
		if !d.CheckedTo.Equal(tc.in.Now) {
			t.Errorf("%s: CheckedTo %v, want now", tc.name, d.CheckedTo)
		}
	}
}

// A weekday 18:00 Berlin stop, checked every minute across the spring DST change: it fires once
// a day at 18:00 local time, which is 17:00 UTC before the change and 16:00 UTC after it.
func TestDecideScheduleClockAcrossDST(t *testing.T) {
	stop := sched(t, Stop, "0 18 * * *", "Europe/Berlin")
	var fired []string
	checked := time.Date(2025, 3, 28, 0, 0, 0, 0, time.UTC)
	for now := checked.Add(time.Minute); now.Before(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)); now = now.Add(time.Minute) {
		d := Decide(Input{Now: now, CheckedTo: checked, State: Running, Signals: Signals{ReportedAt: now, CPUPercent: 90}, Schedules: []Schedule{stop}})
		if d.Action == Stop {
			fired = append(fired, now.Format("01-02 15:04Z"))
		}
		checked = d.CheckedTo
	}
	want := []string{"03-28 17:00Z", "03-29 17:00Z", "03-30 16:00Z", "03-31 16:00Z"}
	if diff := cmp.Diff(want, fired); diff != "" {
		t.Errorf("firings (-want +got):\n%s", diff)
	}
}
