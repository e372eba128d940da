package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

const chromiumPath = "/usr/bin/chromium"

// studioTrain prints a line and logs two metrics every 0.3 s; its first line is markup that
// would run script if the studio inserted log lines as HTML.
const studioTrain = `import json, os, sys, time
n = int(sys.argv[1])
print('<img src=x onerror="window.__xss=1;document.title=\'pwned\'"><script>window.__xss=2</script>', flush=True)
os.makedirs("outputs", exist_ok=True)
with open("outputs/model.txt", "w") as f:
    f.write("weights\n")
for i in range(n):
    print(f"step {i} loss {1/(i+1):.4f}", flush=True)
    with open(os.environ["HANGAR_METRICS_FILE"], "a") as f:
        f.write(json.dumps({"name": "loss", "value": 1 / (i + 1), "step": i}) + "\n")
        f.write(json.dumps({"name": "accuracy", "value": i / n, "step": i}) + "\n")
    time.sleep(0.3)
`

// browser starts headless Chromium, kept off the network, with a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (scripts/setup/chromium.sh installs it): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing: run scripts/setup/chromium.sh", chromiumPath)
	}
	// Not t.TempDir: Chromium's helper processes may still write to the profile as the test
	// ends, and t.TempDir fails a test whose directory cannot be removed.
	profile, err := os.MkdirTemp("", "hangar-studio-chromium")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1400, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancelB()
		cancelA()
		_ = os.RemoveAll(profile)
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifactDir is where screenshots go: $HANGAR_TEST_ARTIFACTS, else the test's temp directory.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HANGAR_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// browserWait polls a JavaScript expression until it is true.
func browserWait(t *testing.T, ctx context.Context, timeout time.Duration, what, expr string) {
	t.Helper()
	testwait.Within(t, timeout, what, func() bool {
		var ok bool
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return chromedp.Run(c, chromedp.Evaluate(expr, &ok)) == nil && ok
	})
}

func browserInt(t *testing.T, ctx context.Context, expr string) int {
	t.Helper()
	var s string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`String(`+expr+`)`, &s)); err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	n, _ := strconv.Atoi(s)
	return n
}

// page is a logged-in browser tab on the studio.
type page struct {
	t     *testing.T
	ctx   context.Context
	base  string // the studio's address, without a fragment
	shots string
}

func (p page) open(hash string) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, chromedp.Navigate(p.base+hash)); err != nil {
		p.t.Fatal(err)
	}
}

func (p page) eval(expr string, out any, opts ...chromedp.EvaluateOption) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, chromedp.Evaluate(expr, out, opts...)); err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
}

func (p page) wait(what, expr string) { p.t.Helper(); browserWait(p.t, p.ctx, time.Minute, what, expr) }
func (p page) int(expr string) int    { p.t.Helper(); return browserInt(p.t, p.ctx, expr) }
func (p page) shot(name string)       { p.t.Helper(); screenshot(p.t, p.ctx, p.shots, name) }

// The studio, driven in Chromium against a real server and real runs: log in through the link
// `hangar studio` prints, watch a running job's log and chart grow, compare two runs, and see
// markup in a log line shown as text.
func TestStudioBrowser(t *testing.T) {
	ctx := browser(t)
	shots := artifactDir(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"src/train.py": studioTrain,
		"long.yml": "command: python3 train.py ${{inputs.steps}}\ncode: src\nexperiment_name: studio\n" +
			"display_name: long run\ntags: {team: vision}\ninputs:\n  steps: 400\n",
		"short.yml": "command: python3 train.py 8\ncode: src\nexperiment_name: studio\ndisplay_name: short run\n",
	})
	short := w.create(filepath.Join(dir, "short.yml"))
	w.waitStatus(short, 2*time.Minute, job.Completed)
	long := w.create(filepath.Join(dir, "long.yml"))
	t.Cleanup(func() { w.run("job", "cancel", "-n", long) })
	w.waitStatus(long, 2*time.Minute, job.Running)

	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, ok := strings.Cut(link, "#login=")
	if !ok {
		t.Fatalf("hangar studio printed %q, want a link with #login=", link)
	}
	p := page{t: t, ctx: ctx, base: base, shots: shots}
	p.open(strings.TrimPrefix(link, base))
	p.wait("the jobs list", fmt.Sprintf(`!!document.querySelector('#jobs tr[data-run=%q]')`, long))
	var href string
	p.eval(`location.href`, &href)
	if strings.Contains(href, "login=") {
		t.Errorf("the login code stayed in the address bar: %s", href)
	}
	p.shot("1-jobs")

	if err := chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`#jobs tr[data-run=%q] a`, long), chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	studioLiveJob(p)
	// The command as it ran (inputs bound), not the spec's template.
	p.wait("the bound command", `[...document.querySelectorAll('dl.facts dd')].some(d => d.textContent === 'python3 train.py 400')`)
	p.shot("2-running-job")
	studioLogPane(p)

	// The list's filters are in the link: a search for the long run's display name shows it only.
	p.open("#/jobs?q=long")
	p.wait("the filtered list", fmt.Sprintf(
		`!!document.querySelector('#jobs tr[data-run=%q]') && !document.querySelector('#jobs tr[data-run=%q]')`, long, short))

	// A window of time and a page size are in the link too; "Show more" widens the page.
	p.open("#/jobs?since=1h")
	p.wait("the jobs of the last hour", fmt.Sprintf(
		`!!document.querySelector('#jobs tr[data-run=%q]') && !!document.querySelector('#jobs tr[data-run=%q]')`, long, short))
	p.open("#/jobs?limit=1")
	p.wait("one job and a Show more button", `document.querySelectorAll('#jobs tr[data-run]').length === 1 && !document.querySelector('button.more').hidden`)
	if err := chromedp.Run(ctx, chromedp.Click(`button.more`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p.wait("both jobs after Show more", `document.querySelectorAll('#jobs tr[data-run]').length === 2 && document.querySelector('button.more').hidden`)

	studioCompare(p, short, long)
	p.shot("3-compare")
	studioOutputs(p, short)
	p.shot("4-finished-job")
	p.open("#/computes")
	p.wait("the computes page", `!!document.querySelector('section.compute[data-compute="local"]')`)
	p.shot("5-computes")
	p.open("#/environments")
	p.wait("the environments page", `document.querySelector('.page[data-page="environments"] h1')?.textContent === 'Environments'`)

	// Dark mode follows the system setting.
	dark := emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}})
	if err := chromedp.Run(ctx, dark); err != nil {
		t.Fatal(err)
	}
	// Both metrics on one chart, on a time axis: the choice is in the link.
	p.open("#/jobs/" + long + "?charts=together&axis=time")
	p.wait("one chart of both metrics", `(b => b && b.dataset.series === "2" && +b.dataset.points > 0)(document.querySelector('.chart[data-metric="*"]'))`)
	var bg string
	p.eval(`getComputedStyle(document.body).backgroundColor`, &bg)
	if bg == "rgb(255, 255, 255)" {
		t.Errorf("dark mode: the page's background is %s", bg)
	}
	p.shot("6-running-job-dark")
}

