package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// sweepStudioTrain reports acc three times, best near lr 0.3 and wd 1e-3 with adam. Trial 1
// (its run is named <sweep>_1) fails after its reports, so that the plot has a failed trial.
const sweepStudioTrain = `import argparse, json, math, os, sys, time
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, required=True)
p.add_argument("--wd", type=float, required=True)
p.add_argument("--opt", required=True)
p.add_argument("--pause", type=float, default=0)
a = p.parse_args()
acc = 1 - (a.lr - 0.3) ** 2 - 0.01 * abs(math.log10(a.wd) + 3) - (0 if a.opt == "adam" else 0.05)
failing = os.environ["HANGAR_RUN_ID"].endswith("_1")
for step in range(3):
    with open(os.environ["HANGAR_METRICS_FILE"], "a") as f:
        f.write(json.dumps({"name": "acc", "value": acc - (2 - step) * 0.01 - (0.5 if failing else 0), "step": step}) + "\n")
    time.sleep(a.pause)
if failing:
    sys.exit("this trial fails on purpose")
`

const sweepStudioYAML = `type: sweep
trial:
  code: src
  command: python3 train.py --lr ${{search_space.lr}} --wd ${{search_space.wd}} --opt ${{search_space.opt}} --pause ${{inputs.pause}}
inputs:
  pause: 2
compute: local
sampling_algorithm: {type: random, seed: 11}
search_space:
  lr: {type: uniform, min_value: 0.05, max_value: 0.6}
  wd: {type: loguniform, min_value: -9, max_value: -2}
  opt: {type: choice, values: [sgd, adam]}
objective: {goal: maximize, primary_metric: acc}
limits: {max_total_trials: 4, max_concurrent_trials: 2}
`

// A sweep's page in the studio, read as the user sees it while the sweep runs and once it
// ended: the trials table with each trial's parameters and the best trial marked, one line per
// reported trial in the parallel-coordinates plot (a log axis for the loguniform parameter, a
// categorical one for the choice, the failed trial dashed), the best-so-far curve, and the
// links between the sweep and its trials.
func TestStudioSweepPage(t *testing.T) {
	ctx := browser(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"src/train.py": sweepStudioTrain, "sweep.yml": sweepStudioYAML})
	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, _ := strings.Cut(link, "#login=")
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open(strings.TrimPrefix(link, base))
	p.wait("the jobs list", `!!document.querySelector('#jobs')`)

	// The page is opened as the sweep starts (its trials take 6 s or more); it must reach the
	// end by itself (live updates).
	name := w.create(filepath.Join(dir, "sweep.yml"))
	p.open("#/jobs/" + name)
	p.wait("a running trial in the table", `!!document.querySelector('#sweep-trials .badge[data-status="Running"]')`)
	p.shot("1-running")
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Sweep == nil || len(d.Sweep.Trials) != 4 || d.Sweep.BestChildRunID == "" {
		t.Fatalf("sweep %s is %s (%s) with %+v, want 4 trials and a best one", name, d.Status, d.StatusReason, d.Sweep)
	}
	p.wait("the sweep's end on its page", fmt.Sprintf(`document.querySelector('#sweep')?.dataset.status === %q && `+
		`document.querySelectorAll('#sweep-trials tbody tr[data-trial]').length === 4`, d.Status))
	p.shot("2-ended")

	studioSweepTable(t, p, d.Sweep)
	studioSweepPlot(t, p, d.Sweep)

	// Hovering a line names its trial.
	var hover string
	p.eval(`(() => { const g = document.querySelector('#sweep-parallel g.trial-line[data-trial="2"]');
		g.dispatchEvent(new MouseEvent('mouseenter')); return document.querySelector('.hover-trial').textContent; })()`, &hover)
	if !strings.HasPrefix(hover, "trial 2 · "+name+"_2 · ") || !strings.Contains(hover, "acc = ") {
		t.Errorf("hovering trial 2's line shows %q, want the trial named", hover)
	}

	// The best-so-far curve: one point per ended trial that reported, ending at the best value,
	// against time and against the count of trials ended.
	for _, axis := range []string{"time", "trials"} {
		p.open("#/jobs/" + name + "?sweepx=" + axis)
		p.wait("the best-so-far chart by "+axis, `!!document.querySelector('#sweep-best canvas') && document.querySelector('#sweep-best').dataset.points === '4'`)
		var best string
		p.eval(`document.querySelector('#sweep-best').dataset.best`, &best)
		if v, err := strconv.ParseFloat(best, 64); err != nil || v != *d.Sweep.BestMetric {
			t.Errorf("by %s: best so far ends at %q, want the sweep's best %v", axis, best, *d.Sweep.BestMetric)
		}
	}

	// The best trial's link opens its page, which links back to the sweep.
	best := d.Sweep.BestChildRunID
	if err := chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`#sweep-trials tr.best a[href=%q]`, "#/jobs/"+best), chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p.wait("the best trial's page", fmt.Sprintf(`document.querySelector('h1')?.textContent === %q`, best))
	p.wait("the link back to its sweep", fmt.Sprintf(`[...document.querySelectorAll('dl.facts dd a')].some(a => a.textContent === %q)`, name))
	p.wait("the trial's own log", `!!document.querySelector('.log[data-file="std_log.txt"]') && !document.querySelector('#sweep')`)
	p.shot("3-trial")
	if err := chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`dl.facts dd a[href=%q]`, "#/jobs/"+name), chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p.wait("the sweep's page again", `document.querySelectorAll('#sweep-trials tbody tr[data-trial]').length === 4`)
}

