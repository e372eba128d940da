package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// fakeNodes answers GET and DELETE /api/nodes/{id} for node pool-1 (one run on it), and
// counts the deletes.
func fakeNodes(t *testing.T) (*api.Client, *atomic.Int32) {
	t.Helper()
	var deletes atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/nodes/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "pool-1" {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: "not found", Code: api.CodeNotFound})
			return
		}
		_ = json.NewEncoder(w).Encode(api.Node{ID: "pool-1", Pool: "pool", State: "running",
			Runs: []api.AgentRun{{RunID: "r1", Alive: true}, {RunID: "r0"}}})
	})
	mux.HandleFunc("DELETE /api/nodes/{id}", func(w http.ResponseWriter, r *http.Request) {
		deletes.Add(1)
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(api.NodeDeletion{Node: "pool-1", Pool: "pool", Reason: "deleted by the user", Requeued: []string{"r1"}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return api.NewClient(srv.URL, "tok"), &deletes
}

func TestComputeNodeDeleteAsks(t *testing.T) {
	tests := []struct {
		name, id, answer string
		terminal, yes    bool
		wantErr          string // "" = deleted
		wantPrompt       bool
	}{
		{"yes answered", "pool-1", "y\n", true, false, "", true},
		{"YES answered", "pool-1", "  YES \n", true, false, "", true},
		{"no answered", "pool-1", "n\n", true, false, "did not delete node pool-1 (answer y, or pass --yes)", true},
		{"no answer at all", "pool-1", "", true, false, "did not delete node pool-1 (answer y, or pass --yes)", true},
		{"no terminal: refused unasked", "pool-1", "y\n", false, false,
			"delete node pool-1 needs confirmation: stdin is not a terminal, so pass --yes (-y) to delete node pool-1 without being asked", false},
		{"--yes asks nothing", "pool-1", "", false, true, "", false},
		{"unknown node", "pool-9", "y\n", true, true, "node pool-9 does not exist (hangar compute show -n <cluster> lists the nodes)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, deletes := fakeNodes(t)
			var out, errOut bytes.Buffer
			env := &Env{Stdout: &out, Stderr: &errOut, Output: "table", Stdin: strings.NewReader(tt.answer),
				terminal: func(io.Reader) bool { return tt.terminal }}
			err := deleteNode(t.Context(), env, c, tt.id, tt.yes)
			prompt := "Delete node pool-1 of cluster pool (running, 1 run)? The provider deletes its machine and its runs go back to the queue. [y/N] "
			if got := errOut.String() == prompt; got != tt.wantPrompt {
				t.Errorf("stderr %q; want the prompt: %v", errOut.String(), tt.wantPrompt)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || deletes.Load() != 0 {
					t.Errorf("deleteNode = %v after %d deletes; want %q and none", err, deletes.Load(), tt.wantErr)
				}
				return
			}
			want := "Deleting node pool-1 of cluster pool (deleted by the user): its machine is being deleted\nRequeued runs: r1\n"
			if err != nil || deletes.Load() != 1 || out.String() != want {
				t.Errorf("deleteNode = %v, %d deletes, stdout %q; want %q", err, deletes.Load(), out.String(), want)
			}
		})
	}
}