// studioLiveJob checks the running job's page: new log lines arrive, the chart gains points, and
// the markup line is text (no element was made of it, its script never ran).
func studioLiveJob(p page) {
	p.t.Helper()
	p.wait("log lines", `+(document.querySelector('.log')?.dataset.lines||0) > 2`)
	p.wait("a loss chart", `+(document.querySelector('.chart[data-metric="loss"]')?.dataset.points||0) > 0`)
	lines := p.int(`document.querySelector('.log').dataset.lines`)
	points := p.int(`document.querySelector('.chart[data-metric="loss"]').dataset.points`)
	p.wait("more log lines", fmt.Sprintf(`+document.querySelector('.log').dataset.lines > %d`, lines+3))
	p.wait("more chart points", fmt.Sprintf(`+document.querySelector('.chart[data-metric="loss"]').dataset.points > %d`, points+3))
	var logText string
	var xss bool
	p.eval(`document.querySelector('.log').textContent`, &logText)
	p.eval(`window.__xss !== undefined || document.title === 'pwned' || !!document.querySelector('.log img, .log script')`, &xss)
	if !strings.Contains(logText, `<img src=x onerror=`) {
		p.t.Errorf("the markup line is not shown as text; the log pane has %.300q", logText)
	}
	if xss {
		p.t.Error("a log line's markup became page content or ran script")
	}
}

// studioLogPane checks that lines arriving move nothing below the log pane, that the pane
// follows them at the bottom, and that it stays where the reader scrolled up to.
func studioLogPane(p page) {
	p.t.Helper()
	const metricsY = `Math.round(document.querySelector('#metrics').getBoundingClientRect().top + scrollY)`
	top := p.int(metricsY)
	p.wait("a full log pane", `(p => p.scrollHeight > p.clientHeight + 40)(document.querySelector('.log'))`)
	p.wait("the pane to follow new lines", `(p => p.scrollTop + p.clientHeight >= p.scrollHeight - 8)(document.querySelector('.log'))`)
	lines := p.int(`document.querySelector('.log').dataset.lines`)
	p.eval(`document.querySelector('.log').scrollTop = 10`, nil)
	p.wait("more log lines", fmt.Sprintf(`+document.querySelector('.log').dataset.lines > %d`, lines+3))
	if got := p.int(`document.querySelector('.log').scrollTop`); got != 10 {
		p.t.Errorf("the log pane scrolled to %d while the reader was at 10", got)
	}
	if got := p.int(metricsY); got != top {
		p.t.Errorf("the metrics moved from y=%d to y=%d as log lines arrived", top, got)
	}
}

// studioCompare checks the comparison of two runs: a chart per metric with a series per run,
// and a table naming both.
func studioCompare(p page, a, b string) {
	p.t.Helper()
	p.open("#/compare?runs=" + a + "," + b)
	p.wait("compare charts", `document.querySelector('#compare-charts .chart[data-metric="loss"]')?.dataset.series === "2"`)
	var table string
	p.eval(`document.querySelector('#compare-table').textContent`, &table)
	for _, want := range []string{a, b, "accuracy", "loss"} {
		if !strings.Contains(table, want) {
			p.t.Errorf("compare table lacks %q: %.400q", want, table)
		}
	}
}

// studioOutputs checks that a finished run's output file downloads through its link.
func studioOutputs(p page, name string) {
	p.t.Helper()
	p.open("#/jobs/" + name)
	const link = `[...document.querySelectorAll('#outputs a[download]')].find(a => a.textContent.endsWith('model.txt'))`
	p.wait("the outputs list", `!!`+link)
	var model string
	p.eval(`fetch(`+link+`.href).then(r => r.text())`, &model,
		func(e *runtime.EvaluateParams) *runtime.EvaluateParams { return e.WithAwaitPromise(true) })
	if model != "weights\n" {
		p.t.Errorf("downloaded outputs/model.txt: %q, want %q", model, "weights\n")
	}
}
