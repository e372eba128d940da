package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/studio"
)

// fakeStudioAPI serves the studio's files and a handcrafted workspace API (runs by name, a
// pipeline's steps) that a test changes while the page is open: every state a pipeline's graph
// can show, at once and at chosen times, without waiting for real runs to reach them.
type fakeStudioAPI struct {
	mu    sync.Mutex
	runs  map[string]api.RunDetail
	steps map[string]api.PipelineDetail
}

func newFakeStudioAPI(t *testing.T) (*fakeStudioAPI, string) {
	t.Helper()
	f := &fakeStudioAPI{runs: map[string]api.RunDetail{}, steps: map[string]api.PipelineDetail{}}
	mux := http.NewServeMux()
	mux.Handle("GET /", studio.Handler())
	mux.HandleFunc("GET /api/jobs/{name}", func(w http.ResponseWriter, r *http.Request) {
		f.answer(w, func() (any, bool) { d, ok := f.runs[r.PathValue("name")]; return d, ok })
	})
	mux.HandleFunc("GET /api/jobs/{name}/steps", func(w http.ResponseWriter, r *http.Request) {
		f.answer(w, func() (any, bool) { d, ok := f.steps[r.PathValue("name")]; return d, ok })
	})
	// A step's own page reads its log, metrics and outputs: it has none.
	mux.HandleFunc("GET /api/jobs/{name}/logs", func(w http.ResponseWriter, r *http.Request) {
		f.answer(w, func() (any, bool) { return api.LogsResponse{Lines: []job.LogLine{}, Done: true}, true })
	})
	mux.HandleFunc("GET /api/jobs/{name}/metrics", func(w http.ResponseWriter, r *http.Request) {
		f.answer(w, func() (any, bool) { return api.MetricsResponse{Metrics: []job.Metric{}}, true })
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/"
}

func (f *fakeStudioAPI) answer(w http.ResponseWriter, get func() (any, bool)) {
	f.mu.Lock()
	v, ok := get()
	b, err := json.Marshal(v)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok || err != nil {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":"not found (%v)"}`, err)
		return
	}
	_, _ = w.Write(b)
}

// setRun stores a run's detail as GET /api/jobs/{name} answers it.
func (f *fakeStudioAPI) setRun(d api.RunDetail) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[d.ID] = d
}

func (f *fakeStudioAPI) setSteps(name string, d api.PipelineDetail) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps[name] = d
}

// xssReason would run script if the page inserted a step's reason as markup.
const xssReason = `exit code 1: <img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`

// fakePipeline is a six-step pipeline seen mid-way: prep reused from an earlier run, a nested
// pipeline "train" (fit done, eval running for 65 s), report failed (with continue_on_step_
// failure) so that publish is skipped, and score waiting for train and prep.
func fakePipeline(now time.Time) api.PipelineDetail {
	at := func(secs int) *time.Time { t := now.Add(time.Duration(secs) * time.Second); return &t }
	return api.PipelineDetail{Steps: []api.PipelineStep{
		{Name: "prep", Type: "command", Compute: "local", State: "completed", ReusedFrom: "old_prep", Status: job.Completed},
		{Name: "train.fit", Group: "train", Type: "command", Compute: "gpu", Deps: []string{"prep"}, State: "completed",
			RunID: "p_train_fit", Status: job.Completed, Started: at(-200), Ended: at(-117)},
		{Name: "train.eval", Group: "train", Type: "command", Compute: "gpu", Deps: []string{"train.fit"}, State: "running",
			RunID: "p_train_eval", Status: job.Running, Started: at(-65)},
		{Name: "score", Type: "command", Compute: "vm", Deps: []string{"train.eval", "prep"}},
		{Name: "report", Type: "command", Compute: "local", Deps: []string{"prep"}, State: "failed", RunID: "p_report",
			Status: job.Failed, Reason: xssReason, Started: at(-100), Ended: at(-90)},
		{Name: "publish", Type: "command", Compute: "local", Deps: []string{"report"}, State: "skipped", Reason: "report failed"},
	}}
}

