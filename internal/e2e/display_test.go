package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// durationLine finds "<total> (waited <wait> to start, ran <ran>)" in what job show or job
// stream printed, and parses the three durations.
func durationLine(t *testing.T, out, prefix string) (total, waited, ran time.Duration) {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(prefix) + `\s*(\S+) \(waited (\S+) to start, ran (\S+)\)`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q<total> (waited <wait> to start, ran <ran>) in:\n%s", prefix, out)
	}
	var ds [3]time.Duration
	for i, s := range m[1:] {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("duration %q in %q: %v", s, m[0], err)
		}
		ds[i] = d
	}
	return ds[0], ds[1], ds[2]
}

// A job that waits its turn says how long it took as its user counts it: from job create to its
// end, with the wait and the run apart. Before, job show and job stream said "Completed after
// 379ms" (the running phase alone) for a job that had waited seconds.
func TestDisplayJobDurationCountsTheWait(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"one.yml":   "name: one-at-a-time\ntype: local\nmax_concurrent_runs: 1\n",
		"first.yml": "command: sleep 3\ncompute: one-at-a-time\n",
		"next.yml":  "command: echo next\ncompute: one-at-a-time\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "one.yml"))
	first := w.create(filepath.Join(dir, "first.yml"))
	w.waitStatus(first, time.Minute, job.Running)
	next := w.create(filepath.Join(dir, "next.yml")) // waits for the first to end
	r := w.run("job", "stream", next)
	if r.code != 0 {
		t.Fatalf("job stream %s: exit %d\n%s", next, r.code, r.stderr)
	}
	total, waited, ran := durationLine(t, r.stderr, "Job "+next+" Completed, exit code 0 after")
	// Each is rounded to 0.1 s (or 1 ms under a second) as printed.
	if diff := total - waited - ran; waited < 1500*time.Millisecond || diff < -100*time.Millisecond || diff > 100*time.Millisecond {
		t.Errorf("job stream: total %s, waited %s, ran %s; want a wait of seconds behind the first job, and total = waited + ran:\n%s",
			total, waited, ran, r.stderr)
	}
	show := w.ok("job", "show", next).stdout
	if st, sw, sr := durationLine(t, show, "Duration:"); st != total || sw != waited || sr != ran {
		t.Errorf("job show Duration: %s, %s, %s; job stream said %s, %s, %s:\n%s", st, sw, sr, total, waited, ran, show)
	}
}

