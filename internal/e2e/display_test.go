package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
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
