package store

import (
	"fmt"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

func TestAStatementInUseIsNotHandedOutAgain(t *testing.T) {
	sqliteOnly(t, "the SQLite connections' statement cache (pgx keeps its own)")
	s := open(t)
	for i := range 3 {
		createTestRun(t, s, fmt.Sprintf("r%d", i))
	}
	ctx := t.Context()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT id FROM runs WHERE id >= ? ORDER BY id`
	rows, err := tx.QueryContext(ctx, q, "r0")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		// The same text again on the same connection while the outer rows are read.
		var inner string
		if err := tx.QueryRowContext(ctx, q, "r2").Scan(&inner); err != nil || inner != "r2" {
			t.Fatalf("inner query = %q, %v", inner, err)
		}
		got = append(got, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[r0 r1 r2]" {
		t.Errorf("outer rows = %v, want [r0 r1 r2]", got)
	}
}

func TestACachedStatementRunsWithNewArguments(t *testing.T) {
	sqliteOnly(t, "the SQLite connections' statement cache (pgx keeps its own)")
	s := open(t)
	for i := range 3 {
		createTestRun(t, s, fmt.Sprintf("r%d", i))
	}
	for i := range 3 {
		for range 2 {
			r, err := s.Runs.Run(t.Context(), fmt.Sprintf("r%d", i))
			if err != nil || r.ID != fmt.Sprintf("r%d", i) || r.Status != job.Queued {
				t.Fatalf("Run(r%d) = %+v, %v", i, r, err)
			}
		}
	}
}
