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
)

// An owner limits a secret to rita (`secret set --allow-user rita`). Bob, a contributor like
// her, tries to read it by naming it in a job, in a pipeline's step and in a sweep's trial: each
// is refused at submit, naming the secret and who may use it, and no run of his exists. Rita's
// job gets the value. Her access is then removed while her next run waits in the queue: that run
// gets no value and fails in Preparing saying why. `secret list` shows the access.
func TestSecuritySecretsAreLimitedToTheirUsers(t *testing.T) {
	w := newWS(t)
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	value := "dbpw_" + rand.Text()
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
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
		"blocker.yml": "command: while [ ! -f " + gate + " ]; do sleep 0.1; done\nresources: {instance_type: local-full}\n",
		"queued.yml":  "command: echo ran with \"$X\"\nresources: {instance_type: local-full}\n" + steal,
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

	// Her next run waits behind a run that holds the whole machine; meanwhile the owner gives
	// the secret to another user only.
	blocker := w.create(filepath.Join(dir, "blocker.yml"))
	w.waitStatus(blocker, time.Minute, job.Running)
	if err := json.Unmarshal([]byte(rita.ok("job", "create", "-f", filepath.Join(dir, "queued.yml"), "-o", "json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	if got := w.show(d.ID); got.Status != job.Queued {
		t.Fatalf("rita's second run is %s, want Queued behind %s", got.Status, blocker)
	}
	w.ok("user", "create", "carl", "--role", "contributor")
	w.ok("secret", "access", "db_password", "--allow-user", "carl")
	writeFiles(t, dir, map[string]string{"gate": ""})
	got := w.waitStatus(d.ID, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if got.Status != job.Failed || !strings.Contains(got.StatusReason, "secret db_password may be used by owners, user carl only; user rita (role contributor) may not use it") {
		t.Errorf("rita's queued run after her access was removed: %s %q; want Failed saying she may no longer use it", got.Status, got.StatusReason)
	}
	if l := w.logs(d.ID); strings.Contains(l, value) || strings.Contains(l, "ran with") {
		t.Errorf("rita's queued run ran, or its log holds the value:\n%s", l)
	}
}
