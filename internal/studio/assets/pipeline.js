// A pipeline job's page: its steps drawn as a graph (a column per depth, an edge from each
// step to the steps that read its outputs, a nested pipeline's steps boxed together), each
// step with its state, duration and run; and, on a step's page, the link to its pipeline.
// Read from GET /api/jobs/{pipeline}/steps, polled while the pipeline is active.
"use strict";
(function () {
  const { el, api } = H;
  const SVG = "http://www.w3.org/2000/svg";
  const NODE_W = 208, NODE_H = 62, COL_GAP = 56, ROW_GAP = 18, PAD = 14;
  const GROUP_LABEL = 22, GROUP_PAD = 10, BAND_GAP = 16;
  // The pipeline's view of a step: a word and a mark that say it without colour, the same as
  // job show's (docs/pipelines.md), and the badge's colour.
  const STATES = {
    "": ["waiting", "·", "wait"], queued: ["queued", "○", "wait"], running: ["running", "●", "run"],
    completed: ["completed", "✓", "ok"], failed: ["failed", "✗", "bad"], canceled: ["canceled", "⊘", "off"],
    skipped: ["skipped", "–", "off"],
  };
  const stateOf = (s) => (Object.hasOwn(STATES, s.state || "") ? s.state || "" : "");
  const BUSY = new Set(["queued", "running"]);

  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    return H.append(e, children);
  }

  // isPipeline says whether a run is a pipeline job's parent (it runs nothing itself).
  H.isPipeline = (d) => !!(d.pipeline || (d.spec && (d.spec.type === "pipeline" || d.spec.pipeline)));

  H.pipelineLink = (of) => el("span", {}, H.link(of.pipeline, "jobs", of.pipeline), ` (step ${of.step})`);

  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

  // H.pipelineLayout places the steps: a column per depth (the longest chain of steps a step
  // reads from), each group (a nested pipeline's steps) in a band of rows of its own so that its
  // box holds nothing else, a column's steps in a band ordered by the mean row of what they read
  // from (fewer crossings), ties by name. An edge that spans columns passes through a slot of its
  // own in each column between (a virtual node), so that it never runs behind a step it does not
  // enter. Same steps in, same picture out.
  H.pipelineLayout = function (steps) {
    const byName = new Map(steps.map((s) => [s.name, s]));
    const depsOf = (s) => [...new Set(s.deps || [])].filter((p) => p !== s.name && byName.has(p)).sort();
    const depth = new Map(), visiting = new Set();
    const depthOf = (n) => {
      if (depth.has(n)) return depth.get(n);
      if (visiting.has(n)) return 0; // a cycle (the server refuses those): draw rather than hang
      visiting.add(n);
      const d = Math.max(-1, ...depsOf(byName.get(n)).map(depthOf)) + 1;
      visiting.delete(n);
      depth.set(n, d);
      return d;
    };
    const nodes = [...byName.values()].sort((a, b) => cmp(a.name, b.name))
      .map((s) => ({ key: s.name, step: s, col: depthOf(s.name), group: s.group || "", preds: [] }));
    const at = new Map(nodes.map((n) => [n.key, n]));
    const all = [...nodes], edges = [];
    for (const n of nodes) {
      for (const p of depsOf(n.step)) {
        const from = at.get(p), via = [];
        let prev = from;
        for (let c = from.col + 1; c < n.col; c++) {
          // Between two groups' steps the edge runs outside both boxes where it can.
          const group = from.group && from.group === n.group ? from.group : "";
          prev = { key: `${p}\u0001${n.key}\u0001${c}`, col: c, group, preds: [prev.key], virtual: true };
          all.push(prev);
          via.push(prev);
        }
        n.preds.push(prev.key);
        edges.push({ from, to: n, via });
      }
    }
    for (const v of all) at.set(v.key, v);
    const cols = Math.max(0, ...nodes.map((n) => n.col)) + 1;
    const bands = new Map();
    for (const n of all) (bands.get(n.group) || bands.set(n.group, []).get(n.group)).push(n);
    const minCol = (g) => Math.min(...bands.get(g).map((n) => n.col));
    const order = [...bands.keys()].sort((a, b) => minCol(a) - minCol(b) || cmp(a, b));
    let y = PAD, row0 = 0;
    const groups = [];
    for (const g of order) {
      const members = bands.get(g);
      const perCol = Array.from({ length: cols }, () => []);
      for (const n of members) perCol[n.col].push(n);
      const rows = Math.max(...perCol.map((c) => c.length));
      if (g) y += GROUP_LABEL;
      for (const c of perCol) {
        const bary = (n) => {
          const ps = n.preds.map((k) => at.get(k)).filter((p) => p.row !== undefined);
          return ps.length ? ps.reduce((t, p) => t + p.row, 0) / ps.length : -1;
        };
        const keyed = c.map((n) => [bary(n), n]).sort((a, b) => a[0] - b[0] || cmp(a[1].key, b[1].key));
        keyed.forEach(([, n], i) => {
          n.row = row0 + (rows - c.length) / 2 + i; // a short column is centred in its band
          n.x = PAD + n.col * (NODE_W + COL_GAP);
          n.y = y + (n.row - row0) * (NODE_H + ROW_GAP);
        });
      }
      const bottom = y + rows * (NODE_H + ROW_GAP) - ROW_GAP;
      const real = members.filter((n) => !n.virtual);
      if (g && real.length) {
        const xs = real.map((n) => n.x), ys = real.map((n) => n.y);
        groups.push({ name: g, x: Math.min(...xs) - GROUP_PAD, y: Math.min(...ys) - GROUP_LABEL, w: Math.max(...xs) - Math.min(...xs) + NODE_W + 2 * GROUP_PAD,
          h: Math.max(...ys) - Math.min(...ys) + NODE_H + GROUP_LABEL + GROUP_PAD });
      }
      y = bottom + (g ? GROUP_PAD : 0) + BAND_GAP;
      row0 += rows;
    }
    return { nodes, edges, groups, width: 2 * PAD + cols * (NODE_W + COL_GAP) - COL_GAP, height: nodes.length ? y - BAND_GAP + PAD : 2 * PAD };
  };

  // seconds a step took, or has been running for.
  function seconds(s, now) {
    if (!s.started) return null;
    const end = s.ended ? new Date(s.ended) : now;
    return (end - new Date(s.started)) / 1000;
  }

  function stateLine(s, now) {
    const st = stateOf(s), secs = seconds(s, now);
    return STATES[st][0] + (s.reused_from ? " · reused" : "") + (secs === null ? "" : " · " + H.duration(secs));
  }

  // describe is what hovering a step says: its name, state and duration, why it was skipped,
  // failed or canceled, and where its outputs came from.
  function describe(s, now) {
    return [s.name, s.type && s.type !== "command" ? s.type + " step" : "", stateLine(s, now), s.reason,
      s.reused_from && !(s.reason || "").includes(s.reused_from) ? "reused from " + s.reused_from : "",
      s.compute ? "on " + s.compute : "", s.component ? "component " + s.component : ""].filter(Boolean).join(" · ");
  }

  // fit shortens text to width pixels in the given font by taking out its middle (run names
  // differ at their ends: the pipeline's name, then the step's); hovering shows it whole.
  const ctx2d = document.createElement("canvas").getContext("2d");
  function fit(text, width, font) {
    ctx2d.font = font || "12px system-ui, sans-serif";
    const wide = (t) => ctx2d.measureText(t).width > width;
    if (!wide(text)) return text;
    let lo = 0, hi = text.length; // the most characters kept that fit, found by halving
    while (lo < hi) {
      const k = Math.ceil((lo + hi) / 2);
      if (wide(text.slice(0, Math.ceil(k / 2)) + "…" + text.slice(text.length - Math.floor(k / 2)))) hi = k - 1;
      else lo = k;
    }
    return text.slice(0, Math.ceil(lo / 2)) + "…" + text.slice(text.length - Math.floor(lo / 2));
  }

  // shown is a step's name inside its group's box, without the group's prefix the box says.
  const shown = (s) => (s.group && s.name.startsWith(s.group + ".") ? s.name.slice(s.group.length + 1) : s.name);
  const target = (s) => s.run_id || s.reused_from || "";

  function stepNode(n, now, onHover) {
    const s = n.step, st = stateOf(s), [, icon] = STATES[st];
    const third = s.reused_from || s.run_id || (s.compute ? "on " + s.compute : "");
    const body = [
      svg("rect", { class: "box", width: NODE_W, height: NODE_H, rx: 7 }),
      svg("text", { x: 10, y: 19, class: "icon" }, icon),
      svg("text", { x: 28, y: 19, class: "name" }, fit(shown(s), NODE_W - 36, "600 13px system-ui, sans-serif")),
      svg("text", { x: 10, y: 37, class: "state", "data-started": s.started, "data-ended": s.ended }, stateLine(s, now)),
      svg("text", { x: 10, y: 54, class: "run" + (s.reused_from ? " reused" : "") }, fit(third, NODE_W - 18)),
    ];
    const link = target(s);
    const g = svg("g", { class: "step state-" + (st || "none") + (s.reused_from ? " reused" : ""), transform: `translate(${n.x},${n.y})`,
      "data-step": s.name, "data-state": st, "data-run": s.run_id, "data-reused": s.reused_from, "data-reason": s.reason },
    svg("title", {}, describe(s, now)),
    link ? svg("a", { href: "#/jobs/" + encodeURIComponent(link), "aria-label": describe(s, now) }, body) : body);
    g.addEventListener("mouseenter", () => onHover(s.name));
    g.addEventListener("mouseleave", () => onHover(null));
    g.addEventListener("focusin", () => onHover(s.name));
    return g;
  }

  // edge is the path from a step to one that reads its outputs: a curve from column to column,
  // straight through the slots it holds in the columns between.
  function edge({ from, to, via }) {
    const mid = (n) => n.y + NODE_H / 2;
    let x = from.x + NODE_W, y = mid(from), d = `M${x},${y}`;
    const curve = (x2, y2) => {
      const dx = (x2 - x) / 2;
      d += `C${x + dx},${y} ${x2 - dx},${y2} ${x2},${y2}`;
      x = x2;
      y = y2;
    };
    for (const v of via) {
      curve(v.x, mid(v));
      d += `L${(x = v.x + NODE_W)},${y}`;
    }
    curve(to.x - 2, mid(to));
    return svg("path", { class: "edge" + (stateOf(from.step) === "completed" ? " done" : ""), "data-from": from.step.name, "data-to": to.step.name,
      d, fill: "none", "marker-end": "url(#pipe-arrow)" });
  }

  // graph draws the steps as an SVG: group boxes, then edges, then the steps on top.
  function graph(L, now, onHover) {
    const root = svg("svg", { width: L.width, height: L.height, viewBox: `0 0 ${L.width} ${L.height}`, class: "pipeline-graph",
      role: "group", "aria-label": `pipeline graph of ${L.nodes.length} steps`, "data-steps": L.nodes.length, "data-edges": L.edges.length },
    svg("defs", {}, svg("marker", { id: "pipe-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      svg("path", { d: "M0,0L10,5L0,10z", class: "arrow" }))));
    for (const b of L.groups) {
      root.append(svg("g", { class: "group", "data-group": b.name },
        svg("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 9 }),
        svg("text", { x: b.x + 10, y: b.y + 15, class: "group-name" }, fit(b.name, b.w - 16))));
    }
    for (const e of L.edges) root.append(edge(e));
    for (const n of L.nodes) root.append(stepNode(n, now, onHover));
    return root;
  }

  // stepRows lists the steps column by column, as the graph reads from left to right.
  function stepRows(L, now) {
    return [...L.nodes].sort((a, b) => a.col - b.col || cmp(a.key, b.key)).map(({ step: s }) => {
      const st = stateOf(s), [label, icon, kind] = STATES[st];
      const run = s.run_id ? H.link(s.run_id, "jobs", s.run_id)
        : s.reused_from ? el("span", {}, "reused from ", H.link(s.reused_from, "jobs", s.reused_from)) : "";
      const secs = seconds(s, now);
      return el("tr", { "data-step": s.name, "data-state": st },
        el("td", {}, s.name),
        el("td", {}, el("span", { class: "badge " + kind, "data-state": st }, icon + " " + label), s.reused_from ? el("span", { class: "reused-mark" }, "reused") : null),
        el("td", { class: "num duration", "data-started": s.started, "data-ended": s.ended }, secs === null ? "" : H.duration(secs)),
        el("td", {}, run), el("td", {}, s.compute || ""), el("td", { class: "small" }, s.reason || ""));
    });
  }

  function summary(d) {
    const steps = d.steps || [];
    const counts = {};
    for (const s of steps) counts[stateOf(s)] = (counts[stateOf(s)] || 0) + 1;
    const parts = Object.keys(STATES).filter((k) => counts[k]).map((k) => `${counts[k]} ${STATES[k][0]}`);
    const reused = steps.filter((s) => s.reused_from).length;
    if (reused) parts.push(`${reused} reused from earlier runs`);
    return `${steps.length} step${steps.length === 1 ? "" : "s"}` + (parts.length ? ": " + parts.join(", ") : "");
  }

  // tick brings the durations of the running steps up to now between two polls.
  function tick(root, now) {
    for (const e of root.querySelectorAll('[data-state="running"] [data-started]:not([data-ended])')) {
      const secs = (now - new Date(e.dataset.started)) / 1000;
      if (e.classList.contains("duration")) e.textContent = H.duration(secs);
      else e.textContent = e.textContent.replace(/ · .*$/, "") + " · " + H.duration(secs);
    }
  }

  // H.pipelineSection is the pipeline part of a pipeline's run page, kept current while it runs.
  H.pipelineSection = function (run, route, signal) {
    const info = el("p", { class: "muted", id: "pipeline-summary" });
    const why = el("p", { id: "pipeline-reason" });
    const box = el("div", { class: "pipeline-box", id: "pipeline-graph" });
    const hover = el("p", { class: "muted small hover-step", "aria-live": "polite" }, "\u00a0");
    const body = el("tbody");
    const sec = el("section", { id: "pipeline" }, el("h2", {}, "Steps"), info, why, box, hover,
      el("p", { class: "muted small" }, "A step opens its run (or, for a step reused from the cache, the run whose outputs it took). Hover a step for why it was skipped or failed."),
      el("div", { class: "scroll-x" }, el("table", { class: "list", id: "pipeline-steps" },
        el("thead", {}, el("tr", {}, ["Step", "State", "Duration", "Run", "Compute", "Why"].map((h) => el("th", {}, h)))), body)));
    let last = null, hovered = null;
    const highlight = (name) => {
      hovered = name;
      const s = name && last ? (last.steps || []).find((x) => x.name === name) : null;
      hover.textContent = s ? describe(s, new Date()) : "\u00a0";
      for (const g of box.querySelectorAll("g.step")) g.classList.toggle("hover", g.dataset.step === name);
      for (const r of body.rows) r.classList.toggle("hover", r.dataset.step === name);
    };
    const draw = () => {
      const now = new Date();
      info.textContent = summary(last);
      why.textContent = last.reason || "";
      why.className = last.reason ? "error" : "";
      const L = H.pipelineLayout(last.steps || []);
      H.clear(box).append(graph(L, now, highlight));
      H.clear(body).append(...stepRows(L, now));
      if (!body.rows.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "muted" }, "No steps yet.")));
      for (const r of body.rows) if (r.dataset.step) r.addEventListener("mouseenter", () => highlight(r.dataset.step));
      body.onmouseleave = () => highlight(null);
      if (hovered) highlight(hovered);
    };
    // The page redraws only when a step changed (a redraw would take the keyboard's focus off
    // a step), and brings the running steps' durations up to now every second in between.
    let seen = "";
    const show = (d) => {
      const text = JSON.stringify(d);
      if (text === seen) return;
      seen = text;
      last = d;
      draw();
    };
    if (run.pipeline) show(run.pipeline);
    (async () => {
      let status = run.status, next = 0;
      while (!signal.aborted) {
        if (Date.now() >= next) {
          try {
            const [d, r] = await Promise.all([api(H.jobPath(run.name) + "/steps", { signal }), api(H.jobPath(run.name), { signal })]);
            show(d);
            status = r.status;
            sec.dataset.status = status;
          } catch (e) {
            if (signal.aborted || e.status === 401) return;
            if (!last) info.textContent = e.message; // else a restarting server: keep what is shown
          }
          next = Date.now() + 2000;
        }
        tick(sec, new Date());
        // A canceled pipeline's steps may still be stopping: follow them until they have.
        if (H.TERMINAL.has(status) && last && !(last.steps || []).some((s) => BUSY.has(stateOf(s)))) return;
        await H.sleep(1000, signal);
      }
    })();
    return sec;
  };
})();
