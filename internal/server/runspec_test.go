package server

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// An owner may read a run's spec (the supervisors' routes are theirs too), but the fresh run
// token in it goes only to the run's own token: a user holding one could read the values of
// the run's secrets, which no user reads back.
func TestRunSpecTokenOnlyForTheRun(t *testing.T) {
	ts := newTestServer(t)
	run := ts.createJob(t, "spec")
	boss := api.NewClient(ts.url, newUserToken(t, ts, "bea", api.RoleOwner))
	for _, tc := range []struct {
		name   string
		client *api.Client
		token  bool
	}{{"the workspace token", ts.admin, false}, {"an owner", boss, false}, {"the run", ts.runClient(run.ID), true}} {
		spec, err := tc.client.Runs.Spec(t.Context(), run.ID, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := spec.Token != ""; got != tc.token {
			t.Errorf("%s: run spec carries a token: %v, want %v", tc.name, got, tc.token)
		}
	}
}