// studioSweepTable checks the trials table against the API: a row per trial with its run
// linked, its status and parameters, and the best trial alone marked.
func studioSweepTable(t *testing.T, p page, sd *api.SweepDetail) {
	t.Helper()
	var head []string
	p.eval(`[...document.querySelectorAll('#sweep-trials thead th')].map(th => th.textContent)`, &head)
	if got, want := strings.Join(head, "|"), "#|Run|Status|lr|opt|wd|acc|Stopped"; got != want {
		t.Errorf("table columns %s, want %s", got, want)
	}
	for _, tr := range sd.Trials {
		row := fmt.Sprintf(`document.querySelector('#sweep-trials tr[data-trial="%d"]')`, tr.Index)
		var cells struct {
			Run, Status, Href string
			Params            map[string]string
			Best              bool
		}
		p.eval(`(() => { const r = `+row+`; return { run: r.dataset.run, status: r.querySelector('.badge').dataset.status,
			href: r.querySelector('a').getAttribute('href'), best: r.classList.contains('best') && !!r.querySelector('.best-mark'),
			params: Object.fromEntries([...r.querySelectorAll('td[data-param]')].map(td => [td.dataset.param, td.textContent])) }; })()`, &cells)
		if cells.Run != tr.RunID || cells.Href != "#/jobs/"+tr.RunID || cells.Status != string(tr.Status) {
			t.Errorf("trial %d's row: %+v, want run %s (%s) linked", tr.Index, cells, tr.RunID, tr.Status)
		}
		if cells.Best != (tr.RunID == sd.BestChildRunID) {
			t.Errorf("trial %d's row marked best: %v, want %v", tr.Index, cells.Best, tr.RunID == sd.BestChildRunID)
		}
		var params map[string]any
		if err := json.Unmarshal(tr.Params, &params); err != nil {
			t.Fatal(err)
		}
		for k, v := range params {
			if !sameShown(cells.Params[k], v) {
				t.Errorf("trial %d's %s shows %q, want %v", tr.Index, k, cells.Params[k], v)
			}
		}
	}
	if n := p.int(`document.querySelectorAll('#sweep-trials tr.best').length`); n != 1 {
		t.Errorf("%d rows marked best, want 1", n)
	}
}

// sameShown says whether a table cell shows v (numbers to the 4 or 5 significant digits shown).
func sameShown(cell string, v any) bool {
	f, ok := v.(float64)
	if !ok {
		return cell == fmt.Sprint(v)
	}
	got, err := strconv.ParseFloat(cell, 64)
	return err == nil && math.Abs(got-f) <= 1e-3*math.Abs(f)
}

// studioSweepPlot checks the parallel-coordinates plot: an axis per parameter (log for the
// loguniform one, categorical for the choice) and the metric, a line per reported trial, the
// best one marked and the failed one dashed.
func studioSweepPlot(t *testing.T, p page, sd *api.SweepDetail) {
	t.Helper()
	var axes map[string]string
	p.eval(`Object.fromEntries([...document.querySelectorAll('#sweep-parallel g.axis')].map(g => [g.dataset.axis, g.dataset.scale]))`, &axes)
	if want := map[string]string{"lr": "linear", "wd": "log", "opt": "categorical", "acc": "linear"}; fmt.Sprint(axes) != fmt.Sprint(want) {
		t.Errorf("plot axes %v, want %v", axes, want)
	}
	reported, bestIndex := 0, -1
	for _, tr := range sd.Trials {
		if tr.Metric != nil {
			reported++
		}
		if tr.RunID == sd.BestChildRunID {
			bestIndex = tr.Index
		}
	}
	if n := p.int(`document.querySelectorAll('#sweep-parallel path.trial').length`); n != reported || reported != 4 {
		t.Errorf("plot draws %d lines, want one per reported trial (%d)", n, reported)
	}
	if n := p.int(`document.querySelector('#sweep-parallel svg').dataset.lines`); n != reported {
		t.Errorf("plot's data-lines = %d, want %d", n, reported)
	}
	if n := p.int(`document.querySelector('#sweep-parallel path.trial.best').dataset.trial`); n != bestIndex {
		t.Errorf("the plot marks trial %d best, want %d", n, bestIndex)
	}
	var dashed []string
	p.eval(`[...document.querySelectorAll('#sweep-parallel path.trial[stroke-dasharray]')].map(e => e.dataset.trial)`, &dashed)
	if strings.Join(dashed, ",") != "1" || sd.Trials[1].Status != job.Failed {
		t.Errorf("dashed lines %v (trial 1 is %s), want the failed trial 1's only", dashed, sd.Trials[1].Status)
	}
}
