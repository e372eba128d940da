// A sweep job's page: its trials table, a parallel-coordinates plot of parameters against the
// primary metric, and the best-so-far curve; and, on a trial's page, the link to its sweep.
// Read from GET /api/jobs/{sweep}/trials, polled while the sweep is active.
"use strict";
(function () {
  const { el, api } = H;
  const SVG = "http://www.w3.org/2000/svg";
  const LOG_KINDS = new Set(["loguniform", "qloguniform", "lognormal", "qlognormal"]);
  const BOUNDED = new Set(["uniform", "quniform", "loguniform", "qloguniform"]);
  const PLOT_H = 320, PAD_X = 70, PAD_TOP = 34, PAD_BOTTOM = 22;

  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    return H.append(e, children);
  }

  const isMax = (d) => String(d.goal || "").toLowerCase() !== "minimize";
  const better = (d, a, b) => (isMax(d) ? a > b : a < b);
  const ended = (t) => H.TERMINAL.has(t.status);
  const faded = (t) => !!t.stopped || t.status === "Failed" || t.status === "Canceled";
  const valueKey = (v) => JSON.stringify(v);
  const showValue = (v) => (typeof v === "number" ? H.num(v) : typeof v === "string" ? v : JSON.stringify(v));

  function paramsOf(t) {
    const p = t.params;
    return p && typeof p === "object" && !Array.isArray(p) ? p : {};
  }

  // paramNames are the search space's names, then any other a trial carries, sorted.
  function paramNames(space, trials) {
    const names = new Set(Object.keys(space));
    for (const t of trials) for (const k of Object.keys(paramsOf(t))) names.add(k);
    return [...names].sort();
  }

  H.sweepLink = (of) => el("span", {}, H.link(of.sweep, "jobs", of.sweep), ` (trial ${of.index})`);

  // ---- Parallel coordinates: one axis per parameter and one for the metric. ----

  // scaleFor maps a value to [0, 1] (0 at the bottom) for a parameter's axis, with its ticks:
  // a choice is categorical (its values in the spec's order), the log kinds are on a log axis.
  function scaleFor(name, expr, values) {
    const kind = expr && expr.type;
    if (kind === "choice" || values.some((v) => typeof v !== "number")) {
      const cats = [];
      for (const v of [...((expr && expr.values) || []), ...values]) if (!cats.some((c) => valueKey(c) === valueKey(v))) cats.push(v);
      const at = (v) => (cats.findIndex((c) => valueKey(c) === valueKey(v)) + 0.5) / cats.length;
      const every = Math.max(1, Math.ceil(cats.length / 12)); // at most a dozen labels
      return { name, kind: "categorical", at, ticks: cats.filter((_, i) => i % every === 0).map((c) => [at(c), showValue(c)]) };
    }
    const nums = [...values];
    if (expr && BOUNDED.has(kind)) {
      const lo = expr.min_value || 0, hi = expr.max_value || 0;
      nums.push(...(LOG_KINDS.has(kind) ? [Math.exp(lo), Math.exp(hi)] : [lo, hi]));
    } else if (kind === "randint") nums.push(0, Math.max(0, (expr.upper || 1) - 1));
    const log = LOG_KINDS.has(kind) && nums.every((v) => v > 0);
    return linear(name, nums, log, false);
  }

  // linear is a numeric axis over nums (log10 when log); flip puts the smallest at the top.
  function linear(name, nums, log, flip) {
    const f = log ? Math.log10 : (x) => x;
    let lo = Math.min(...nums.map(f)), hi = Math.max(...nums.map(f));
    if (!isFinite(lo)) lo = hi = 0;
    if (lo === hi) { lo -= 0.5; hi += 0.5; }
    const pos = (x) => (f(x) - lo) / (hi - lo);
    const at = flip ? (x) => 1 - pos(x) : pos;
    let ticks;
    if (log && Math.floor(hi) - Math.ceil(lo) >= 1) {
      ticks = [];
      for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) ticks.push(10 ** e);
    } else if (log) ticks = [10 ** lo, 10 ** hi];
    else ticks = niceTicks(lo, hi);
    return { name, kind: log ? "log" : "linear", at, ticks: ticks.map((v) => [at(v), H.num(v)]) };
  }

  function niceTicks(lo, hi) {
    const raw = (hi - lo) / 4, mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }

  // strength is 0 for the worst reported value and 1 for the best.
  function strength(d, reported) {
    const vs = reported.map((t) => t.metric);
    const lo = Math.min(...vs), hi = Math.max(...vs);
    return (v) => (hi === lo ? 1 : isMax(d) ? (v - lo) / (hi - lo) : (hi - v) / (hi - lo));
  }

  function hexRGB(c, fallback) {
    const m = /^#([0-9a-f]{6})$/i.exec(c);
    const n = parseInt(m ? m[1] : fallback, 16);
    return [n >> 16, (n >> 8) & 255, n & 255];
  }

  function colour(s) {
    const css = (n) => getComputedStyle(document.body).getPropertyValue(n).trim();
    const a = hexRGB(css("--muted"), "8d99a6"), b = hexRGB(css("--accent"), "2f6fde");
    return "rgb(" + a.map((x, i) => Math.round(x + (b[i] - x) * s)).join(",") + ")";
  }

  // parallelPlot draws the reported trials into box, an SVG with one path.trial per trial.
  function parallelPlot(box, d, space, onHover) {
    const trials = d.trials || [];
    const reported = trials.filter((t) => typeof t.metric === "number");
    const names = paramNames(space, trials);
    const axes = names.map((n) => scaleFor(n, space[n], reported.map((t) => paramsOf(t)[n]).filter((v) => v !== undefined)));
    const metric = linear(d.primary_metric, reported.map((t) => t.metric), false, !isMax(d));
    metric.label = d.primary_metric + (isMax(d) ? " (max)" : " (min)");
    axes.push(metric);
    const W = Math.max(box.clientWidth, 480), H_ = PLOT_H;
    const x = (i) => PAD_X + (i * (W - 2 * PAD_X)) / Math.max(1, axes.length - 1);
    const y = (u) => PAD_TOP + (1 - u) * (H_ - PAD_TOP - PAD_BOTTOM);
    const root = svg("svg", { width: W, height: H_, viewBox: `0 0 ${W} ${H_}`, class: "parcoords", role: "img",
      "aria-label": `parallel coordinates of ${reported.length} trials`, "data-lines": reported.length });
    const s = strength(d, reported);
    const lines = svg("g", { class: "lines" });
    // The best is drawn last, on top of the others.
    const order = [...reported].sort((a, b) => (a.name === d.best_child_run_id) - (b.name === d.best_child_run_id) || s(a.metric) - s(b.metric));
    for (const t of order) {
      const pts = axes.map((a, i) => {
        const v = i === axes.length - 1 ? t.metric : paramsOf(t)[a.name];
        const u = v === undefined ? NaN : a.at(v);
        return isFinite(u) ? `${x(i).toFixed(1)},${y(Math.min(1, Math.max(0, u))).toFixed(1)}` : null;
      }).filter(Boolean);
      const st = s(t.metric), best = t.name === d.best_child_run_id;
      const title = `trial ${t.index} · ${t.name} · ` + names.map((n) => n + "=" + showValue(paramsOf(t)[n])).join(", ") +
        ` · ${d.primary_metric} = ${H.num(t.metric)}` + (t.stopped ? " · stopped: " + t.stopped : "") + ` · ${t.status}`;
      const g = svg("g", { class: "trial-line", "data-trial": t.index, "data-run": t.name },
        svg("path", { class: "hit", d: "M" + pts.join("L"), fill: "none", stroke: "transparent", "stroke-width": 10 }),
        svg("path", { class: "trial" + (best ? " best" : "") + (faded(t) ? " faded" : ""), d: "M" + pts.join("L"), fill: "none",
          stroke: colour(st), "stroke-width": best ? 3 : 1.2 + 1.3 * st, "stroke-opacity": (faded(t) ? 0.6 : 1) * (0.45 + 0.55 * st),
          "stroke-dasharray": faded(t) ? "5 4" : null, "data-trial": t.index }),
        svg("title", {}, title));
      g.addEventListener("mouseenter", () => onHover(t.index, title));
      g.addEventListener("mouseleave", () => onHover(null, ""));
      g.addEventListener("click", () => H.go("jobs", [t.name]));
      lines.append(g);
    }
    root.append(lines);
    axes.forEach((a, i) => root.append(axisNode(a, x(i), y)));
    return root;
  }

  function axisNode(a, x, y) {
    const g = svg("g", { class: "axis", "data-axis": a.name, "data-scale": a.kind });
    g.append(svg("line", { x1: x, x2: x, y1: y(0), y2: y(1), class: "axis-line" }),
      svg("text", { x, y: PAD_TOP - 14, "text-anchor": "middle", class: "axis-name" }, a.label || a.name + (a.kind === "log" ? " (log)" : "")));
    for (const [u, label] of a.ticks) {
      if (!(u >= -1e-9 && u <= 1 + 1e-9)) continue;
      g.append(svg("line", { x1: x - 4, x2: x, y1: y(u), y2: y(u), class: "axis-line" }),
        svg("text", { x: x - 6, y: y(u) + 4, "text-anchor": "end", class: "tick" }, label));
    }
    return g;
  }

  // ---- Best so far: the best final value among the trials that ended, in the order they ended. ----

  // bestSoFar returns [[x, best]] with x the time (seconds) of an ended trial's last report, or
  // the count of trials ended so far.
  H.bestSoFar = function (d, byTime) {
    const done = (d.trials || []).filter((t) => ended(t) && typeof t.metric === "number" && t.series && t.series.length)
      .map((t) => ({ t, at: new Date(t.series[t.series.length - 1].time).getTime() / 1000 }))
      .sort((a, b) => a.at - b.at || a.t.index - b.t.index);
    const out = [];
    let best = null;
    done.forEach(({ t, at }, i) => {
      if (best === null || better(d, t.metric, best)) best = t.metric;
      let xv = byTime ? at : i + 1;
      if (byTime && out.length && xv <= out[out.length - 1][0]) xv = out[out.length - 1][0] + 0.001;
      out.push([xv, best]);
    });
    return out;
  };

  // ---- The trials table. ----

  function trialRows(d, names) {
    return (d.trials || []).map((t) => {
      const best = t.name === d.best_child_run_id;
      const p = paramsOf(t);
      return el("tr", { "data-trial": t.index, "data-run": t.name, class: best ? "best" : null },
        el("td", { class: "num" }, String(t.index)),
        el("td", {}, H.link(t.name, "jobs", t.name), best ? el("span", { class: "best-mark", title: "best trial" }, "★ best") : null),
        el("td", {}, H.badge(t.status)),
        names.map((n) => el("td", { class: "num", "data-param": n }, n in p ? showValue(p[n]) : "")),
        el("td", { class: "num metric" }, typeof t.metric === "number" ? H.num(t.metric) : "–"),
        el("td", { class: "stopped small" }, t.stopped || ""));
    });
  }

  function summary(d) {
    const best = d.best_child_run_id ? el("span", {}, "best ", H.link(d.best_child_run_id, "jobs", d.best_child_run_id),
      typeof d.best_metric === "number" ? ` ${d.primary_metric} = ${H.num(d.best_metric)}` : "") : null;
    const parts = [`${d.goal} ${d.primary_metric}`, `${d.sampling_algorithm} sampling`,
      `${(d.trials || []).length} of at most ${d.max_total_trials} trials` + (d.max_concurrent_trials ? ` (${d.max_concurrent_trials} at a time)` : ""),
      d.early_termination ? "early termination: " + d.early_termination : null, best, d.done_reason ? "done: " + d.done_reason : null];
    const out = [];
    for (const p of parts.filter(Boolean)) out.push(out.length ? " · " : "", p);
    return out;
  }

  // H.sweepSection is the sweep part of a sweep's run page, kept current while the sweep runs.
  H.sweepSection = function (run, route, signal) {
    const space = (run.spec && run.spec.sweep && run.spec.sweep.config && run.spec.sweep.config.search_space) || {};
    const byTime = route.query.get("sweepx") !== "trials";
    const info = el("p", { class: "muted", id: "sweep-summary" });
    const head = el("thead"), body = el("tbody");
    const hover = el("p", { class: "muted small hover-trial", "aria-live": "polite" }, "\u00a0");
    const plot = el("div", { class: "parcoords-box", id: "sweep-parallel" });
    const curve = el("div", { class: "chart wide", id: "sweep-best" });
    H.watchSize(curve);
    const sec = el("section", { id: "sweep" }, el("h2", {}, "Trials"), info,
      el("div", { class: "scroll-x" }, el("table", { class: "list", id: "sweep-trials" }, head, body)),
      el("h2", {}, "Parameters and metric"),
      el("p", { class: "muted small" }, "One line per trial that reported; stronger colour = better metric; dashed: stopped by the sweep, failed or canceled. Click a line to open its trial."),
      plot, hover,
      el("div", { class: "bar" }, el("h2", {}, "Best so far"),
        H.segs(route, "sweepx", [["time", "Time"], ["trials", "Trials ended"]], "jobs", [run.name])), curve);
    let last = null, highlighted = null;
    const highlight = (index, text) => {
      highlighted = index;
      hover.textContent = text || "\u00a0";
      for (const g of plot.querySelectorAll("g.trial-line")) g.classList.toggle("hover", String(index) === g.dataset.trial);
      for (const r of body.rows) r.classList.toggle("hover", String(index) === r.dataset.trial);
    };
    const draw = () => {
      if (!last) return;
      const names = paramNames(space, last.trials || []);
      H.clear(info).append(...summary(last));
      H.clear(head).append(el("tr", {}, el("th", { class: "num" }, "#"), el("th", {}, "Run"), el("th", {}, "Status"),
        [...names, last.primary_metric].map((h) => el("th", { class: "num" }, h)), el("th", {}, "Stopped")));
      H.clear(body).append(...trialRows(last, names));
      if (!body.rows.length) body.append(el("tr", {}, el("td", { colspan: names.length + 5, class: "muted" }, "No trials yet.")));
      for (const r of body.rows) if (r.dataset.trial) r.addEventListener("mouseenter", () => highlight(+r.dataset.trial, ""));
      body.onmouseleave = () => highlight(null, "");
      H.clear(plot).append(parallelPlot(plot, last, space, highlight));
      const pts = H.bestSoFar(last, byTime);
      curve.dataset.best = pts.length ? String(pts[pts.length - 1][1]) : "";
      H.chart(curve, `best ${last.primary_metric} so far` + (byTime ? "" : ", by trials ended"), [{ label: "best " + last.primary_metric, points: pts }], byTime);
      if (highlighted !== null) highlight(highlighted, hover.textContent);
    };
    // Redraw at the box's new width (the SVG's text keeps its size, unlike a scaled viewBox).
    const ro = new ResizeObserver(() => { if (last && Math.abs((plot.firstChild?.getAttribute("width") || 0) - Math.max(plot.clientWidth, 480)) > 2) draw(); });
    ro.observe(plot);
    signal.addEventListener("abort", () => ro.disconnect(), { once: true });
    (async () => {
      let status = run.status;
      while (!signal.aborted) {
        try {
          const [d, r] = await Promise.all([api(H.jobPath(run.name) + "/trials", { signal }), api(H.jobPath(run.name), { signal })]);
          last = d;
          status = r.status;
          draw();
          sec.dataset.status = status;
        } catch (e) {
          if (signal.aborted || e.status === 401) return;
          if (!last) info.textContent = e.message; // else a restarting server: keep what is shown
        }
        if (H.TERMINAL.has(status)) return;
        await H.sleep(2000, signal);
      }
    })();
    return sec;
  };
})();
