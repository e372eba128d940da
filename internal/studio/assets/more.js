// Compare runs, computes (nodes, scaling timeline, why runs wait) and environments.
"use strict";
(function () {
  const { el, api } = H;

  // lastValues is each metric's value at its highest step (its latest on ties).
  function lastValues(metrics) {
    const out = {};
    for (const m of metrics || []) {
      const o = out[m.name];
      if (!o || m.step > o.step || (m.step === o.step && m.timestamp >= o.timestamp)) out[m.name] = m;
    }
    return Object.fromEntries(Object.entries(out).map(([k, m]) => [k, m.value]));
  }

  function compareTable(runs) {
    const rows = [];
    const add = (group, key, get) => rows.push({ group, key, values: runs.map(get) });
    const keys = (f) => [...new Set(runs.flatMap((r) => Object.keys(f(r) || {})))].sort();
    add("run", "status", (r) => r.d.status);
    add("run", "experiment", (r) => r.d.experiment_name || "");
    add("run", "duration", (r) => H.duration(H.runSeconds(r.d)));
    for (const k of keys((r) => r.d.params)) add("param", k, (r) => (r.d.params || {})[k]);
    for (const k of keys((r) => r.last)) add("metric", k, (r) => r.last[k]);
    for (const k of keys((r) => r.d.tags)) add("tag", k, (r) => (r.d.tags || {})[k]);
    return el("table", { class: "list compare", id: "compare-table" },
      el("thead", {}, el("tr", {}, el("th", {}, ""), runs.map((r) => el("th", {}, H.link(r.d.name, "jobs", r.d.name))))),
      el("tbody", {}, rows.map((row) => {
        const shown = row.values.map((v) => (v === undefined || v === null ? "" : typeof v === "number" ? H.num(v) : String(v)));
        const differs = new Set(shown).size > 1;
        return el("tr", { class: differs ? "differs" : "" },
          el("th", {}, el("span", { class: "muted small" }, row.group + " "), row.key),
          shown.map((v) => el("td", { class: row.group === "metric" ? "num" : "" }, v)));
      })));
  }

  H.pages.compare = async function (root, route, signal) {
    const names = (route.query.get("runs") || "").split(",").filter(Boolean);
    root.append(el("h1", {}, "Compare runs"));
    if (names.length < 2) {
      root.append(el("p", { class: "muted" }, "Select two or more runs in the ", H.link("jobs list", "jobs"), " and press Compare selected."));
      return;
    }
    const time = route.query.get("axis") === "time";
    const toggle = H.segs(route, "axis", [["step", "Step"], ["time", "Time"]], "compare", []);
    const table = el("div", { class: "scroll-x" });
    const charts = el("div", { class: "charts", id: "compare-charts" });
    root.append(table, el("div", { class: "bar" }, el("h2", {}, "Metrics"), toggle), charts);
    const boxes = new Map();
    while (!signal.aborted) {
      const runs = await Promise.all(names.map(async (n) => {
        const [d, m] = await Promise.all([api(H.jobPath(n), { signal }), api(H.jobPath(n) + "/metrics", { signal })]);
        return { d, metrics: m.metrics, last: lastValues(m.metrics) };
      }));
      H.clear(table).append(compareTable(runs));
      const grouped = runs.map((r) => H.groupMetrics(r.metrics, time));
      const metricNames = [...new Set(grouped.flatMap((g) => Object.keys(g)))].sort();
      if (!metricNames.length && !charts.firstChild) charts.append(el("p", { class: "muted empty" }, "These runs logged no metrics."));
      for (const mn of metricNames) {
        let box = boxes.get(mn);
        if (!box) {
          charts.querySelector(".empty")?.remove();
          box = el("div", { class: "chart", "data-metric": mn });
          boxes.set(mn, box);
          charts.append(box);
          H.watchSize(box);
        }
        H.chart(box, mn, runs.map((r, i) => ({ label: r.d.name, points: grouped[i][mn] || [] })), time);
      }
      if (!runs.some((r) => H.active(r.d))) return;
      await H.sleep(2000, signal);
    }
  };

  function nodesTable(nodes) {
    if (!nodes.length) return el("p", { class: "muted" }, "No nodes.");
    return el("table", { class: "list" }, el("thead", {}, el("tr", {}, ["Node", "State", "Size", "Runs", "Since", "Why"].map((h) => el("th", {}, h)))),
      el("tbody", {}, nodes.map((n) => el("tr", {}, el("td", {}, n.id), el("td", {}, n.state), el("td", {}, n.size || ""),
        el("td", { class: "num" }, (n.runs || []).length), el("td", { class: "nowrap" }, H.when(n.joined_at || n.created_at)),
        el("td", {}, n.state_reason || "")))));
  }

  // nodesOverTime replays node events into the count of live nodes after each event.
  function nodesOverTime(events) {
    const live = new Set(), pts = [];
    const gone = new Set(["releasing", "preempted", "unusable", "deleted"]);
    for (const e of [...events].sort((a, b) => new Date(a.time) - new Date(b.time))) {
      if (gone.has(e.to)) live.delete(e.node); else live.add(e.node);
      pts.push([new Date(e.time).getTime() / 1000, live.size]);
    }
    // The count holds until now: the chart runs to the present, not to the last change.
    if (pts.length) pts.push([Date.now() / 1000, live.size]);
    return pts;
  }

  async function computeDetail(c, queued, signal) {
    const sec = el("section", { class: "compute", "data-compute": c.name },
      el("div", { class: "bar" }, el("h2", {}, c.name), el("span", { class: "muted" }, c.type), el("span", { class: "tag" }, c.state),
        el("span", { class: "muted" }, `${c.active_runs} active`)));
    const waiting = queued.filter((r) => r.compute === c.name);
    sec.append(el("h3", {}, "Waiting runs"), waiting.length ? el("table", { class: "list" }, el("tbody", {}, waiting.map((r) =>
      el("tr", {}, el("td", {}, H.link(r.name, "jobs", r.name)), el("td", {}, H.badge(r.status)), el("td", {}, r.status_reason || "waiting for room"))))) :
      el("p", { class: "muted" }, "No run is waiting."));
    let nodes = null, events = [];
    try {
      [nodes, events] = await Promise.all([
        api(`/api/computes/${encodeURIComponent(c.name)}/nodes`, { signal }),
        api(`/api/computes/${encodeURIComponent(c.name)}/node-events?limit=500`, { signal }),
      ]);
    } catch (e) {
      if (!(e instanceof H.APIError) || e.status === 401) throw e;
    }
    if (nodes && (nodes.length || (events || []).length || c.type === "cluster")) {
      sec.append(el("h3", {}, "Nodes"), nodesTable(nodes || []));
      const pts = nodesOverTime(events || []);
      if (pts.length) {
        const box = el("div", { class: "chart", "data-metric": "nodes" });
        sec.append(box);
        requestAnimationFrame(() => { H.chart(box, "nodes over time", [{ label: "nodes", points: pts }], true); H.watchSize(box); });
      }
      sec.append(el("h3", {}, "Scaling timeline"), (events || []).length ? el("table", { class: "list events" }, el("tbody", {},
        [...events].reverse().map((e) => el("tr", {}, el("td", { class: "nowrap" }, H.when(e.time)), el("td", {}, e.node),
          el("td", {}, (e.from ? e.from + " → " : "") + e.to), el("td", {}, e.reason || ""))))) : el("p", { class: "muted" }, "No scaling events."));
    }
    return sec;
  }

  H.pages.computes = async function (root, route, signal) {
    root.append(el("h1", {}, "Computes"));
    const [computes, runs] = await Promise.all([api("/api/computes", { signal }), api("/api/jobs?limit=500", { signal })]);
    const queued = runs.filter((r) => ["Queued", "NotStarted", "Provisioning"].includes(r.status));
    const only = route.args[0];
    for (const c of computes.filter((c) => !only || c.name === only)) {
      root.append(await computeDetail(c, queued, signal));
    }
  };

  H.pages.environments = async function (root, route, signal) {
    const [name, version] = route.args;
    if (name && version) {
      const v = await api(`/api/environments/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`, { signal });
      const spec = v.spec || {};
      root.append(el("h1", {}, `${v.name}:${v.version}`), H.facts([["Created", H.when(v.created_at)], ["Image", spec.image],
        ["Description", spec.description]]));
      for (const [k, val] of Object.entries(spec)) {
        if (typeof val === "string" && val.includes("\n")) root.append(el("h2", {}, k), el("pre", { class: "code" }, val));
      }
      root.append(el("h2", {}, "Spec"), H.kvTable(Object.fromEntries(Object.entries(spec).filter(([, x]) => !(typeof x === "string" && x.includes("\n")))), "Empty."));
      return;
    }
    root.append(el("h1", {}, "Environments"));
    const envs = await api("/api/environments", { signal });
    if (!envs.length) {
      root.append(el("p", { class: "muted" }, "No environments registered."));
      return;
    }
    root.append(el("table", { class: "list" }, el("thead", {}, el("tr", {}, ["Name", "Version", "Image", "Created"].map((h) => el("th", {}, h)))),
      el("tbody", {}, envs.map((v) => el("tr", {}, el("td", {}, H.link(v.name, "environments", v.name, v.version)), el("td", {}, v.version),
        el("td", {}, (v.spec && v.spec.image) || ""), el("td", { class: "nowrap" }, H.when(v.created_at)))))));
  };
})();
