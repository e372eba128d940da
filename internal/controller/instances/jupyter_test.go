package instances

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
	"github.com/hangar-ml/hangar/internal/store"
)

func TestJupyterStatus(t *testing.T) {
	now := time.Unix(10000, 0)
	report := func(node string, at time.Time, j *api.JupyterReport) signalsRecord {
		return signalsRecord{NodeActivity: api.NodeActivity{Jupyter: j}, ReportedAt: at, Node: node}
	}
	running := &api.JupyterReport{State: api.JupyterRunning, Addr: "10.0.0.5:4321", Token: "tok"}
	cases := []struct {
		name       string
		state      instance.State
		node       string
		sig        signalsRecord
		wantStatus string // prefix
		wantPath   string
	}{
		{"running", instance.Running, "n1", report("n1", now, running), "running at /instances/dev/jupyter/", "/instances/dev/jupyter/"},
		{"stopped, with an old report", instance.Stopped, "", report("n1", now, running), "not running: the instance is Stopped", ""},
		{"starting instance", instance.Starting, "n1", report("n1", now, running), "not running: the instance is Starting", ""},
		{"the report is an earlier node's", instance.Running, "n2", report("n1", now, running), "starting: its node has not reported", ""},
		{"stale report", instance.Running, "n1", report("n1", now.Add(-3*time.Minute), running), "starting: its node has not reported", ""},
		{"no report yet", instance.Running, "n1", report("n1", now, nil), "starting: its node has not reported", ""},
		{"agent starting it", instance.Running, "n1", report("n1", now, &api.JupyterReport{State: api.JupyterStarting, Addr: "a:1"}), "starting", ""},
		{"not installed", instance.Running, "n1", report("n1", now, &api.JupyterReport{State: api.JupyterNotInstalled, Reason: "no jupyter-lab on PATH"}),
			"not installed: no jupyter-lab on PATH", ""},
		{"failed", instance.Running, "n1", report("n1", now, &api.JupyterReport{State: api.JupyterFailed, Reason: "exit status 1: port in use"}),
			"failed: exit status 1: port in use (the agent starts it again)", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, path := jupyterStatus("dev", c.state, c.node, c.sig, now)
			if !strings.HasPrefix(status, c.wantStatus) || path != c.wantPath {
				t.Errorf("got %q, %q; want %q…, %q", status, path, c.wantStatus, c.wantPath)
			}
			if strings.Contains(status, "tok") {
				t.Errorf("the status shows the token: %q", status)
			}
		})
	}
}

// A Jupyter report's token is stored sealed: the instance's row (and so the database and its
// backups) holds it only under the workspace key; the proxy's lookup unseals it. A report
// stored before tokens were sealed still opens.
func TestJupyterTokenIsSealedAtRest(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	s := compute.Spec{Name: "dev1", Type: compute.TypeInstance, Instance: &compute.InstanceSpec{Size: "local-quarter",
		Provider: compute.Provider{Type: compute.ProviderLocal}, Owner: "alice"}}
	if _, err := f.ctrl.Workspace.Computes.Create(ctx, s, false); err != nil {
		t.Fatal(err)
	}
	const tok = "jupyter-token-4f1c2b"
	f.m.Activity(ctx, &store.Node{ID: "n1", Pool: "dev1"}, api.NodeActivity{
		Jupyter: &api.JupyterReport{State: api.JupyterRunning, Addr: "10.0.0.5:4321", Token: tok}})
	row, err := f.ctrl.Store.Instances.Get(ctx, "dev1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row.Signals, tok) || !strings.Contains(row.Signals, "jupyter_token_sealed") {
		t.Fatalf("the stored report holds the token in clear, or not sealed: %s", row.Signals)
	}
	sig := readSignals(row.Signals)
	if sig.Jupyter == nil || sig.Jupyter.Addr != "10.0.0.5:4321" {
		t.Fatalf("the stored report lost the rest: %+v", sig.Jupyter)
	}
	if got, err := f.m.unsealJupyterToken(sig); err != nil || got != tok {
		t.Errorf("unsealed token = %q, %v; want %q", got, err, tok)
	}
	old := signalsRecord{NodeActivity: api.NodeActivity{Jupyter: &api.JupyterReport{Token: "clear-old"}}}
	if got, err := f.m.unsealJupyterToken(old); err != nil || got != "clear-old" {
		t.Errorf("a report stored in clear: %q, %v", got, err)
	}
}
