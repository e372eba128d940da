package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// timelineHas reports whether a cluster's timeline has an entry to state `to` whose reason
// holds every part.
func timelineHas(c clusterShow, to string, parts ...string) bool {
	for _, e := range c.Timeline {
		ok := e.To == to
		for _, p := range parts {
			ok = ok && strings.Contains(e.Reason, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// Clusters that cannot bring a node up say so within seconds, on compute show and on the jobs
// waiting for them: a create hook that cannot start the agent (hangar not on PATH) fails
// loudly, and a node whose create hook succeeded but whose agent never joins is deleted after
// join_timeout with the hook's output as the reason.
func TestClusterProvisioningFailsLoudly(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	t.Cleanup(func() { killMatching(dir) })
	hooks := filepath.Join(repoRoot(t), "examples", "cluster", "local-agent")
	writeFiles(t, dir, map[string]string{
		// The example hooks, run where hangar is not on PATH and HANGAR_EXE is not set.
		"nopath.yml": fmt.Sprintf(`name: nopath
type: amlcompute
size: local-quarter
max_instances: 1
provider:
  type: command
  create: %s
  delete: %s
  env: {PATH: /usr/bin:/bin, TMPDIR: %s}
`, filepath.Join(hooks, "create.sh"), filepath.Join(hooks, "delete.sh"), dir),
		// A hook that "creates a machine" on which no agent ever starts.
		"quiet.yml": `name: quiet
type: amlcompute
size: local-quarter
max_instances: 1
join_timeout: 2
provider:
  type: command
  create: echo "booting vm-7 (its image has no hangar)"; echo vm-7
  delete: "true"
`,
		"nopath-job.yml": "command: echo never\ncompute: azureml:nopath\n",
		"quiet-job.yml":  "command: echo never\ncompute: azureml:quiet\n",
	})
	start := time.Now()
	w.ok("compute", "create", "-f", filepath.Join(dir, "nopath.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "quiet.yml"))
	nopath := w.create(filepath.Join(dir, "nopath-job.yml"))
	quiet := w.create(filepath.Join(dir, "quiet-job.yml"))

	missing := "create.sh: cannot find 'hangar' on PATH (/usr/bin:/bin)"
	testwait.Within(t, 30*time.Second, "the job on nopath to name the create hook's failure", func() bool {
		d := w.show(nopath)
		return d.Status == job.Queued && strings.Contains(d.StatusReason, "provisioning is failing: create node nopath-") &&
			strings.Contains(d.StatusReason, missing)
	})
	c := w.cluster("nopath")
	if e, _ := c.Properties["last_error"].(string); !strings.Contains(e, missing) || !timelineHas(c, "deleted", "provisioning failed", missing) {
		t.Errorf("compute show -n nopath: last error %q, timeline %+v", e, c.Timeline)
	}
	if table := w.ok("compute", "show", "-n", "nopath").stdout; !strings.Contains(table, "Last error: provisioning node nopath-") {
		t.Errorf("compute show table:\n%s", table)
	}

	said := "did not join within"
	hook := "create hook output: booting vm-7 (its image has no hangar) | vm-7"
	testwait.Within(t, 30*time.Second, "the job on quiet to name the node that never joined", func() bool {
		r := w.show(quiet).StatusReason
		return strings.Contains(r, "provisioning is failing: node quiet-") && strings.Contains(r, said) && strings.Contains(r, hook)
	})
	if c := w.cluster("quiet"); !timelineHas(c, "releasing", said, hook) || !timelineHas(c, "provisioning", "machine vm-7 created; waiting up to 2s") {
		t.Errorf("compute show -n quiet timeline: %+v", c.Timeline)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the failures took %s to show", took)
	}
	w.ok("job", "cancel", "-n", nopath, "--yes")
	w.ok("job", "cancel", "-n", quiet, "--yes")
}

// runStdin runs the CLI with stdin.
func (w *ws) runStdin(stdin string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hangarBin, args...)
	cmd.Env = w.env()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("run hangar %v: %v", args, err)
	}
	return r
}

// compute node delete removes a node stuck provisioning (its machine goes through the delete
// hook, the timeline says "deleted by the user"), and the cluster provisions again: with the
// hook fixed meanwhile, the new node joins and the waiting job runs.
func TestComputeNodeDeleteRemovesStuckNode(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	t.Cleanup(func() { killMatching(dir) })
	hooks := filepath.Join(repoRoot(t), "examples", "cluster", "local-agent")
	writeFiles(t, dir, map[string]string{
		"create.sh": fmt.Sprintf(`if [ -f %[1]s/fixed ]; then exec bash %[2]s/create.sh; fi
echo "asked the cloud for a VM; it never boots"
echo "vm-stuck-$HANGAR_NODE_ID"
`, dir, hooks),
		"delete.sh": fmt.Sprintf(`case $HANGAR_PROVIDER_ID in
vm-stuck-*) echo "$HANGAR_PROVIDER_ID" >> %[1]s/deleted ;;
*) exec bash %[2]s/delete.sh ;;
esac
`, dir, hooks),
		"cluster.yml": fmt.Sprintf(`name: pool
type: amlcompute
size: local-quarter
max_instances: 1
join_timeout: 600
provider:
  type: command
  create: bash %[1]s/create.sh
  delete: bash %[1]s/delete.sh
  env: {HANGAR_EXE: %[2]s, TMPDIR: %[1]s, HANGAR_AGENT_ARGS: --heartbeat 300ms}
`, dir, hangarBin),
		"job.yml": "command: echo ran on a good node\ncompute: azureml:pool\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	var stuck string
	testwait.Within(t, 30*time.Second, "a node stuck provisioning", func() bool {
		ns := w.cluster("pool").Nodes
		if len(ns) == 1 && ns[0].State == "provisioning" && strings.HasPrefix(ns[0].ProviderID, "vm-stuck-") {
			stuck = ns[0].ID
		}
		return stuck != ""
	})

	// Destructive: without a terminal to ask on, it refuses unless --yes (even with a "y" on
	// stdin, which it does not read), and keeps the node. (The question on a terminal:
	// internal/cli TestConfirmOnARealTerminal.)
	r := w.runStdin("y\n", "compute", "node", "delete", "-n", stuck)
	if r.code != 2 || !strings.Contains(r.stderr, "delete node "+stuck+" needs confirmation: stdin is not a terminal, so pass --yes") {
		t.Fatalf("without a terminal: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if ns := w.cluster("pool").Nodes; len(ns) != 1 || ns[0].ID != stuck {
		t.Fatalf("after the refusal: nodes %+v", ns)
	}

	writeFiles(t, dir, map[string]string{"fixed": ""})
	r = w.ok("compute", "node", "delete", "-n", stuck, "--yes")
	if !strings.Contains(r.stdout, "Deleting node "+stuck+" of cluster pool (deleted by the user)") {
		t.Errorf("node delete output: %q", r.stdout)
	}
	if d := w.waitStatus(name, 90*time.Second, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed || !logHas(w, name, "ran on a good node") {
		t.Fatalf("the job after the stuck node was deleted: %s (%s)", d.Status, d.StatusReason)
	}
	c := w.cluster("pool")
	if !timelineHas(c, "releasing", "deleted by the user") || !timelineHas(c, "deleted", "deleted by the user") {
		t.Errorf("timeline: %+v", c.Timeline)
	}
	for _, e := range c.Timeline {
		if e.Node == stuck && e.To == "deleted" && !strings.Contains(e.Reason, "deleted by the user") {
			t.Errorf("the stuck node left with %q", e.Reason)
		}
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "deleted"))); got != "vm-stuck-"+stuck {
		t.Errorf("the delete hook got %q", got)
	}
	if r := w.run("compute", "node", "delete", "-n", stuck, "--yes"); r.code != 1 || !strings.Contains(r.stderr, "node "+stuck+" does not exist") {
		t.Errorf("deleting it again: exit %d %s", r.code, r.stderr)
	}
}
