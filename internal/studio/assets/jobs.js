// The jobs list: filters kept in the page's URL (shareable, and the back button restores them),
// sent to the server as GET /api/jobs query parameters and applied here too, so that a server
// that does not filter yet shows the same rows.
"use strict";
(function () {
  const { el, api } = H;
  const FILTERS = ["status", "experiment", "compute", "tag", "q", "since"];
  // since choices: the link keeps the window ("24h"); the server is sent the time it starts.
  const SINCE = { "1h": 3600, "24h": 86400, "7d": 7 * 86400, "30d": 30 * 86400 };
  const PAGE = 200, MAX_LIMIT = 1000; // the server's largest page
  const sinceTime = (w) => (SINCE[w] ? new Date(Date.now() - SINCE[w] * 1000) : null);

  // matches applies the list filters to one run (the server may have applied them already).
  H.matches = function (run, f) {
    if (f.status && run.status !== f.status) return false;
    if (f.experiment && (run.experiment_name || "") !== f.experiment) return false;
    if (f.compute && run.compute !== f.compute) return false;
    if (f.tag) {
      const [k, v] = f.tag.split(/=(.*)/s);
      const tags = run.tags || {};
      if (!(k in tags) || (v !== undefined && tags[k] !== v)) return false;
    }
    const from = sinceTime(f.since);
    if (from && new Date(run.created_at) < from) return false;
    if (f.q) {
      const q = f.q.toLowerCase();
      if (!run.name.toLowerCase().includes(q) && !(run.display_name || "").toLowerCase().includes(q)) return false;
    }
    return true;
  };

  function filterForm(f, onChange) {
    const status = el("select", { name: "status", "aria-label": "status" },
      el("option", { value: "" }, "any status"),
      H.STATES.map((s) => el("option", { value: s, selected: f.status === s }, s)));
    const input = (name, ph) => el("input", { name, placeholder: ph, value: f[name] || "", "aria-label": ph, type: "search" });
    const since = el("select", { name: "since", "aria-label": "created since" },
      el("option", { value: "" }, "any time"),
      Object.keys(SINCE).map((w) => el("option", { value: w, selected: f.since === w }, "last " + w)));
    const form = el("form", { class: "filters" }, status, since,
      input("experiment", "experiment"), input("compute", "compute"), input("tag", "tag k or k=v"),
      input("q", "search names"), el("button", { type: "submit" }, "Filter"));
    const submit = (e) => {
      if (e) e.preventDefault();
      const q = new URLSearchParams();
      for (const n of FILTERS) {
        const v = form.elements[n].value.trim();
        if (v) q.set(n, v);
      }
      onChange(q);
    };
    form.addEventListener("submit", submit);
    status.addEventListener("change", submit);
    since.addEventListener("change", submit);
    return form;
  }

  function row(run, selected, onSelect) {
    const box = el("input", { type: "checkbox", "aria-label": "select " + run.name, checked: selected.has(run.name) });
    box.addEventListener("change", () => onSelect(run.name, box.checked));
    // MLflow's own tags (mlflow.user, mlflow.source.name...) are shown on the run's page, not here.
    const tags = Object.entries(run.tags || {}).filter(([k]) => !k.startsWith("mlflow.")).map(([k, v]) => el("span", { class: "tag" }, v ? k + "=" + v : k));
    return el("tr", { "data-run": run.name },
      el("td", {}, box),
      el("td", {}, H.link(run.name, "jobs", run.name),
        run.display_name ? el("div", { class: "muted small" }, run.display_name) : null),
      el("td", {}, H.badge(run.status)),
      el("td", {}, run.experiment_name || ""),
      el("td", {}, run.compute || ""),
      el("td", { class: "nowrap" }, H.when(run.created_at)),
      el("td", { class: "num" }, H.duration(H.runSeconds(run))),
      el("td", { class: "tags" }, tags));
  }

  H.pages.jobs = async function (root, route, signal) {
    if (route.args.length) return H.pages.run(root, route, signal);
    const f = Object.fromEntries(FILTERS.map((n) => [n, route.query.get(n) || ""]));
    const selected = new Set();
    const compareBtn = el("button", { type: "button", disabled: true }, "Compare selected");
    const onSelect = (name, on) => {
      if (on) selected.add(name); else selected.delete(name);
      compareBtn.disabled = selected.size < 2;
      compareBtn.textContent = selected.size ? `Compare selected (${selected.size})` : "Compare selected";
    };
    compareBtn.addEventListener("click", () => H.go("compare", [], new URLSearchParams({ runs: [...selected].join(",") })));
    const body = el("tbody");
    const count = el("span", { class: "muted" });
    root.append(el("div", { class: "bar" }, el("h1", {}, "Jobs"), count, compareBtn),
      filterForm(f, (q) => H.go("jobs", [], q)),
      el("div", { class: "scroll-x" }, el("table", { class: "list", id: "jobs" },
        el("thead", {}, el("tr", {}, el("th"), ["Name", "Status", "Experiment", "Compute", "Created", "Duration", "Tags"]
          .map((h) => el("th", {}, h)))), body)));
    const limit = Math.min(MAX_LIMIT, Math.max(1, Math.floor(+route.query.get("limit")) || PAGE));
    const q = new URLSearchParams(route.query);
    q.set("limit", String(limit));
    q.delete("since");
    if (sinceTime(f.since)) q.set("since", sinceTime(f.since).toISOString());
    const more = el("button", { type: "button", class: "more", hidden: true }, "Show more");
    more.addEventListener("click", () => {
      const next = new URLSearchParams(route.query);
      next.set("limit", String(Math.min(MAX_LIMIT, limit + PAGE)));
      H.go("jobs", [], next);
    });
    root.append(more);
    for (let first = true; !signal.aborted; first = false) {
      let runs, hasMore = false;
      try {
        if (sinceTime(f.since)) q.set("since", sinceTime(f.since).toISOString()); // the window moves
        const page = await api("/api/jobs?" + q.toString(), { signal, page: true });
        runs = page.body.filter((r) => H.matches(r, f));
        hasMore = page.next !== "";
      } catch (e) {
        // The first answer's error is the page's; later ones (a restarting server) are retried.
        if (first || signal.aborted || e.status === 401) throw e;
        await H.sleep(3000, signal);
        continue;
      }
      H.clear(body).append(...runs.map((r) => row(r, selected, onSelect)));
      if (!runs.length) body.append(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "No jobs match.")));
      count.textContent = runs.length + (runs.length === 1 ? " job" : " jobs") + (hasMore ? " shown; more match" : "");
      // Past the server's largest page, the filters narrow the list instead.
      more.hidden = !hasMore || limit >= MAX_LIMIT;
      await H.sleep(3000, signal);
    }
  };
})();
