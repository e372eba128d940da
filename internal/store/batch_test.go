package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/serving"
)

// TestBatchEndpointsSurviveARestart stores a batch endpoint and deployment, reopens the
// database and reads them back; deleting the endpoint takes its deployments.
func TestBatchEndpointsSurviveARestart(t *testing.T) {
	ctx := t.Context()
	path := testDSN(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	e := BatchEndpointRecord{Spec: serving.BatchEndpoint{Name: "ep1", AuthMode: serving.AuthAADToken, DefaultDeployment: "d1"},
		CreatedAt: at, UpdatedAt: at}
	d := BatchDeploymentRecord{Spec: serving.BatchDeployment{Name: "d1", Endpoint: "ep1", ScoringScript: "s.py",
		Compute: "pool", InstanceCount: 2, Settings: serving.DefaultBatchSettings()}, CreatedAt: at, UpdatedAt: at}
	if err := s.Serving.PutBatchDeployment(ctx, d, true); !errors.Is(err, ErrNotFound) {
		t.Errorf("a deployment of no endpoint: %v, want ErrNotFound", err)
	}
	if err := s.Serving.PutBatchEndpoint(ctx, e, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Serving.PutBatchEndpoint(ctx, e, true); !errors.Is(err, ErrExists) {
		t.Errorf("second create: %v, want ErrExists", err)
	}
	if err := s.Serving.PutBatchDeployment(ctx, d, true); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gotE, err := s.Serving.BatchEndpoint(ctx, "ep1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, *gotE); diff != "" {
		t.Errorf("endpoint (-want +got):\n%s", diff)
	}
	gotD, err := s.Serving.BatchDeployments(ctx, "ep1")
	if err != nil || len(gotD) != 1 {
		t.Fatalf("deployments %v, %v", gotD, err)
	}
	if diff := cmp.Diff(d, gotD[0]); diff != "" {
		t.Errorf("deployment (-want +got):\n%s", diff)
	}
	if err := s.Serving.DeleteBatchEndpoint(ctx, "ep1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Serving.BatchDeployment(ctx, "ep1", "d1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deployment after its endpoint was deleted: %v", err)
	}
}