// One identity everywhere: a job's creator is the user its request authenticated as, the name
// whoami prints. Before, the local owner was admin in whoami but the OS user (root) on its jobs.
func TestDisplayJobCreatorIsWhoAmI(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": "command: echo hi\n"})
	var me api.WhoAmI
	if err := json.Unmarshal([]byte(w.ok("whoami", "-o", "json").stdout), &me); err != nil || me.User == "" {
		t.Fatalf("whoami -o json: %+v %v", me, err)
	}
	creator := func(run func(args ...string) result, name string) (string, *api.CreationContext) {
		t.Helper()
		show := run("job", "show", name)
		var d api.RunDetail
		if err := json.Unmarshal([]byte(run("job", "show", name, "-o", "json").stdout), &d); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^Submitted by:\s*(\S+)$`).FindStringSubmatch(show.stdout)
		if m == nil {
			t.Fatalf("job show has no Submitted by line:\n%s", show.stdout)
		}
		return m[1], d.CreationContext
	}
	mine := w.create(filepath.Join(dir, "job.yml"))
	if by, cc := creator(w.ok, mine); by != me.User || cc == nil || cc.CreatedBy != me.User || cc.CreatedByType != "User" {
		t.Errorf("the local owner's job: Submitted by %q, creation_context %+v; whoami says %q", by, cc, me.User)
	}

	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(w.ok("user", "create", "carl", "--role", "contributor").stdout)
	carl := w.user(si.URL)
	if r := carl.run(token, "login", "--with-token"); r.code != 0 {
		t.Fatalf("carl's login: exit %d, %s", r.code, r.stderr)
	}
	var carlMe api.WhoAmI
	if err := json.Unmarshal([]byte(carl.ok("whoami", "-o", "json").stdout), &carlMe); err != nil || carlMe.User != "carl" {
		t.Fatalf("carl's whoami: %+v %v", carlMe, err)
	}
	var d api.RunDetail
	if err := json.Unmarshal([]byte(carl.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "-o", "json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	if by, cc := creator(carl.ok, d.ID); by != "carl" || cc == nil || cc.CreatedBy != "carl" {
		t.Errorf("carl's job: Submitted by %q, creation_context %+v; want carl", by, cc)
	}
	// Each lists their own with --mine.
	for who, run := range map[string]func(args ...string) result{me.User: w.ok, "carl": carl.ok} {
		var runs []api.RunDetail
		if err := json.Unmarshal([]byte(run("job", "list", "--mine", "-o", "json").stdout), &runs); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{me.User: mine, "carl": d.ID}[who]
		if len(runs) != 1 || runs[0].ID != want {
			t.Errorf("%s's job list --mine: %d jobs, want only %s", who, len(runs), want)
		}
	}
}

// computeStates is compute list -o json's state of each target.
func computeStates(w *ws) map[string]string {
	w.t.Helper()
	var cs []api.Compute
	if err := json.Unmarshal([]byte(w.ok("compute", "list", "-o", "json").stdout), &cs); err != nil {
		w.t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range cs {
		out[c.Name] = c.State
	}
	return out
}

// compute list shows each kind's real state: a stopped instance reads stopped (it read ready), a
// configured serverless pool and a cluster their nodes (the pool read unsupported), the local
// target ready; the table shows the same as the JSON.
func TestDisplayComputeListStates(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"dev.yml":        "name: dev1\ntype: computeinstance\nsize: local-quarter\n",
		"pool.yml":       "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 3\n",
		"serverless.yml": serverlessPoolYAML,
		"job.yml":        "command: sleep 30\ncompute: serverless\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "dev.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "serverless.yml"))
	w.waitInstance("dev1", 2*time.Minute, "Running")
	if got := computeStates(w)["dev1"]; got != "running" {
		t.Errorf("a running instance's state: %q, want running", got)
	}
	w.ok("compute", "stop", "dev1")
	w.waitInstance("dev1", time.Minute, "Stopped")

	run := w.create(filepath.Join(dir, "job.yml"))
	w.waitStatus(run, 2*time.Minute, job.Running)
	want := map[string]string{
		"local": "ready", "dev1": "stopped", "pool": "no nodes (up to 3 on demand)",
		"serverless": "1 node (up to 2): 1 busy", "serverless_local-quarter": "1 node (up to 2): 1 busy",
	}
	got := computeStates(w)
	for name, state := range want {
		if got[name] != state {
			t.Errorf("compute list: %s is %q, want %q", name, got[name], state)
		}
	}
	table := w.ok("compute", "list").stdout
	for _, line := range []string{"dev1 ", "serverless "} {
		i := strings.Index(table, line)
		if i < 0 {
			t.Fatalf("compute list has no %q row:\n%s", line, table)
		}
		row, _, _ := strings.Cut(table[i:], "\n")
		if name := strings.TrimSpace(line); !strings.Contains(row, want[name]) {
			t.Errorf("compute list row %q, want state %q", row, want[name])
		}
	}
	w.ok("job", "cancel", run, "--yes")
}

// job create --stream of a pipeline shows each step's changes with its run, the failing step's
// log tail, and exits as the pipeline ended (3: Failed); job stream of the ended pipeline shows
// where each step ended. Before, a pipeline's stream printed nothing until its summary.
func TestDisplayPipelineStreamShowsSteps(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"p.yml": `type: pipeline
settings: {default_compute: azureml:local}
jobs:
  prep:
    command: sleep 2; echo prepared > ${{outputs.data}}/d.txt
    outputs: {data: {type: uri_folder}}
  train:
    command: cat ${{inputs.data}}/d.txt; echo boom-from-train >&2; exit 3
    inputs:
      data: ${{parent.jobs.prep.outputs.data}}
    outputs: {model: {type: uri_folder}}
  score:
    command: echo never
    inputs:
      m: ${{parent.jobs.train.outputs.model}}
`})
	r := w.run("job", "create", "-f", filepath.Join(dir, "p.yml"), "--stream")
	if r.code != 3 {
		t.Fatalf("job create --stream of a failing pipeline: exit %d, want 3\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	step := func(out, name, state string) string { // the step's line, and its run
		t.Helper()
		m := regexp.MustCompile(`(?m)^\[\d\d:\d\d:\d\d\] step ` + name + `(?: \(run (\S+)\))?: ` + state + `.*$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no line for step %s %s in:\n%s", name, state, out)
		}
		return m[1]
	}
	prep := step(r.stdout, "prep", "running")
	if step(r.stdout, "prep", "completed in ") != prep || prep == "" {
		t.Errorf("prep's running and completed lines name different runs:\n%s", r.stdout)
	}
	train := step(r.stdout, "train", "failed")
	step(r.stdout, "score", "skipped")
	for _, want := range []string{"last lines of train's log (all of it: hangar job stream " + train + "):", "  | prepared", "  | boom-from-train"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the stream lacks %q:\n%s", want, r.stdout)
		}
	}
	if !regexp.MustCompile(`Job \S+ Failed after \S+ \(waited`).MatchString(r.stderr) {
		t.Errorf("the summary on stderr: %s", r.stderr)
	}
	pl := regexp.MustCompile(`Created job (\S+)`).FindStringSubmatch(r.stderr)
	if pl == nil {
		t.Fatalf("no Created job line: %s", r.stderr)
	}
	again := w.run("job", "stream", pl[1])
	if again.code != 3 || step(again.stdout, "train", "failed") != train || !strings.Contains(again.stdout, "  | boom-from-train") {
		t.Errorf("job stream of the ended pipeline: exit %d\n%s", again.code, again.stdout)
	}
}

