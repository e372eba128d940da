package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// queue creates n queued runs on target local.
func queue(b *testing.B, s *Store, n int) {
	b.Helper()
	at := time.Unix(1700000000, 0).UTC()
	for i := range n {
		r := &job.Run{ID: fmt.Sprintf("q%05d", i), Compute: "local", Status: job.Queued, CreatedAt: at.Add(time.Duration(i)),
			Spec:    job.Spec{Type: "command", Command: "python train.py --lr 0.1", Inputs: map[string]job.Input{"lr": {Type: "number", Value: "0.1"}}},
			Attempt: 1}
		if err := s.RunWrites.CreateRun(b.Context(), r); err != nil {
			b.Fatal(err)
		}
	}
}

// What the controller's pass pays for its queue: every active run read and decoded, and one run
// read by id. go test -run '^$' -bench . ./internal/store/
func BenchmarkActiveRuns10k(b *testing.B) {
	s, err := Open(b.Context(), b.TempDir()+"/ws.db")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.wal.fsync = func(string) error { return nil } // setting up 10,000 runs is not what is measured
	queue(b, s, 10000)
	b.Run("Runs(Active)", func(b *testing.B) {
		for range b.N {
			if rs, err := s.Runs.List(b.Context(), RunFilter{Active: true}); err != nil || len(rs) != 10000 {
				b.Fatal(len(rs), err)
			}
		}
	})
	b.Run("Run", func(b *testing.B) {
		for i := range b.N {
			if _, err := s.Runs.Run(b.Context(), fmt.Sprintf("q%05d", i%10000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Runs(newest 50)", func(b *testing.B) {
		for range b.N {
			if _, err := s.Runs.List(b.Context(), RunFilter{Limit: 50}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// What the controller's pass pays for a long history: a few active runs among 10,000 ended ones.
func BenchmarkActiveAmongEnded10k(b *testing.B) {
	s, err := Open(b.Context(), b.TempDir()+"/ws.db")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.wal.fsync = func(string) error { return nil }
	queue(b, s, 10000)
	if _, err := s.db.ExecContext(b.Context(), `UPDATE runs SET status = 'Completed' WHERE id >= 'q00010'`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if rs, err := s.Runs.List(b.Context(), RunFilter{Active: true}); err != nil || len(rs) != 10 {
			b.Fatal(len(rs), err)
		}
	}
}
