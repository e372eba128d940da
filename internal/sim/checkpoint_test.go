package sim

import (
	"testing"
	"time"
)

func TestLostToPreemption(t *testing.T) {
	for _, tc := range []struct {
		did, every, lost, kept time.Duration
	}{
		{0, time.Minute, 0, 0},
		{10 * time.Minute, 0, 10 * time.Minute, 0},
		{150 * time.Second, time.Minute, 30 * time.Second, 2 * time.Minute},
		{30 * time.Second, time.Minute, 30 * time.Second, 0},
		{2 * time.Minute, time.Minute, 0, 2 * time.Minute},
	} {
		lost, kept := LostToPreemption(tc.did, tc.every)
		if lost != tc.lost || kept != tc.kept {
			t.Errorf("LostToPreemption(%s, %s) = %s, %s; want %s, %s", tc.did, tc.every, lost, kept, tc.lost, tc.kept)
		}
	}
}

// On the default day, checkpoints cut the work each preemption loses to under the interval,
// and the whole day's loss with them.
func TestCheckpointsCutWorkLost(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.PreemptPerHour = 0.5 // enough preemptions on one day to compare
	rs := CheckpointComparison(cfg, []time.Duration{5 * time.Minute})
	without, with := rs[0], rs[1]
	if without.PreemptionRequeues == 0 || with.PreemptionRequeues == 0 {
		t.Fatalf("no preemptions to compare: %+v", rs)
	}
	if per := with.WorkLost / time.Duration(with.PreemptionRequeues); per > 5*time.Minute {
		t.Errorf("with a checkpoint every 5m a preemption lost %s on average", per)
	}
	if with.WorkLost >= without.WorkLost {
		t.Errorf("work lost with checkpoints %s, without %s", with.WorkLost, without.WorkLost)
	}
	t.Log("\n" + CheckpointMarkdown(rs))
}