// localAgents maps node id → pid of the local provider's agents that still run in a workspace.
func localAgents(t *testing.T, homeDir string) map[string]int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(homeDir, "local", "nodes", "*", "provider.json"))
	out := map[string]int{}
	for _, f := range files {
		var rec struct {
			NodeID string `json:"node_id"`
			PID    int    `json:"pid"`
		}
		b, err := os.ReadFile(f)
		if err != nil || json.Unmarshal(b, &rec) != nil {
			continue // deleted meanwhile
		}
		if syscall.Kill(rec.PID, 0) == nil && !zombie(rec.PID) {
			out[rec.NodeID] = rec.PID
		}
	}
	return out
}

// hangar server stop stops the idle agents the server started on this machine and says which
// it left running (an agent with a run: its run goes on); --all stops those too; a server
// started again provisions its clusters' nodes afresh. Before, every agent outlived a planned
// stop, idle ones included, and nothing said so.
func TestDisplayServerStopStopsItsIdleAgents(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"warm.yml": "name: warm\ntype: amlcompute\nsize: local-quarter\nmin_instances: 1\nmax_instances: 1\n",
		"busy.yml": "name: busy\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\n",
		"job.yml":  "command: sleep 300\ncompute: busy\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "warm.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "busy.yml"))
	run := w.create(filepath.Join(dir, "job.yml"))
	w.waitStatus(run, 2*time.Minute, job.Running)
	var agents map[string]int
	testwait.Within(t, time.Minute, "an agent for each cluster", func() bool { agents = localAgents(t, w.home); return len(agents) == 2 })
	var warm, busy string
	for id := range agents {
		if strings.HasPrefix(id, "warm") {
			warm = id
		} else {
			busy = id
		}
	}

	r := w.ok("server", "stop")
	for _, want := range []string{"Stopped the server of", "Left running", "the agent of node " + busy + " (pid " + strconv.Itoa(agents[busy]) + ")"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("server stop's stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, warm) {
		t.Errorf("server stop says it left the idle agent %s running:\n%s", warm, r.stderr)
	}
	if left := localAgents(t, w.home); left[warm] != 0 || left[busy] != agents[busy] {
		t.Errorf("after server stop: agents %v; want only %s's (pid %d), the one with a run", left, busy, agents[busy])
	}

	r = w.ok("server", "stop", "--all")
	if want := "Stopped the agent of node " + busy; !strings.Contains(r.stderr, want) {
		t.Errorf("server stop --all's stderr lacks %q:\n%s", want, r.stderr)
	}
	if left := localAgents(t, w.home); len(left) != 0 {
		t.Errorf("after server stop --all: agents %v still run", left)
	}

	w.startServer()
	const want = "1 node (up to 1): 1 idle"
	var state string
	if !testwait.Until(time.Now().Add(time.Minute), func() bool { state = computeStates(w)["warm"]; return state == want }) {
		t.Fatalf("after a minute, warm is %q; want %q (a new idle node)", state, want)
	}
}
