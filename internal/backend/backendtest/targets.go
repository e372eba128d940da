package backendtest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// Target is a stored compute target for a spec, as the store holds it (its secrets in the
// clear: Resolver's key is no key).
func Target(t testing.TB, spec compute.Spec) compute.Target {
	t.Helper()
	props, err := json.Marshal(compute.Stored{Spec: spec, AttachedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	return compute.Target{Name: spec.Name, Type: spec.Type, Properties: props, CreatedAt: time.Now().UTC()}
}

// Resolver resolves the given targets by name, as the server's compute.Resolver does from its
// store: the Targets function of backends that connect to their targets.
func Resolver(targets ...compute.Target) func(ctx context.Context, name string) (*compute.Stored, error) {
	byName := map[string]compute.Target{}
	for _, t := range targets {
		byName[t.Name] = t
	}
	lookup := func(_ context.Context, name string) (*compute.Target, error) {
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("compute %s does not exist", name)
		}
		return &t, nil
	}
	return compute.Resolver{Lookup: lookup, Secrets: clear{}}.Resolve
}

// clear unseals secrets stored in the clear.
type clear struct{}

func (clear) Decrypt(s string) ([]byte, error) { return []byte(s), nil }
