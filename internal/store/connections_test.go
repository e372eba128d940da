package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/connection"
)

func TestConnectionsPutListDeleteReseal(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	t0 := time.Unix(100, 0).UTC()
	pg := StoredConnection{Connection: connection.Connection{Name: "pg", Type: connection.TypePostgreSQL,
		Target: "postgresql://db/sales", CredentialType: connection.CredUsernamePassword, CreatedAt: t0}, Sealed: "old:pw"}
	if err := s.Assets.PutConnection(ctx, pg); err != nil {
		t.Fatal(err)
	}
	pg.Target, pg.CreatedAt = "postgresql://db2/sales", t0.Add(time.Hour)
	if err := s.Assets.PutConnection(ctx, pg); err != nil {
		t.Fatal(err)
	}
	got, err := s.Assets.Connection(ctx, "pg")
	if err != nil || got.Target != "postgresql://db2/sales" || got.Sealed != "old:pw" || got.Type != connection.TypePostgreSQL {
		t.Fatalf("get = %+v, %v", got, err)
	}
	// Reseal rewrites the connection's credentials with the other sealed values.
	value := func(v string) (string, bool, error) {
		if strings.HasPrefix(v, "new:") {
			return v, false, nil
		}
		return "new:" + strings.TrimPrefix(v, "old:"), true, nil
	}
	comp := func(t compute.Target) ([]byte, bool, error) { return t.Properties, false, nil }
	if n, err := s.Assets.Reseal(ctx, Resealer{Value: value, Compute: comp}); err != nil || n != 1 {
		t.Fatalf("reseal = %d, %v", n, err)
	}
	list, err := s.Assets.Connections(ctx)
	if err != nil || len(list) != 1 || list[0].Sealed != "new:pw" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if err := s.Assets.DeleteConnection(ctx, "pg"); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.DeleteConnection(ctx, "pg"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete again = %v", err)
	}
	if _, err := s.Assets.Connection(ctx, "pg"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get deleted = %v", err)
	}
}
