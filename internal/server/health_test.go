package server

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// Without a user's token the health check says what a load balancer needs and nothing of the
// machine: no workspace directory, no pid (a bad token or a run's token is no user, and is not
// refused either). With a user's token, of any role, it says both.
func TestHealthTellsTheWorkspaceOnlyToUsers(t *testing.T) {
	ts := newTestServer(t)
	run := ts.createJob(t, "h")
	reader := newUserToken(t, ts, "rita", api.RoleReader)
	for _, tc := range []struct {
		name, token string
		full        bool
	}{
		{"no token", "", false}, {"a bad token", "hpt_" + "00", false}, {"a run's token", ts.ctrl.RunToken(run.ID), false},
		{"a reader", reader, true}, {"the workspace token", adminToken, true},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.url+"/api/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		err = json.NewDecoder(resp.Body).Decode(&raw)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || raw["ok"] != true {
			t.Errorf("%s: %d %v %v", tc.name, resp.StatusCode, raw, err)
			continue
		}
		_, hasWS := raw["workspace"]
		_, hasPID := raw["pid"]
		if hasWS != tc.full || hasPID != tc.full {
			t.Errorf("%s: %v; want workspace and pid: %v", tc.name, raw, tc.full)
		}
		if tc.full && raw["pid"] != float64(os.Getpid()) {
			t.Errorf("%s: pid %v, want %d", tc.name, raw["pid"], os.Getpid())
		}
	}
}