// The pipeline graph, read as the user sees it against a handcrafted API answer: a node per
// step with its state, duration and link (a reused step linking the run it reused, marked as
// such), an edge per dependency, the nested pipeline's steps boxed together in their columns,
// the failed and skipped steps' reasons on hover (as text), the running step's duration
// counting, live updates to the end, and the links between a step's page and its pipeline.
func TestStudioPipelineGraph(t *testing.T) {
	ctx := browser(t)
	f, base := newFakeStudioAPI(t)
	now := time.Now()
	parent := api.RunDetail{Run: job.Run{ID: "p", Status: job.Running, Compute: "local", CreatedAt: now.Add(-5 * time.Minute),
		StartedAt: ptrTime(now.Add(-4 * time.Minute)), Spec: job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{}}}}
	f.setRun(parent)
	pd := fakePipeline(now)
	f.setSteps("p", pd)
	for _, s := range pd.Steps {
		if s.RunID != "" {
			f.setRun(api.RunDetail{Run: job.Run{ID: s.RunID, Status: s.Status, Compute: s.Compute, CreatedAt: now, Spec: job.Spec{Type: "command"}},
				PipelineOf: &api.PipelineOf{Pipeline: "p", Step: s.Name}})
		}
	}
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open("#/jobs/p")
	p.wait("the pipeline's graph", `document.querySelectorAll('#pipeline-graph g.step').length === 6`)
	p.shot("1-running")

	studioPipelineNodes(t, p, pd)
	studioPipelineShape(t, p)
	studioPipelineHover(t, p)

	// The running step's duration counts while the page waits for the next answer.
	var first string
	p.eval(`document.querySelector('#pipeline-graph g[data-step="train.eval"] text.state').textContent`, &first)
	if !strings.HasPrefix(first, "running · 1m ") {
		t.Errorf("train.eval shows %q, want running for a minute and more", first)
	}
	p.wait("train.eval's duration to count", fmt.Sprintf(`document.querySelector('#pipeline-graph g[data-step="train.eval"] text.state').textContent !== %q`, first))

	// Live: eval ends, score starts, then the pipeline ends failed, naming its failing step.
	pd.Steps[2].State, pd.Steps[2].Status, pd.Steps[2].Ended = "completed", job.Completed, ptrTime(now.Add(10*time.Second))
	pd.Steps[3].State, pd.Steps[3].RunID, pd.Steps[3].Status, pd.Steps[3].Started = "running", "p_score", job.Running, ptrTime(now)
	f.setSteps("p", pd)
	p.wait("score running and eval completed", `document.querySelector('#pipeline-graph g[data-step="score"]').dataset.state === 'running' && `+
		`document.querySelector('#pipeline-graph g[data-step="train.eval"] text.state').textContent === 'completed · 1m 15s' && `+
		`document.querySelector('#pipeline-graph g[data-step="score"] a').getAttribute('href') === '#/jobs/p_score'`)
	pd.Steps[3].State, pd.Steps[3].Status, pd.Steps[3].Ended = "completed", job.Completed, ptrTime(now.Add(3*time.Second))
	pd.Reason = "step report failed; publish skipped"
	f.setSteps("p", pd)
	parent.Status, parent.StatusReason, parent.EndedAt = job.Failed, pd.Reason, ptrTime(now)
	f.setRun(parent)
	p.wait("the pipeline's end", `document.querySelector('#pipeline').dataset.status === 'Failed' && `+
		`document.querySelector('#pipeline-reason').textContent === 'step report failed; publish skipped' && `+
		`document.querySelectorAll('#pipeline-graph g.step[data-state="completed"]').length === 4`)
	var summary string
	p.eval(`document.querySelector('#pipeline-summary').textContent`, &summary)
	if want := "6 steps: 4 completed, 1 failed, 1 skipped, 1 reused from earlier runs"; summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}
	p.shot("2-failed")

	// A step opens its run's page, which names its pipeline and links back.
	if err := chromedp.Run(ctx, chromedp.Click(`#pipeline-graph g[data-step="train.fit"] rect.box`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p.wait("train.fit's run page", `document.querySelector('h1')?.textContent === 'p_train_fit'`)
	p.wait("the link back to its pipeline", `[...document.querySelectorAll('dl.facts dd')].some(dd => dd.textContent === 'p (step train.fit)' && dd.querySelector('a[href="#/jobs/p"]'))`)
	if n := p.int(`document.querySelectorAll('#pipeline').length`); n != 0 {
		t.Errorf("a step's page draws a pipeline graph (%d)", n)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`dl.facts dd a[href="#/jobs/p"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p.wait("the pipeline's page again", `document.querySelectorAll('#pipeline-graph g.step').length === 6`)
}

func ptrTime(t time.Time) *time.Time { return &t }

// stepView is what the page shows of one step, in the graph and in the table.
type stepView struct {
	State, Href, Name, StateText, Run, Row, RowState, RowDuration string
	Reused                                                        bool
}

const stepViewJS = `(name) => { const g = document.querySelector('#pipeline-graph g.step[data-step="' + name + '"]');
	const r = document.querySelector('#pipeline-steps tr[data-step="' + name + '"]');
	const a = g.querySelector('a');
	return { state: g.dataset.state, href: a ? a.getAttribute('href') : '', name: g.querySelector('text.name').textContent,
		stateText: g.querySelector('text.state').textContent, run: g.querySelector('text.run').textContent,
		reused: g.classList.contains('reused') && !!r.querySelector('.reused-mark'),
		row: r.cells[0].textContent, rowState: r.querySelector('.badge').dataset.state, rowDuration: r.cells[2].textContent }; }`

// studioPipelineNodes checks every step's node and row against the API's answer.
func studioPipelineNodes(t *testing.T, p page, pd api.PipelineDetail) {
	t.Helper()
	want := map[string]stepView{
		"prep":       {State: "completed", Href: "#/jobs/old_prep", Name: "prep", StateText: "completed · reused", Run: "old_prep", Reused: true},
		"train.fit":  {State: "completed", Href: "#/jobs/p_train_fit", Name: "fit", StateText: "completed · 1m 23s", Run: "p_train_fit", RowDuration: "1m 23s"},
		"train.eval": {State: "running", Href: "#/jobs/p_train_eval", Name: "eval", Run: "p_train_eval"},
		"score":      {State: "", Name: "score", StateText: "waiting", Run: "on vm"},
		"report":     {State: "failed", Href: "#/jobs/p_report", Name: "report", StateText: "failed · 10s", Run: "p_report", RowDuration: "10s"},
		"publish":    {State: "skipped", Name: "publish", StateText: "skipped", Run: "on local"},
	}
	for _, s := range pd.Steps {
		var got stepView
		p.eval(`(`+stepViewJS+`)(`+jsString(s.Name)+`)`, &got)
		w := want[s.Name]
		w.Row, w.RowState = s.Name, w.State
		if s.Name == "train.eval" { // counting: checked on its own
			w.StateText, w.RowDuration = got.StateText, got.RowDuration
		}
		if got != w {
			t.Errorf("step %s shows\n %+v\nwant\n %+v", s.Name, got, w)
		}
	}
}

// studioPipelineShape checks the graph's shape: an edge per dependency, a column per depth
// from left to right, and the nested pipeline's box holding its two steps and no other.
func studioPipelineShape(t *testing.T, p page) {
	t.Helper()
	var edges []string
	p.eval(`[...document.querySelectorAll('#pipeline-graph path.edge')].map(e => e.dataset.from + '>' + e.dataset.to).sort()`, &edges)
	if got, want := strings.Join(edges, " "), "prep>report prep>score prep>train.fit report>publish train.eval>score train.fit>train.eval"; got != want {
		t.Errorf("edges %s, want %s", got, want)
	}
	if n := p.int(`document.querySelector('#pipeline-graph svg').dataset.edges`); n != 6 {
		t.Errorf("data-edges = %d, want 6", n)
	}
	// An edge never runs behind a step it neither leaves nor enters (prep's edge to score would
	// otherwise read as report's and publish's).
	var behind []string
	p.eval(`(() => { const boxes = [...document.querySelectorAll('#pipeline-graph g.step')].map(g => [g.dataset.step, g.querySelector('rect.box').getBoundingClientRect()]);
		const svg = document.querySelector('#pipeline-graph svg').getBoundingClientRect(), out = [];
		for (const e of document.querySelectorAll('#pipeline-graph path.edge')) {
			const len = e.getTotalLength();
			for (let l = 0; l <= len; l += 4) {
				const pt = e.getPointAtLength(l), x = svg.left + pt.x, y = svg.top + pt.y;
				for (const [name, r] of boxes) if (name !== e.dataset.from && name !== e.dataset.to && x > r.left && x < r.right && y > r.top && y < r.bottom) out.push(e.dataset.from + '>' + e.dataset.to + ' behind ' + name);
			}
		}
		return [...new Set(out)]; })()`, &behind)
	if len(behind) > 0 {
		t.Errorf("edges run behind steps: %v", behind)
	}
	var left map[string]int
	p.eval(`Object.fromEntries([...document.querySelectorAll('#pipeline-graph g.step')].map(g => [g.dataset.step, Math.round(g.getBoundingClientRect().left)]))`, &left)
	cols := [][]string{{"prep"}, {"report", "train.fit"}, {"publish", "train.eval"}, {"score"}}
	for i, col := range cols {
		for _, s := range col {
			if left[s] != left[col[0]] {
				t.Errorf("%s is at x %d, %s at %d: want the same column", s, left[s], col[0], left[col[0]])
			}
			if i > 0 && left[s] <= left[cols[i-1][0]] {
				t.Errorf("%s (x %d) is not right of %s (x %d)", s, left[s], cols[i-1][0], left[cols[i-1][0]])
			}
		}
	}
	var inside []string
	p.eval(`(() => { const b = document.querySelector('#pipeline-graph g.group[data-group="train"] rect').getBoundingClientRect();
		return [...document.querySelectorAll('#pipeline-graph g.step')].filter(g => { const r = g.querySelector('rect.box').getBoundingClientRect();
			return r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top; }).map(g => g.dataset.step).sort(); })()`, &inside)
	if got := strings.Join(inside, ","); got != "train.eval,train.fit" {
		t.Errorf("the box of group train overlaps steps %s, want train.eval,train.fit", got)
	}
	var label string
	p.eval(`document.querySelector('#pipeline-graph g.group[data-group="train"] text').textContent`, &label)
	if label != "train" {
		t.Errorf("group box labelled %q, want train", label)
	}
}

// studioPipelineHover checks that hovering the failed and skipped steps says why, as text.
func studioPipelineHover(t *testing.T, p page) {
	t.Helper()
	for step, want := range map[string]string{"report": xssReason, "publish": "report failed"} {
		var got struct{ Hover, Title string }
		p.eval(`(() => { const g = document.querySelector('#pipeline-graph g.step[data-step="`+step+`"]');
			g.dispatchEvent(new MouseEvent('mouseenter'));
			return { hover: document.querySelector('.hover-step').textContent, title: g.querySelector('title').textContent }; })()`, &got)
		if !strings.HasPrefix(got.Hover, step+" · ") || !strings.Contains(got.Hover, " · "+want) || !strings.Contains(got.Title, want) {
			t.Errorf("hovering %s shows %q (title %q), want its reason %q", step, got.Hover, got.Title, want)
		}
		var row string
		p.eval(`document.querySelector('#pipeline-steps tr[data-step="`+step+`"]').cells[5].textContent`, &row)
		if row != want {
			t.Errorf("%s's row says why %q, want %q", step, row, want)
		}
	}
	var xss bool
	p.eval(`window.__xss !== undefined || !!document.querySelector('#pipeline img, #pipeline script')`, &xss)
	if xss {
		t.Error("a step's reason was inserted as markup")
	}
}

// pipelineStep writes its name and what it read to its output; prep takes 4 s (long enough for
// the page to see it running), and a step given --fail 1 fails after writing.
const pipelineStep = `import argparse, os, sys, time
p = argparse.ArgumentParser()
p.add_argument("--name", required=True)
p.add_argument("--out", required=True)
p.add_argument("--inp", action="append", default=[])
p.add_argument("--fail", default="0")
a = p.parse_args()
if a.name == "prep":
    time.sleep(4)
text = a.name + "(" + ",".join(open(os.path.join(i, "data.txt")).read() for i in a.inp) + ")"
os.makedirs(a.out, exist_ok=True)
with open(os.path.join(a.out, "data.txt"), "w") as f:
    f.write(text)
if a.fail == "1":
    sys.exit(a.name + " fails on purpose")
`

// pipelineDiamond: prep feeds left and right, join reads both; right fails while the pipeline
// input fail_right is 1, and the pipeline goes on with left (continue_on_step_failure).
const pipelineDiamond = `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: studio diamond
inputs:
  fail_right: 1
outputs:
  final: {mode: upload}
settings:
  default_compute: local
  continue_on_step_failure: true
jobs:
  prep:
    type: command
    code: src
    command: python3 step.py --name prep --out ${{outputs.data}}
    outputs:
      data:
        type: uri_folder
  left:
    type: command
    code: src
    command: python3 step.py --name left --inp ${{inputs.prepped}} --out ${{outputs.data}}
    inputs:
      prepped: ${{parent.jobs.prep.outputs.data}}
    outputs:
      data:
        type: uri_folder
  right:
    type: command
    code: src
    command: python3 step.py --name right --inp ${{inputs.prepped}} --out ${{outputs.data}} --fail ${{inputs.fail}}
    inputs:
      prepped: ${{parent.jobs.prep.outputs.data}}
      fail: ${{parent.inputs.fail_right}}
    outputs:
      data:
        type: uri_folder
  join:
    type: command
    code: src
    command: python3 step.py --name join --inp ${{inputs.a}} --inp ${{inputs.b}} --out ${{outputs.data}}
    inputs:
      a: ${{parent.jobs.left.outputs.data}}
      b: ${{parent.jobs.right.outputs.data}}
    outputs:
      data: ${{parent.outputs.final}}
`

// A real pipeline's page in the studio, read as the user sees it: opened as the pipeline starts,
// it follows it to its end by itself (prep seen running); a node per step with the state and
// run the API gives, an edge per dependency, the failed step's and the skipped step's reasons on
// hover. A rerun that no longer fails marks prep and left reused, each linking the run whose
// outputs it took, and a step's page links back to its pipeline.
func TestStudioPipelinePage(t *testing.T) {
	ctx := browser(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"src/step.py": pipelineStep, "pipeline.yml": pipelineDiamond})
	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, _ := strings.Cut(link, "#login=")
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open(strings.TrimPrefix(link, base))
	p.wait("the jobs list", `!!document.querySelector('#jobs')`)

	first := w.create(filepath.Join(dir, "pipeline.yml"))
	p.open("#/jobs/" + first)
	p.wait("prep running in the graph", `!!document.querySelector('#pipeline-graph g.step[data-step="prep"][data-state="running"]')`)
	p.shot("1-running")
	d := w.waitStatus(first, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Failed || d.Pipeline == nil || len(d.Pipeline.Steps) != 4 {
		t.Fatalf("pipeline %s is %s (%s) with %+v, want Failed with 4 steps", first, d.Status, d.StatusReason, d.Pipeline)
	}
	p.wait("the pipeline's end on its page", fmt.Sprintf(`document.querySelector('#pipeline')?.dataset.status === 'Failed' && `+
		`document.querySelector('#pipeline-reason').textContent === %q`, d.Pipeline.Reason))
	p.shot("2-failed")
	want := map[string]string{"prep": "completed", "left": "completed", "right": "failed", "join": "skipped"}
	studioPipelineAgainstAPI(t, p, d.Pipeline, want)
	for _, step := range []string{"right", "join"} {
		s := pipelineStepNamed(t, d.Pipeline, step)
		var hover string
		p.eval(`(() => { document.querySelector('#pipeline-graph g.step[data-step="`+step+`"]').dispatchEvent(new MouseEvent('mouseenter'));
			return document.querySelector('.hover-step').textContent; })()`, &hover)
		if s.Reason == "" || !strings.Contains(hover, " · "+s.Reason) {
			t.Errorf("hovering %s shows %q, want its reason %q", step, hover, s.Reason)
		}
	}

	// The rerun takes prep's and left's outputs from the first run and says so.
	second := w.create(filepath.Join(dir, "pipeline.yml"), "--set", "inputs.fail_right=0")
	d2 := w.waitStatus(second, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d2.Status != job.Completed || d2.Pipeline == nil {
		t.Fatalf("rerun %s is %s (%s), want Completed", second, d2.Status, d2.StatusReason)
	}
	p.open("#/jobs/" + second)
	p.wait("the rerun's graph", `document.querySelector('#pipeline')?.dataset.status === 'Completed' && document.querySelectorAll('#pipeline-graph g.step').length === 4`)
	p.shot("3-rerun")
	studioPipelineAgainstAPI(t, p, d2.Pipeline, map[string]string{"prep": "completed", "left": "completed", "right": "completed", "join": "completed"})
	for _, step := range []string{"prep", "left"} {
		was := pipelineStepNamed(t, d.Pipeline, step).RunID
		var got struct{ Reused, Href, State, Run string }
		p.eval(`(() => { const g = document.querySelector('#pipeline-graph g.step[data-step="`+step+`"]');
			return { reused: g.dataset.reused || '', href: g.querySelector('a').getAttribute('href'),
				state: g.querySelector('text.state').textContent, run: g.querySelector('text.run').textContent }; })()`, &got)
		if got.Reused != was || got.Href != "#/jobs/"+was || got.State != "completed · reused" || !elidedFrom(got.Run, was) {
			t.Errorf("rerun's %s shows %+v, want reused from the first run's %s, linked", step, got, was)
		}
	}

	// The pipeline's output is join's, downloadable from the pipeline's page.
	p.wait("the pipeline's output", `!!document.querySelector('#outputs a[download="data.txt"]')`)
	var final string
	p.eval(`fetch(document.querySelector('#outputs a[download="data.txt"]').href).then(r => r.text())`, &final,
		func(e *runtime.EvaluateParams) *runtime.EvaluateParams { return e.WithAwaitPromise(true) })
	if want := "join(left(prep()),right(prep()))"; final != want {
		t.Errorf("the pipeline's output final holds %q, want %q", final, want)
	}

	// A step opens its run, whose page links back to its pipeline.
	right := pipelineStepNamed(t, d2.Pipeline, "right").RunID
	if err := chromedp.Run(ctx, chromedp.Click(`#pipeline-graph g[data-step="right"] rect.box`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p.wait("right's run page", fmt.Sprintf(`document.querySelector('h1')?.textContent === %q`, right))
	p.wait("the link back to its pipeline", fmt.Sprintf(`[...document.querySelectorAll('dl.facts dd')].some(dd => dd.textContent === %q && dd.querySelector('a[href=%q]'))`,
		second+" (step right)", "#/jobs/"+second))
}

func pipelineStepNamed(t *testing.T, pd *api.PipelineDetail, name string) api.PipelineStep {
	t.Helper()
	for _, s := range pd.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %s in %+v", name, pd.Steps)
	return api.PipelineStep{}
}

// studioPipelineAgainstAPI checks the graph against the API's steps: a node per step in the
// state wanted, linking its run (or the run it reused), and an edge per dependency.
func studioPipelineAgainstAPI(t *testing.T, p page, pd *api.PipelineDetail, want map[string]string) {
	t.Helper()
	var nodes map[string][2]string
	p.eval(`Object.fromEntries([...document.querySelectorAll('#pipeline-graph g.step')].map(g =>
		[g.dataset.step, [g.dataset.state, g.querySelector('a')?.getAttribute('href') || '']]))`, &nodes)
	if len(nodes) != len(pd.Steps) {
		t.Errorf("the graph has nodes %v, want one per step of %d", nodes, len(pd.Steps))
	}
	deps := 0
	for _, s := range pd.Steps {
		deps += len(s.Deps)
		href := ""
		if id := s.RunID + s.ReusedFrom; id != "" {
			href = "#/jobs/" + id
		}
		if got := nodes[s.Name]; got != [2]string{want[s.Name], href} || s.State != want[s.Name] {
			t.Errorf("step %s: node %v, API %s %q, want %s linking %q", s.Name, got, s.State, s.RunID, want[s.Name], href)
		}
	}
	if n := p.int(`document.querySelectorAll('#pipeline-graph path.edge').length`); n != deps || deps != 4 {
		t.Errorf("%d edges drawn, want one per dependency (%d; the diamond has 4)", n, deps)
	}
}

// elidedFrom reports whether shown is whole, or whole but for its middle taken out for "…" (the
// graph's boxes shorten a long run name that way; hovering shows it whole).
func elidedFrom(shown, whole string) bool {
	if shown == whole {
		return true
	}
	head, tail, ok := strings.Cut(shown, "…")
	return ok && len(head)+len(tail) >= len(whole)/2 && strings.HasPrefix(whole, head) && strings.HasSuffix(whole, tail) &&
		len(head)+len(tail) < len(whole)
}
