// One run: status and phase timeline, live logs per rank, metric charts, params/tags/inputs,
// outputs with downloads. Also H.chart, the metric chart the compare page shares.
"use strict";
(function () {
  const { el, api } = H;
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  const MAX_LOG_LINES = 5000;
  const PHASES = ["queued", "provisioning", "preparing", "starting", "running", "finalizing"];

  function cssVar(name) {
    return getComputedStyle(document.body).getPropertyValue(name).trim() || "#888";
  }

  // chart draws (or updates) one chart in box: series is [{label, points: [[x, y], ...]}] on a
  // shared x axis (steps, or seconds since the epoch when time is true). box.dataset.points
  // holds the number of points drawn, for tests and for people reading the DOM.
  H.chart = function (box, title, series, time) {
    const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
    const index = new Map(xs.map((x, i) => [x, i]));
    const data = [xs, ...series.map((s) => {
      const ys = new Array(xs.length).fill(null);
      for (const [x, y] of s.points) ys[index.get(x)] = y;
      return ys;
    })];
    const key = (time ? "t:" : "s:") + series.map((s) => s.label).join("\u0000");
    box.dataset.points = String(series.reduce((n, s) => n + s.points.length, 0));
    box.dataset.series = String(series.length);
    if (box._plot && box._key === key) {
      box._plot.setData(data);
      return;
    }
    if (box._plot) box._plot.destroy();
    H.clear(box);
    const fg = cssVar("--muted"), grid = cssVar("--grid");
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts = {
      title, width: Math.max(box.clientWidth, 280), height: 220,
      scales: { x: { time: !!time } },
      cursor: { drag: { x: true, y: false } },
      series: [{ label: time ? "time" : "step" }, ...series.map((s, i) => ({
        label: s.label, stroke: PALETTE[i % PALETTE.length], width: 1.5, spanGaps: true,
        points: { show: xs.length < 40 }, value: (u, v) => (v === null ? "–" : H.num(v)),
      }))],
      axes: [{ ...axis }, { ...axis, size: 60, values: (u, vals) => vals.map(H.num) }],
    };
    box._plot = new uPlot(opts, data, box);
    box._key = key;
  };

  // Keep charts as wide as their boxes.
  H.watchSize = (() => {
    const ro = new ResizeObserver((entries) => {
      for (const e of entries) {
        const b = e.target;
        if (b._plot && Math.abs(b._plot.width - b.clientWidth) > 2) b._plot.setSize({ width: Math.max(b.clientWidth, 280), height: 220 });
      }
    });
    return (b) => ro.observe(b);
  })();

  // groupMetrics turns the metric history into {name: [[x, y], ...]}.
  H.groupMetrics = function (metrics, time) {
    const out = {};
    const ordered = [...(metrics || [])].sort((a, b) => a.step - b.step || a.seq - b.seq);
    for (const m of ordered) {
      const x = time ? new Date(m.timestamp).getTime() / 1000 : m.step;
      (out[m.name] ||= []).push([x, m.value]);
    }
    for (const pts of Object.values(out)) {
      pts.sort((a, b) => a[0] - b[0] || 0);
      // Points logged without a timestamp of their own share the time they were shipped at:
      // spread them a millisecond apart, in step order, so that none hides another.
      if (time) for (let i = 1; i < pts.length; i++) if (pts[i][0] <= pts[i - 1][0]) pts[i][0] = pts[i - 1][0] + 0.001;
    }
    return out;
  };

  // segs is a segmented switch of the query parameter key between choices ([value, label]); the
  // first choice is the default.
  H.segs = function (route, key, choices, page, args) {
    const cur = route.query.get(key) || choices[0][0];
    return el("span", { class: "segs" }, choices.map(([v, label]) => el("button", {
      type: "button", class: "seg" + (v === cur ? " on" : ""), "aria-pressed": v === cur ? "true" : "false",
      onclick: () => { const q = new URLSearchParams(route.query); q.set(key, v); H.go(page, args, q); },
    }, label)));
  };

  function timeline(d) {
    // Phases in their order; other keys are timings of work inside a phase (they overlap).
    const all = d.phases || {};
    const phases = PHASES.filter((p) => p in all).map((p) => [p, all[p]]);
    const inside = Object.entries(all).filter(([k]) => !PHASES.includes(k));
    const total = phases.reduce((n, [, s]) => n + s, 0);
    const bar = total > 0 ? el("div", { class: "phases" }, phases.map(([p, s]) =>
      el("span", { class: "phase " + p, title: p + " " + H.duration(s), "data-width": (100 * s / total).toFixed(1) }, p + " " + H.duration(s)))) : null;
    if (bar) for (const s of bar.children) s.style.flexGrow = s.dataset.width; // CSSOM, allowed by the CSP
    const rows = (d.events || []).map((e) => el("tr", {},
      el("td", { class: "nowrap" }, H.when(e.time)),
      el("td", {}, e.from ? H.badge(e.from) : "", " → ", H.badge(e.status)),
      el("td", {}, e.reason || "")));
    const timings = inside.length ? el("p", { class: "muted small" }, "Inside those phases: ",
      inside.map(([k, v]) => k + " " + H.duration(v)).join(", ")) : null;
    return el("section", {}, el("h2", {}, "Timeline"), bar, timings,
      rows.length ? el("table", { class: "list events" }, el("tbody", {}, rows)) : el("p", { class: "muted" }, "No events yet."));
  }

  // logPane follows one log file: a fixed-height pane that stays at the bottom while new lines
  // arrive, unless the user scrolled up to read.
  function logPane(name, file, signal) {
    const pane = el("div", { class: "log", tabindex: "0", role: "log", "aria-live": "off", "data-file": file, "data-lines": "0" });
    (async () => {
      let after = 0, n = 0;
      while (!signal.aborted) {
        let resp;
        try {
          resp = await api(H.jobPath(name) + "/logs?" + new URLSearchParams({ file, after, wait: 20 }), { signal });
        } catch (e) {
          if (signal.aborted) return;
          await H.sleep(2000, signal);
          continue;
        }
        const atBottom = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 8;
        const frag = document.createDocumentFragment();
        for (const l of resp.lines) frag.append(el("div", { class: "line", "data-seq": l.seq }, l.text));
        pane.append(frag);
        n += resp.lines.length;
        while (pane.childElementCount > MAX_LOG_LINES) pane.firstElementChild.remove();
        pane.dataset.lines = String(n);
        if (atBottom) pane.scrollTop = pane.scrollHeight;
        after = resp.next;
        if (resp.done) {
          pane.dataset.done = "true";
          pane.classList.add("ended"); // nothing more will arrive: the pane may fit its lines
          return;
        }
      }
    })();
    return pane;
  }

  function logsSection(d, route, signal) {
    const files = ["std_log.txt"];
    const nodes = (d.spec && d.spec.resources && d.spec.resources.instance_count) || 1;
    for (let i = 1; i < nodes; i++) files.push(`std_log_node_${i}.txt`);
    const file = files.includes(route.query.get("log")) ? route.query.get("log") : files[0];
    const pick = files.length > 1 ? el("select", { "aria-label": "log file" }, files.map((f) =>
      el("option", { value: f, selected: f === file }, f === "std_log.txt" ? "rank 0" : "node " + f.match(/\d+/)[0]))) : null;
    if (pick) pick.addEventListener("change", () => { const q = new URLSearchParams(route.query); q.set("log", pick.value); H.go("jobs", [d.name], q); });
    return el("section", {}, el("div", { class: "bar" }, el("h2", {}, "Logs"), pick), logPane(d.name, file, signal));
  }

  function metricsSection(d, route, signal) {
    const time = route.query.get("axis") === "time";
    const grid = el("div", { class: "charts", id: "metrics" });
    const together = route.query.get("charts") === "together";
    const sec = el("section", {}, el("div", { class: "bar" }, el("h2", {}, "Metrics"),
      H.segs(route, "charts", [["separate", "A chart per metric"], ["together", "One chart"]], "jobs", [d.name]),
      H.segs(route, "axis", [["step", "Step"], ["time", "Time"]], "jobs", [d.name])), grid);
    const boxes = new Map();
    (async () => {
      while (!signal.aborted) {
        let resp, run;
        try {
          [resp, run] = await Promise.all([api(H.jobPath(d.name) + "/metrics", { signal }), api(H.jobPath(d.name), { signal })]);
        } catch (e) {
          if (signal.aborted) return;
          await H.sleep(2000, signal);
          continue;
        }
        const byName = H.groupMetrics(resp.metrics, time);
        const names = Object.keys(byName).sort();
        if (!names.length && !grid.firstChild) grid.append(el("p", { class: "muted empty" }, "No metrics logged yet."));
        const charts = together && names.length ? [["*", "all metrics", names]] : names.map((n) => [n, n, [n]]);
        for (const [key, title, series] of charts) {
          let box = boxes.get(key);
          if (!box) {
            grid.querySelector(".empty")?.remove();
            box = el("div", { class: key === "*" ? "chart wide" : "chart", "data-metric": key });
            boxes.set(key, box);
            grid.append(box);
            H.watchSize(box);
          }
          H.chart(box, title, series.map((n) => ({ label: n, points: byName[n] })), time);
        }
        if (!H.active(run)) return;
        await H.sleep(1000, signal);
      }
    })();
    return sec;
  }

  // inputText is how an input reads in the Inputs table: a literal's value; a data input's type
  // and where it lies (an object store's URI, the path or reference given), not its JSON.
  function inputText(name, v, where) {
    if (!v || typeof v !== "object") return v;
    if ("value" in v) return v.value;
    const at = where[name] || v.path || (v.manifest ? "uploaded files" : "");
    return [v.type, at, v.mode ? "(" + v.mode + ")" : ""].filter(Boolean).join(" ");
  }

  function paramsSection(d) {
    const spec = d.spec || {};
    const inputs = {};
    const where = Object.fromEntries((d.data || []).filter((x) => x.kind === "input").map((x) => [x.name, x.uri]));
    for (const [k, v] of Object.entries(d.inputs || spec.inputs || {})) inputs[k] = inputText(k, v, where);
    return el("section", { class: "cols" },
      el("div", {}, el("h2", {}, "Params"), H.kvTable(d.params, "No params logged.")),
      el("div", {}, el("h2", {}, "Tags"), H.kvTable(d.tags, "No tags.")),
      el("div", {}, el("h2", {}, "Inputs"), H.kvTable(inputs, "No inputs.")));
  }

  // dataSection lists the run's inputs and outputs in object stores (docs/data.md): where each
  // lies, whose credentials the node used, and what the node moved, with what its cache held.
  // The bytes never pass through the server, so this is all the studio has of them.
  function dataSection(d) {
    const sec = el("section", { id: "object-data" });
    const rows = d.data || [];
    if (!rows.length) return sec;
    const moved = (x) => {
      const m = x.moved;
      if (!m) return H.active(d) ? "not yet" : "nothing";
      const what = `${m.objects} objects, ${H.bytes(m.bytes)}`;
      if (x.kind === "output") return what + " written";
      if (!m.cached_objects) return what + ", all fetched";
      return m.cached_objects === m.objects ? what + ", all from the node's cache"
        : `${what}: ${m.cached_objects} (${H.bytes(m.cached_bytes)}) from the node's cache`;
    };
    sec.append(el("h2", {}, "Data in object stores"), el("table", { class: "list" },
      el("thead", {}, el("tr", {}, ["Name", "", "Where", "Datastore", "Mode", "Moved by the node"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((x) => el("tr", { "data-data": x.kind + ":" + x.name },
        el("td", {}, x.name), el("td", { class: "muted" }, x.kind),
        el("td", {}, el("code", { class: "uri" }, x.uri)),
        el("td", { class: "datastore" }, x.datastore || el("span", { class: "muted" }, "the node's identity")),
        el("td", {}, x.mode || ""), el("td", { class: "moved" }, moved(x)))))));
    return sec;
  }

  // outputsSection lists the files of the run's outputs (manifests are blobs), each a download.
  function outputsSection(d, signal) {
    const sec = el("section", { id: "outputs" }, el("h2", {}, "Outputs"));
    // A pipeline has no artifacts of its own, only the outputs its steps wrote for it.
    if (H.active(d) || !(d.has_artifacts || (d.named_outputs || []).length)) {
      sec.append(el("p", { class: "muted" }, H.active(d) ? "Outputs appear when the run ends." : "This run has no outputs."));
      return sec;
    }
    (async () => {
      const a = await api(H.jobPath(d.name) + "/artifacts", { signal });
      const sets = Object.entries(a.named_outputs || {}).sort();
      if (a.artifacts) sets.unshift(["all artifacts", a.artifacts]);
      for (const [label, hash] of sets) {
        const m = await api("/api/blobs/" + encodeURIComponent(hash), { signal });
        const files = (m.entries || []).filter((e) => e.type === "file").sort((x, y) => x.path.localeCompare(y.path));
        sec.append(el("details", { open: sets.length === 1 || label !== "all artifacts" },
          el("summary", {}, label, el("span", { class: "muted" }, ` — ${files.length} files`)),
          el("table", { class: "list files" }, el("tbody", {}, files.map((f) => el("tr", {},
            el("td", {}, el("a", { href: "/api/blobs/" + encodeURIComponent(f.hash), download: f.path.split("/").pop() }, f.path)),
            el("td", { class: "num" }, H.bytes(f.size))))))));
      }
      // Files the run logged through MLflow are listed apart: they are the run's script's, not
      // what Hangar collected (a job's own file wins where both have a path; none is ever in
      // user_logs/ or system_logs/).
      const up = (a.uploaded || []).slice().sort((x, y) => x.path.localeCompare(y.path));
      const held = (a.withheld || []).length;
      if (up.length || held) {
        sec.append(el("details", {},
          el("summary", {}, "logged through MLflow", el("span", { class: "muted" }, ` — ${up.length} files`)),
          held ? el("p", { class: "muted" }, `${held} more not shown: the job's own files are at their paths, or they lie in user_logs/ or system_logs/ (Hangar's logs).`) : null,
          el("table", { class: "list files" }, el("tbody", {}, up.map((f) => el("tr", {},
            el("td", {}, el("a", { href: "/api/blobs/" + encodeURIComponent(f.hash), download: f.path.split("/").pop() }, f.path)),
            el("td", { class: "num" }, H.bytes(f.size))))))));
      }
    })().catch((e) => { if (!signal.aborted) sec.append(el("p", { class: "error" }, e.message)); });
    return sec;
  }

  // serverlessText says what the serverless pool created for the run (design 0017).
  function serverlessText(u) {
    if (!u) return "";
    const nodes = (u.nodes || []).length ? "; nodes: " + u.nodes.join(", ") : "";
    return `pool ${u.pool}, size ${u.size}, ${u.instances} instance(s) on cluster ${u.cluster}${nodes}`;
  }

  H.pages.run = async function (root, route, signal) {
    const name = route.args[0];
    const d = await api(H.jobPath(name), { signal });
    const status = el("span", {}, H.badge(d.status));
    const cancel = H.active(d) ? el("button", { type: "button", class: "danger" }, "Cancel run") : null;
    if (cancel) cancel.addEventListener("click", async () => {
      if (!confirm(`Cancel ${d.name}?`)) return;
      cancel.disabled = true;
      try { await api(H.jobPath(d.name) + "/cancel", { method: "POST" }); } catch (e) { alert(e.message); cancel.disabled = false; }
    });
    const facts = el("div");
    const showFacts = (r) => H.clear(facts).append(H.facts([
      ["Display name", r.display_name], ["Experiment", r.experiment_name], ["Compute", r.compute],
      ["Serverless", serverlessText(r.serverless)],
      ["Created", H.when(r.created_at)], ["Started", H.when(r.started_at)], ["Ended", H.when(r.ended_at)],
      ["Duration", H.duration(H.runSeconds(r))], ["Exit code", r.exit_code], ["Why", r.status_reason],
      ["Error", r.error], ["Command", r.bound_command || (r.spec && r.spec.command)],
      ["Spec command", r.bound_command && r.spec && r.spec.command !== r.bound_command ? r.spec.command : ""],
      ["Sweep", r.trial_of ? H.sweepLink(r.trial_of) : ""], ["Stopped by sweep", r.trial_of && r.trial_of.stopped],
      ["Pipeline", r.pipeline_of ? H.pipelineLink(r.pipeline_of) : ""],
      ["Description", r.description],
      ["Warnings", (r.warnings || []).join("; ")],
    ]));
    showFacts(d);
    const tl = el("div");
    H.clear(tl).append(timeline(d));
    // A sweep's parent runs nothing itself: its page shows its trials instead of logs, metrics
    // and outputs. A pipeline's parent shows its steps instead of logs and metrics, and keeps
    // the outputs its steps produced for it.
    const sweep = d.spec && d.spec.sweep;
    const pipeline = H.isPipeline(d);
    let outputs = sweep ? el("div") : outputsSection(d, signal);
    let data = dataSection(d);
    const own = sweep ? [H.sweepSection(d, route, signal)]
      : pipeline ? [H.pipelineSection(d, route, signal)] : [logsSection(d, route, signal), metricsSection(d, route, signal)];
    root.append(el("div", { class: "bar" }, el("h1", {}, d.name), status, cancel), facts, tl, ...own, paramsSection(d), data, outputs,
      H.registeredModelsSection(d.name, signal));
    // Keep status, facts and timeline current while the run is active.
    let last = d;
    while (!signal.aborted && H.active(last)) {
      await H.sleep(2000, signal);
      if (signal.aborted) return;
      try {
        last = await api(H.jobPath(name), { signal });
      } catch (e) {
        if (signal.aborted || e.status === 401) throw e;
        continue; // a restarting server: try again
      }
      H.clear(status).append(H.badge(last.status));
      showFacts(last);
      H.clear(tl).append(timeline(last));
      if (!H.active(last)) {
        cancel?.remove();
        if (sweep) continue;
        const o = outputsSection(last, signal);
        outputs.replaceWith(o);
        outputs = o;
        const n = dataSection(last);
        data.replaceWith(n);
        data = n;
      }
    }
  };
})();
