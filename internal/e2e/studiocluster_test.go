package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// The computes page of a managed cluster, as a user reads it in the browser: why the queued run
// waits, the cluster's node, nodes over time and the scaling timeline with reasons.
func TestStudioClusterPage(t *testing.T) {
	ctx := browser(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"pool.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmin_instances: 0\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
		"long.yml": "command: echo started; while true; do sleep 0.1; done\ncompute: pool\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	first := w.create(filepath.Join(dir, "long.yml"))
	t.Cleanup(func() { w.run("job", "cancel", first, "--yes") })
	w.waitStatus(first, 2*time.Minute, job.Running)
	second := w.create(filepath.Join(dir, "long.yml"))
	t.Cleanup(func() { w.run("job", "cancel", second, "--yes") })
	d := w.waitStatus(second, time.Minute, job.Queued)
	// Its reason settles once the scheduler sees the one node busy (before, it may say the node
	// is being added or starting): the page is read against that one.
	testwait.Within(t, time.Minute, "the waiting run's reason to settle", func() bool {
		d = w.show(second)
		return d.Status == job.Queued && strings.HasPrefix(d.StatusReason, "waiting for running work to free 1 node")
	})

	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, _ := strings.Cut(link, "#login=")
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open(strings.TrimPrefix(link, base))
	p.wait("the jobs list", `!!document.querySelector('#jobs')`)
	p.open("#/computes")
	sec := `document.querySelector('section.compute[data-compute="pool"]')`
	p.wait("the waiting run with its reason", `[...(`+sec+`?.querySelectorAll('tr') || [])].some(r =>
		r.textContent.includes(`+jsString(second)+`) && r.textContent.includes(`+jsString(d.StatusReason)+`))`)
	p.wait("the cluster's node", sec+`?.querySelectorAll('h3 + table.list tbody tr').length >= 1`)
	p.wait("nodes over time", `+(`+sec+`?.querySelector('.chart[data-metric="nodes"]')?.dataset.points || 0) > 0`)
	p.wait("the scaling timeline with reasons", `[...(`+sec+`?.querySelectorAll('table.events tr') || [])].some(r =>
		r.lastElementChild.textContent.trim() !== '')`)
	p.shot("computes-cluster")
}

// jsString quotes s as a JavaScript string literal (a JSON string is one).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
