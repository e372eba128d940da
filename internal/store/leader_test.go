package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/store/pgtest"
)

// openTwice opens one PostgreSQL database twice, as two servers of a workspace would.
func openTwice(t *testing.T) (*Store, *Store) {
	t.Helper()
	dsn := pgtest.NewDatabase(t) // the leader lock is PostgreSQL's: on either run of the package
	var out [2]*Store
	for i := range out {
		s, err := Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out[0], out[1]
}

func TestLeaderLockHasOneHolder(t *testing.T) {
	a, b := openTwice(t)
	la, err := a.TryLead(t.Context())
	if err != nil || la == nil {
		t.Fatalf("the first server's try: %v, %v", la, err)
	}
	if lb, err := b.TryLead(t.Context()); err != nil || lb != nil {
		t.Fatalf("the second server took the lead while the first holds it: %v, %v", lb, err)
	}
	if err := la.Check(t.Context()); err != nil {
		t.Fatalf("the holder's check: %v", err)
	}
	la.Release()
	lb, err := b.TryLead(t.Context())
	if err != nil || lb == nil {
		t.Fatalf("after the release the second server's try: %v, %v", lb, err)
	}
	defer lb.Release()
	if la, err := a.TryLead(t.Context()); err != nil || la != nil {
		t.Fatalf("the first server took the lead back while the second holds it: %v, %v", la, err)
	}
}

// The lock dies with its database session (a killed server's connection): the holder's check
// says so, and another server takes the lead.
func TestLeaderLockGoesWithItsSession(t *testing.T) {
	a, b := openTwice(t)
	la, err := a.TryLead(t.Context())
	if err != nil || la == nil {
		t.Fatalf("try: %v, %v", la, err)
	}
	if _, err := b.db.ExecContext(t.Context(),
		// This database's leader only: the e2e suite's servers hold the same key in theirs.
		`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = ?
		 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, int64(leaderLockKey&0xffffffff)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for la.Check(t.Context()) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the holder's check still passes after its session ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The holder's check fails as soon as its backend is told to end; the backend releases the
	// lock when it has ended, a moment later (under load, after the first try).
	var lb *Leadership
	for lb == nil {
		if lb, err = b.TryLead(t.Context()); err != nil {
			t.Fatalf("another server's try after the holder's session ended: %v", err)
		}
		if lb == nil && time.Now().After(deadline) {
			t.Fatal("another server's try still finds the lock held 10 s after the holder's session ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	lb.Release()
	la.Release() // on a dead session: no panic, nothing to undo
}

func TestTryLeadRefusesSQLite(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if l, err := s.TryLead(t.Context()); l != nil || !errors.Is(err, ErrNoReplicas) {
		t.Fatalf("TryLead on SQLite: %v, %v", l, err)
	}
}

func TestServerRecords(t *testing.T) {
	s, err := Open(t.Context(), testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	for _, r := range []ServerRecord{
		{ID: "a", URL: "https://a:8700", Leader: true, Since: now, Seen: now},
		{ID: "b", URL: "https://b:8700", Seen: now.Add(time.Second)},
	} {
		if err := s.SaveServerRecord(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveServerRecord(t.Context(), ServerRecord{ID: "b", URL: "https://b:8700", Seen: now.Add(2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ServerRecords(t.Context())
	if err != nil || len(recs) != 2 {
		t.Fatalf("records: %+v, %v", recs, err)
	}
	byID := map[string]ServerRecord{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	if a := byID["a"]; !a.Leader || !a.Since.Equal(now) || a.URL != "https://a:8700" {
		t.Errorf("a = %+v", a)
	}
	if b := byID["b"]; b.Leader || !b.Seen.Equal(now.Add(2*time.Second)) {
		t.Errorf("b (refreshed) = %+v", b)
	}
	if err := s.DeleteServerRecord(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.ServerRecords(t.Context()); len(recs) != 1 || recs[0].ID != "b" {
		t.Errorf("after deleting a: %+v", recs)
	}
}

// The database's clock, by which servers time their records, is read on both stores (on SQLite,
// this machine's) and is UTC.
func TestDatabaseNow(t *testing.T) {
	s, err := Open(t.Context(), testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := time.Now()
	got, err := s.DatabaseNow(t.Context())
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	// The test's database runs on this machine: one clock, so got lies between (to the
	// microsecond PostgreSQL keeps).
	if got.Before(before.Truncate(time.Microsecond)) || got.After(after) {
		t.Errorf("DatabaseNow = %s, not between %s and %s", got, before, after)
	}
	if got.Location() != time.UTC {
		t.Errorf("DatabaseNow = %s, want UTC", got)
	}
}
