package store

import (
	"errors"
	"fmt"
	"testing"
)

// The database's refusals are told apart by the driver's codes, on SQLite and PostgreSQL alike,
// however deeply they are wrapped, and no other error is taken for one.
func TestConstraintViolationsByCode(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('k', 'v')`); err != nil {
		t.Fatal(err)
	}
	_, dup := s.db.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('k', 'w')`)
	if dup == nil || !isUniqueViolation(fmt.Errorf("wrapped: %w", dup)) || isForeignKeyViolation(dup) {
		t.Fatalf("a duplicate key: %v", dup)
	}
	for _, err := range []error{nil, errors.New("UNIQUE constraint failed: settings.key"), ErrNotFound} {
		if isUniqueViolation(err) || isForeignKeyViolation(err) {
			t.Errorf("%v taken for a constraint violation", err)
		}
	}
}
