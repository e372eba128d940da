package server

import (
	"context"
	"encoding/json"

	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
)

// claimKind is a refusal as the Kubernetes backend returns it (ClaimDenied decides the status).
type claimKind struct{ denied bool }

func (e claimKind) Error() string     { return "refused by the fake" }
func (e claimKind) ClaimDenied() bool { return e.denied }

// fakeClaimer is a Kubernetes backend whose only claim token is "tok-a", for which it hands out
// run; it records what the server's ended callback says of the runs it asks about.
type fakeClaimer struct {
	backend.Backend
	run   string
	ended map[string]bool
}

func (f *fakeClaimer) ClaimReplica(ctx context.Context, token, pod string, ended func(context.Context, string) (bool, error)) (api.SupervisorConfig, error) {
	for _, id := range []string{f.run, "no-such-run"} {
		done, err := ended(ctx, id)
		if err != nil {
			return api.SupervisorConfig{}, err
		}
		f.ended[id] = done
	}
	switch {
	case token != "tok-a":
		return api.SupervisorConfig{}, claimKind{denied: true}
	case pod == "busy-pod":
		return api.SupervisorConfig{}, claimKind{}
	}
	return api.SupervisorConfig{RunID: f.run, Dir: "/hangar/runs/" + f.run}, nil
}

// POST /api/replica-claims: the claim token alone authenticates (none, or a refused one: 401;
// nothing to claim yet: 409, which the pod retries); a claimed run comes back with a run token
// minted for it; a pod name that is not one is refused before it reaches the cluster; a run
// that is not a live replica counts as ended (never handed out).
func TestReplicaClaimRoute(t *testing.T) {
	ts := newTestServer(t)
	run := ts.createJob(t, "claimed")
	fc := &fakeClaimer{run: run.ID, ended: map[string]bool{}}
	ts.srv.cfg.Backends[compute.TypeKubernetes] = fc
	body := `{"pod": "web-1"}`
	cases := []struct {
		name, token, body string
		want              int
	}{
		{"no token", "", body, http.StatusUnauthorized},
		{"another deployment's token", "tok-b", body, http.StatusUnauthorized},
		{"the workspace token", adminToken, body, http.StatusUnauthorized},
		{"nothing to claim yet", "tok-a", `{"pod": "busy-pod"}`, http.StatusConflict},
		{"not a pod name", "tok-a", `{"pod": "../etc/passwd"}`, http.StatusBadRequest},
	}
	for _, c := range cases {
		if st, eb := ts.raw(t, c.token, "POST", "/api/replica-claims", c.body); st != c.want {
			t.Errorf("%s: %d %+v; want %d", c.name, st, eb, c.want)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.url+"/api/replica-claims", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got api.ReplicaClaim
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("claim: %d %v", resp.StatusCode, err)
	}
	if got.RunID != run.ID || got.Config.RunID != run.ID || got.Config.Token == "" {
		t.Fatalf("claim answered %+v", got)
	}
	if life, err := ts.ctrl.Authenticate(t.Context(), got.Config.Token); err != nil || life.ID != run.ID {
		t.Errorf("the claimed run's token authenticates as %+v, %v; want run %s", life, err, run.ID)
	}
	if !fc.ended[run.ID] || !fc.ended["no-such-run"] {
		t.Errorf("ended said %v; a job that is no replica and an unknown run are never handed out", fc.ended)
	}
}
