package slurm

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/slurm"
)

// merge decides a run's status from Slurm's record and the supervisor's result file.
func TestMerge(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	one := 1
	done := &job.Result{State: job.Completed, Time: now.Add(-time.Minute)}
	canceled := &job.Result{State: job.Canceled, ExitCode: &one, Reason: "canceled by request", Time: now.Add(-time.Second)}
	cases := []struct {
		name       string
		j          slurm.Job
		known      bool
		res        *job.Result
		alive      bool
		state      job.State
		reasonHas  string
		resultTime time.Time
	}{
		{name: "pending", j: slurm.Job{ID: "5", State: "PENDING", Reason: "Resources"}, known: true, alive: true, reasonHas: "PENDING: Resources"},
		{name: "running", j: slurm.Job{ID: "5", State: "RUNNING"}, known: true, alive: true, reasonHas: "RUNNING"},
		{name: "completing after a kill waits for the supervisor", j: slurm.Job{ID: "5", State: "COMPLETING", Reason: "TimeLimit"}, known: true, alive: true},
		{name: "the supervisor's result when it ended by itself", j: slurm.Job{ID: "5", State: "COMPLETED"}, known: true, res: done, state: job.Completed, resultTime: done.Time},
		{name: "no result after a normal end", j: slurm.Job{ID: "5", State: "FAILED", Exit: &slurm.Exit{Code: 1}}, known: true, state: job.Failed, reasonHas: "the supervisor ended without a result (Slurm job 5 FAILED: exit code 1)"},
		{name: "timeout without a report", j: slurm.Job{ID: "5", State: "TIMEOUT", Exit: &slurm.Exit{Signal: 9}}, known: true, state: job.Canceled, reasonHas: "TIMEOUT: Slurm's time limit", resultTime: now},
		{name: "killed after the supervisor wrote a result it could not report", j: slurm.Job{ID: "5", State: "NODE_FAIL"}, known: true, res: canceled,
			state: job.Failed, reasonHas: "NODE_FAIL: a node of the job failed (Slurm job 5); the supervisor had ended it as Canceled (canceled by request)", resultTime: canceled.Time},
		{name: "forgotten by Slurm, with a result", res: done, state: job.Completed, resultTime: done.Time},
		{name: "forgotten by Slurm, without", reasonHas: "Slurm no longer knows job 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := merge("5", c.j, c.known || c.j.ID != "", c.res, now)
			if st.Alive != c.alive {
				t.Errorf("alive = %v, want %v (%+v)", st.Alive, c.alive, st)
			}
			if c.state == "" {
				if st.Final != nil {
					t.Errorf("final %+v, want none", st.Final)
				}
				if !strings.Contains(st.Reason, c.reasonHas) {
					t.Errorf("reason %q, want it to contain %q", st.Reason, c.reasonHas)
				}
				return
			}
			if st.Final == nil || st.Final.State != c.state || !strings.Contains(st.Final.Reason, c.reasonHas) {
				t.Fatalf("final %+v, want %s with %q", st.Final, c.state, c.reasonHas)
			}
			if !c.resultTime.IsZero() && !st.Final.Time.Equal(c.resultTime) {
				t.Errorf("time %s, want %s", st.Final.Time, c.resultTime)
			}
		})
	}
}
