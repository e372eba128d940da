package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// serverlessPoolYAML is a pool of local agents offering two sizes, 2 instances in all, whose
// idle nodes go after 2 seconds.
const serverlessPoolYAML = `type: serverless
description: capacity on demand
sizes: [local-quarter, local-half]
max_instances: 2
idle_time_before_scale_down: 2
`

// Serverless compute (issue 17): a job with compute: serverless, a job that names no compute,
// a pipeline whose default compute is serverless and a step that names it all run on capacity
// created for them from the workspace's pool; the pool's quota holds a job of another size
// back while it is used up; job show says what was created; and afterwards nothing is left.
func TestServerlessJobsAndPipeline(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"serverless.yml": serverlessPoolYAML,
		"job.yml":        "command: mkdir -p outputs && echo made-on-serverless > outputs/hello.txt\ncompute: azureml:serverless\n",
		"plain.yml":      "command: echo no compute named\n",
		"wide.yml":       "command: echo wide; sleep 4\ncompute: serverless\nresources: {instance_count: 2}\n",
		"half.yml":       "command: echo half\ncompute: serverless\nresources: {instance_type: local-half}\n",
		"too-many.yml":   "command: echo\ncompute: serverless\nresources: {instance_count: 3}\n",
		"pipeline.yml": `type: pipeline
settings: {default_compute: azureml:serverless}
jobs:
  first:
    command: echo step one > ${{outputs.o}}/one.txt
    outputs: {o: {type: uri_folder}}
  second:
    compute: serverless
    resources: {instance_type: local-half}
    command: cat ${{inputs.i}}/one.txt && echo step two
    inputs: {i: "${{parent.jobs.first.outputs.o}}"}
`,
	})

	// Before the pool: a job that names no compute runs on the local target.
	plain := w.create(filepath.Join(dir, "plain.yml"))
	if d := w.waitStatus(plain, time.Minute, job.Completed, job.Failed); d.Compute != "local" || d.Status != job.Completed {
		t.Fatalf("without a pool a job with no compute ran on %s (%s)", d.Compute, d.Status)
	}
	w.ok("compute", "create", "-f", filepath.Join(dir, "serverless.yml"))
	if r := w.ok("compute", "show", "-n", "serverless", "-o", "json"); !strings.Contains(r.stdout, `"local-half"`) || !strings.Contains(r.stdout, `"max_instances": 2`) {
		t.Errorf("compute show of the pool:\n%s", r.stdout)
	}
	if r := w.run("job", "create", "-f", filepath.Join(dir, "too-many.yml")); r.code == 0 ||
		!strings.Contains(r.stderr, "resources.instance_count: the job asks for 3 instances, the serverless pool allows 2") {
		t.Errorf("3 instances with a quota of 2: exit %d, %s", r.code, r.stderr)
	}

	// A serverless job: it completes, its output downloads, job show says what ran it.
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("serverless job: %s (%s)", d.Status, d.StatusReason)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", out)
	if b := readFile(t, filepath.Join(out, name, "artifacts", "outputs", "hello.txt")); strings.TrimSpace(b) != "made-on-serverless" {
		t.Errorf("downloaded output = %q", b)
	}
	if u := d.Serverless; u == nil || u.Pool != "serverless" || u.Size != "local-quarter" || u.Cluster != "serverless_local-quarter" || len(u.Nodes) != 1 {
		t.Errorf("job show's serverless part: %+v", u)
	}
	if r := w.ok("job", "show", "-n", name); !strings.Contains(r.stdout, "Serverless:") ||
		!strings.Contains(r.stdout, "pool serverless, size local-quarter, 1 instance(s) on cluster serverless_local-quarter; nodes: serverless_local-quarter") {
		t.Errorf("job show lacks the serverless line:\n%s", r.stdout)
	}

	// Now a job that names no compute goes to the pool.
	plain = w.create(filepath.Join(dir, "plain.yml"))
	if d := w.waitStatus(plain, 2*time.Minute, job.Completed, job.Failed); d.Compute != "serverless_local-quarter" || d.Status != job.Completed {
		t.Errorf("with a pool a job with no compute ran on %s (%s: %s)", d.Compute, d.Status, d.StatusReason)
	}

	// The quota: a 2-instance job holds it all, so a job of the other size waits, saying why.
	wide := w.create(filepath.Join(dir, "wide.yml"))
	half := w.create(filepath.Join(dir, "half.yml"))
	sawQuota := ""
	testwait.Within(t, 3*time.Minute, "both jobs to end", func() bool {
		if h := w.show(half); h.Status == job.Queued && strings.Contains(h.StatusReason, "serverless quota") {
			sawQuota = h.StatusReason
		}
		return w.show(wide).Status.Terminal() && w.show(half).Status.Terminal()
	})
	for _, n := range []string{wide, half} {
		if d := w.show(n); d.Status != job.Completed {
			t.Errorf("%s: %s (%s)", n, d.Status, d.StatusReason)
		}
	}
	if want := "waiting for serverless quota: other jobs hold the pool's max_instances (2), the job needs 1"; sawQuota != want {
		t.Errorf("the job over quota waited with %q, want %q", sawQuota, want)
	}
	if d := w.show(wide); d.Serverless == nil || len(d.Serverless.Nodes) != 2 {
		t.Errorf("the 2-instance job's serverless part: %+v", d.Serverless)
	}

	// A pipeline on serverless compute: its steps run on the pool's clusters of their sizes.
	pl := w.create(filepath.Join(dir, "pipeline.yml"))
	pd := w.waitStatus(pl, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	if pd.Status != job.Completed || pd.Pipeline == nil {
		t.Fatalf("pipeline: %s (%s)", pd.Status, pd.StatusReason)
	}
	computes := map[string]string{}
	for _, s := range pd.Pipeline.Steps {
		computes[s.Name] = s.Compute
	}
	if computes["first"] != "serverless_local-quarter" || computes["second"] != "serverless_local-half" {
		t.Errorf("steps ran on %v", computes)
	}
	if !logHas(w, pl+"_second", "step one") {
		t.Errorf("step second's log lacks step one's output:\n%s", w.logs(pl+"_second"))
	}

	// Afterwards nothing is left: every node released, no agent running.
	testwait.Within(t, 2*time.Minute, "the serverless clusters to scale to zero", func() bool {
		return len(w.cluster("serverless_local-quarter").Nodes) == 0 && len(w.cluster("serverless_local-half").Nodes) == 0 &&
			len(agentsOf(t, w.home)) == 0
	})
	var list []api.Compute
	if err := json.Unmarshal([]byte(w.ok("compute", "list", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, c := range list {
		names[c.Name] = c.Type
	}
	if names["serverless"] != "serverless" || names["serverless_local-quarter"] != "cluster" || names["serverless_local-half"] != "cluster" {
		t.Errorf("compute list: %v", names)
	}
	if r := w.ok("compute", "show", "-n", "serverless_local-quarter"); !strings.Contains(r.stdout, "0 current, 0 target") {
		t.Errorf("compute show of the pool's cluster:\n%s", r.stdout)
	}
}

// A fresh workspace has serverless compute with no configuration, as Azure does: this machine's
// capacity through the local provider's agents. A job with compute: serverless and one with no
// compute complete; compute list shows the pool as this machine's; once default_compute says
// serverless, a job with no compute and a pipeline of Azure's serverless shape run on it too.
func TestServerlessOnAFreshWorkspace(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"job.yml":   "command: echo ran on serverless > outputs/where.txt\ncompute: azureml:serverless\n",
		"plain.yml": "command: echo no compute named\n",
		"pipeline.yml": "type: pipeline\nsettings:\n    default_compute: azureml:serverless\njobs:\n" +
			"  hello_job:\n    command: echo hello\n  world_job:\n    command: echo world\n",
	})
	completes := func(name string) api.RunDetail {
		t.Helper()
		d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
		if d.Status != job.Completed {
			t.Fatalf("%s: %s (%s)", name, d.Status, d.StatusReason)
		}
		return d
	}
	d := completes(w.create(filepath.Join(dir, "job.yml")))
	if d.Compute != "serverless_local-quarter" || d.Serverless == nil || len(d.Serverless.Nodes) != 1 {
		t.Errorf("compute: serverless ran on %s (%+v), want this machine's cluster serverless_local-quarter", d.Compute, d.Serverless)
	}
	if d := completes(w.create(filepath.Join(dir, "plain.yml"))); d.Compute != "local" {
		t.Errorf("a job with no compute ran on %s, want local (default_compute unset, no pool configured)", d.Compute)
	}
	var cs []api.Compute
	w.jsonOut(&cs, "compute", "list", "-o", "json")
	var pool *api.Compute
	for i := range cs {
		if cs[i].Name == "serverless" {
			pool = &cs[i]
		}
	}
	if pool == nil || pool.Type != "serverless" || pool.ServerlessPool == nil || pool.ServerlessPool.Configured ||
		pool.ServerlessPool.Capacity != "this machine; no pool configured" {
		t.Errorf("compute list's serverless pool: %+v", pool)
	}

	w.ok("settings", "set", "default_compute", "serverless")
	if d := completes(w.create(filepath.Join(dir, "plain.yml"))); d.Compute != "serverless_local-quarter" {
		t.Errorf("with default_compute serverless a job with no compute ran on %s", d.Compute)
	}
	p := completes(w.create(filepath.Join(dir, "pipeline.yml")))
	if p.Compute != "serverless" {
		t.Errorf("the pipeline shows compute %s, want serverless", p.Compute)
	}
}
