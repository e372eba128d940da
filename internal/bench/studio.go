package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Chromium is the browser the studio benchmark drives (Debian's, scripts/setup/chromium.sh).
const Chromium = "/usr/bin/chromium"

// markCommand prints "mark <unix ms> <i>" every 0.1 s (the format verb: how many times).
const markCommand = `for i in $(seq %d); do echo "mark $(date +%%s%%3N) $i"; sleep 0.1; done`

// observeMarks records, for each "mark" line the studio's log pane gains, how long ago the job
// printed it (the browser and the job share this machine's clock).
// It starts once the pane shows its first lines, so that the backlog printed before the page
// opened is not counted.
const observeMarks = `(() => {
  const pane = document.querySelector('.log');
  if (!pane || !(+pane.dataset.lines > 0)) return false;
  window.__lat = [];
  new MutationObserver((ms) => {
    const now = Date.now();
    for (const m of ms) for (const n of m.addedNodes) {
      const x = /^mark (\d+) /.exec(n.textContent || '');
      if (x) window.__lat.push(now - Number(x[1]));
    }
  }).observe(pane, { childList: true });
  return true;
})()`

// StudioLatency measures how long a log line takes from a running job's print to the studio's
// log pane in headless Chromium (the supervisor's shipping, the server's store and long poll,
// the page's fetch and DOM update): p50, p95 and the worst of lines samples.
func StudioLatency(ctx context.Context, w *Workspace, lines int) ([]Figure, error) {
	if _, err := os.Stat(Chromium); err != nil {
		return nil, fmt.Errorf("studio latency needs %s (scripts/setup/chromium.sh): %w", Chromium, err)
	}
	c, err := w.client()
	if err != nil {
		return nil, err
	}
	// Lines printed before the page watches are not measured: the job runs long enough for
	// lines samples after a generous start.
	total := lines + 300
	spec := job.Spec{Name: fmt.Sprintf("bench-studio-%d", time.Now().UnixNano()),
		Command: fmt.Sprintf(markCommand, total)}
	if _, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: spec}); err != nil {
		return nil, err
	}
	defer func() { _, _ = c.Jobs.Cancel(context.WithoutCancel(ctx), spec.Name) }()
	if err := waitStatus(ctx, c, spec.Name, job.Running); err != nil {
		return nil, err
	}
	link, err := w.Output(ctx, "studio")
	if err != nil {
		return nil, err
	}
	link = strings.TrimSpace(link)
	// The baseline: the same lines long-polled by an API client (what `hangar job stream` does),
	// at the same time, so that the difference is the browser's share.
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	apiLat := make(chan []float64, 1)
	go func() { apiLat <- pollMarks(pctx, c, spec.Name) }()
	lat, err := browseMarks(ctx, link, strings.SplitN(link, "#", 2)[0]+"#/jobs/"+spec.Name, lines)
	if err != nil {
		return nil, err
	}
	stop()
	base := <-apiLat
	// Compare the same lines: the browser began watching later than the client.
	base = base[max(0, len(base)-len(lat)):]
	fig := func(name string, q float64) []Figure {
		b := Figure{Name: name + ", API client", Value: quantile(base, q), Unit: "ms"}
		f := Figure{Name: name + ", studio", Value: quantile(lat, q), Unit: "ms", Baseline: b.Name}
		if b.Value > 0 {
			f.Ratio = f.Value / b.Value
		}
		return []Figure{b, f}
	}
	figs := append(fig("log line → visible, p50", 0.5), fig("log line → visible, p95", 0.95)...)
	return append(figs, fig(fmt.Sprintf("log line → visible, worst of %d", len(lat)), 1)...), nil
}

// pollMarks long-polls the run's log as an API client and records each mark line's latency,
// until ctx ends. The first answer, the backlog, is not counted.
func pollMarks(ctx context.Context, c *api.Client, name string) []float64 {
	var lat []float64
	after := int64(-1)
	if resp, err := c.Jobs.Logs(ctx, name, "", 0, 0); err == nil {
		after = resp.Next
	}
	for ctx.Err() == nil {
		resp, err := c.Jobs.Logs(ctx, name, "", max(after, 0), 20*time.Second)
		if err != nil {
			continue
		}
		if after < 0 { // the backlog
			after = resp.Next
			continue
		}
		now := time.Now().UnixMilli()
		for _, l := range resp.Lines {
			var ms, i int64
			if _, err := fmt.Sscanf(l.Text, "mark %d %d", &ms, &i); err == nil {
				lat = append(lat, float64(now-ms))
			}
		}
		after = resp.Next
	}
	return lat
}

// browseMarks logs in with link, opens page and collects n latencies of "mark" lines.
func browseMarks(ctx context.Context, link, page string, n int) ([]float64, error) {
	profile, err := os.MkdirTemp("", "hangar-bench-chromium")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	actx, cancelA := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(Chromium), chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	defer func() { _ = chromedp.Cancel(bctx) }()
	if err := chromedp.Run(bctx, chromedp.Navigate(link)); err != nil {
		return nil, fmt.Errorf("open the studio: %w", err)
	}
	if err := poll(bctx, time.Minute, `!!document.querySelector('#jobs')`); err != nil {
		return nil, fmt.Errorf("log in to the studio: %w", err)
	}
	if err := chromedp.Run(bctx, chromedp.Navigate(page)); err != nil {
		return nil, err
	}
	if err := poll(bctx, time.Minute, observeMarks); err != nil {
		return nil, fmt.Errorf("watch the log pane: %w", err)
	}
	if err := poll(bctx, time.Duration(n)*time.Second, fmt.Sprintf(`window.__lat.length >= %d`, n)); err != nil {
		return nil, fmt.Errorf("collect %d lines: %w", n, err)
	}
	var raw string
	if err := chromedp.Run(bctx, chromedp.Evaluate(`JSON.stringify(window.__lat)`, &raw)); err != nil {
		return nil, err
	}
	var lat []float64
	if err := json.Unmarshal([]byte(raw), &lat); err != nil {
		return nil, err
	}
	return lat[:min(n, len(lat))], nil
}

// poll evaluates expr in the page until it is true.
func poll(ctx context.Context, timeout time.Duration, expr string) error {
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		err := chromedp.Run(ctx, chromedp.Evaluate(expr, &ok))
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not hold within %s (last error: %v)", expr, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
