package e2e

import (
	"crypto/rand"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// An owner limits a secret to rita (`secret set --allow-user rita`). Bob, a contributor like
// her, tries to read it by naming it in a job, in a pipeline's step and in a sweep's trial: each
// is refused at submit, naming the secret and who may use it, and no run of his exists. Rita's
// job gets the value. Her access is then removed while her pipeline waits to start the step that
// names the secret (access is checked at submit, and again when a run fetches the values; a step
// counts as its pipeline's submitter's): that step gets no value and fails in Preparing saying
// why. `secret list` shows the access.
func TestSecuritySecretsAreLimitedToTheirUsers(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	value := "dbpw_" + rand.Text()
	dir := t.TempDir()
	const steal = "environment_variables:\n  X: ${{secrets.db_password}}\n"
	writeFiles(t, dir, map[string]string{
		"steal.yml": "command: printf %s \"$X\" > outputs/x.txt\n" + steal,
		"pipeline.yml": "type: pipeline\njobs:\n  s:\n    type: command\n    command: printf %s \"$X\" > outputs/x.txt\n" +
			"    environment_variables:\n      X: ${{secrets.db_password}}\n",
		"sweep.yml": `type: sweep
sampling_algorithm: random
search_space:
  lr: {type: choice, values: [1, 2]}
objective: {goal: maximize, primary_metric: acc}
limits: {max_total_trials: 1}
trial:
  command: printf %s "$X" > outputs/x.txt; echo ${{search_space.lr}}
  environment_variables:
    X: ${{secrets.db_password}}
`,
		"rita.yml":    "command: test \"$X\" = '" + value + "' && echo rita-got-it\n" + steal,
		"src/wait.py": waitForTag,
		"later.yml": `type: pipeline
jobs:
  wait:
    code: src
    command: python3 wait.py ${{outputs.o}}
    outputs:
      o: {type: uri_folder}
  use:
    command: echo ran with "$X"; ls ${{inputs.x}}
    inputs:
      x: ${{parent.jobs.wait.outputs.o}}
    environment_variables:
      X: ${{secrets.db_password}}
`,
	})
	tokens := map[string]string{}
	for _, name := range []string{"rita", "bob"} {
		tokens[name] = strings.TrimSpace(w.ok("user", "create", name, "--role", "contributor").stdout)
	}
	if r := w.runStdin(value+"\n", "secret", "set", "db_password", "--allow-user", "rita"); r.code != 0 ||
		!strings.Contains(r.stderr, "Created secret db_password (may be used by owners, user rita)") {
		t.Fatalf("secret set --allow-user rita: exit %d %s", r.code, r.stderr)
	}
	if list := w.ok("secret", "list").stdout; !strings.Contains(list, "MAY BE USED BY") || !strings.Contains(list, "owners, user rita") {
		t.Errorf("secret list does not show the access:\n%s", list)
	}
	rita, bob := w.user(si.URL), w.user(si.URL)
	for u, tok := range map[*user]string{rita: tokens["rita"], bob: tokens["bob"]} {
		if r := u.run(tok, "login", "--with-token"); r.code != 0 {
			t.Fatalf("login: exit %d %s", r.code, r.stderr)
		}
	}

	refusal := "secret db_password may be used by owners, user rita only; user bob (role contributor) may not use it"
	for file, field := range map[string]string{"steal.yml": "environment_variables.X", "pipeline.yml": "jobs.s.environment_variables.X",
		"sweep.yml": "environment_variables.X"} {
		r := bob.run("", "job", "create", "-f", filepath.Join(dir, file))
		if r.code == 0 || !strings.Contains(r.stderr, file+": "+field+": "+refusal) {
			t.Errorf("bob's %s: exit %d %s; want a refusal saying %q", file, r.code, r.stderr, field+": "+refusal)
		}
	}
	var runs []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "--user", "bob", "-o", "json").stdout), &runs); err != nil || len(runs) != 0 {
		t.Errorf("bob's runs after the refusals: %d, %v; want none", len(runs), err)
	}

	var d api.RunDetail
	if err := json.Unmarshal([]byte(rita.ok("job", "create", "-f", filepath.Join(dir, "rita.yml"), "-o", "json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	if got := w.waitStatus(d.ID, 2*time.Minute, job.Completed, job.Failed, job.Canceled); got.Status != job.Completed || !strings.Contains(w.logs(d.ID), "rita-got-it") {
		t.Fatalf("rita's job: %s %s\n%s", got.Status, got.StatusReason, w.logs(d.ID))
	}

	// Her pipeline's second step names the secret; it starts only once the first one is let
	// go, and meanwhile the owner gives the secret to another user only.
	var pl api.RunDetail
	if err := json.Unmarshal([]byte(rita.ok("job", "create", "-f", filepath.Join(dir, "later.yml"), "-o", "json").stdout), &pl); err != nil {
		t.Fatal(err)
	}
	testwait.Within(t, time.Minute, "the pipeline's first step to run", func() bool {
		st := stepOf(w.show(pl.ID), "wait")
		return st != nil && st.Status == job.Running
	})
	w.ok("user", "create", "carl", "--role", "contributor")
	w.ok("secret", "access", "db_password", "--allow-user", "carl")
	admin := w.client()
	if st, body := call(t, admin.HTTPClient(), "POST", admin.BaseURL()+"/api/2.0/mlflow/runs/set-tag", adminToken(t, w),
		`{"run_id":"`+pl.ID+`_wait","key":"go","value":"1"}`); st != 200 {
		t.Fatalf("letting the first step go: %d %s", st, body)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := json.MarshalIndent(w.show(pl.ID).Pipeline, "", " ")
			t.Logf("pipeline: %s", b)
		}
	})
	if got := w.waitStatus(pl.ID, 2*time.Minute, job.Completed, job.Failed, job.Canceled); got.Status != job.Failed {
		t.Errorf("rita's pipeline after her access was removed: %s %q; want Failed", got.Status, got.StatusReason)
	}
	use := stepOf(w.show(pl.ID), "use")
	if use == nil || use.RunID == "" {
		t.Fatalf("the step naming the secret never ran: %+v", use)
	}
	d = w.show(use.RunID)
	if d.Status != job.Failed || !strings.Contains(d.StatusReason, "secret db_password may be used by owners, user carl only; user rita (role contributor) may not use it") {
		t.Errorf("rita's step after her access was removed: %s %q; want Failed saying she may no longer use it", d.Status, d.StatusReason)
	}
	if l := w.logs(d.ID); strings.Contains(l, value) || strings.Contains(l, "ran with") {
		t.Errorf("rita's queued run ran, or its log holds the value:\n%s", l)
	}
}

// waitForTag is a run's script that waits until its run has the MLflow tag go (it reads its own
// run with its run token: the test sets the tag when the run may go on), then writes its output.
const waitForTag = `import json, os, sys, time, urllib.request
uri, token, run = os.environ["MLFLOW_TRACKING_URI"], os.environ["MLFLOW_TRACKING_TOKEN"], os.environ["MLFLOW_RUN_ID"]
while True:
    req = urllib.request.Request(uri + "/api/2.0/mlflow/runs/get?run_id=" + run)
    req.add_header("Authorization", "Bearer " + token)
    tags = json.load(urllib.request.urlopen(req))["run"]["data"].get("tags", [])
    if any(t["key"] == "go" for t in tags):
        break
    time.sleep(0.2)
open(os.path.join(sys.argv[1], "x"), "w").write("ok")
`

// stepOf is the step of a pipeline's detail named name (nil when absent).
func stepOf(d api.RunDetail, name string) *api.PipelineStep {
	if d.Pipeline == nil {
		return nil
	}
	for i := range d.Pipeline.Steps {
		if d.Pipeline.Steps[i].Name == name {
			return &d.Pipeline.Steps[i]
		}
	}
	return nil
}
