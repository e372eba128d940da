package store

import (
	"errors"
	"testing"

	"github.com/hangar-ml/hangar/internal/serving"
)

// A replacement given the generation it read replaces only that one: a write that came first is
// not undone (the alias loop's roll against a user's update).
func TestPutDeploymentOnlyOverTheGenerationRead(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if err := s.Serving.PutEndpoint(ctx, EndpointRecord{Spec: serving.Endpoint{Name: "ep"}}, true); err != nil {
		t.Fatal(err)
	}
	d := DeploymentRecord{Spec: serving.Deployment{Name: "blue", Endpoint: "ep", Command: "a"}}
	if _, err := s.Serving.PutDeployment(ctx, d, true); err != nil {
		t.Fatal(err)
	}
	d.Spec.Command = "b" // a user's update: any generation
	if got, err := s.Serving.PutDeployment(ctx, d, false); err != nil || got.Generation != 2 {
		t.Fatalf("update = %+v, %v; want generation 2", got, err)
	}
	d.Spec.Command, d.Generation = "stale", 1
	if _, err := s.Serving.PutDeployment(ctx, d, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("update over generation 1 after 2 = %v, want ErrNotFound", err)
	}
	d.Spec.Command, d.Generation = "c", 2
	if got, err := s.Serving.PutDeployment(ctx, d, false); err != nil || got.Generation != 3 {
		t.Fatalf("update over generation 2 = %+v, %v; want generation 3", got, err)
	}
	if got, _ := s.Serving.Deployment(ctx, "ep", "blue"); got.Spec.Command != "c" {
		t.Errorf("stored command %q, want c", got.Spec.Command)
	}
}
