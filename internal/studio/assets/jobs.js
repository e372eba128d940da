// The jobs list: filters kept in the page's URL (shareable, and the back button restores them),
// sent to the server as GET /api/jobs query parameters and applied here too, so that a server
// that does not filter yet shows the same rows.
"use strict";
(function () {
  const { el, api } = H;
  const FILTERS = ["status", "experiment", "compute", "tag", "q"];

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
    const form = el("form", { class: "filters" }, status,
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
    const q = new URLSearchParams(route.query);
    q.set("limit", "500");
    for (let first = true; !signal.aborted; first = false) {
      let runs;
      try {
        runs = (await api("/api/jobs?" + q.toString(), { signal })).filter((r) => H.matches(r, f));
      } catch (e) {
        // The first answer's error is the page's; later ones (a restarting server) are retried.
        if (first || signal.aborted || e.status === 401) throw e;
        await H.sleep(3000, signal);
        continue;
      }
      H.clear(body).append(...runs.map((r) => row(r, selected, onSelect)));
      if (!runs.length) body.append(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "No jobs match.")));
      count.textContent = runs.length + (runs.length === 1 ? " job" : " jobs");
      await H.sleep(3000, signal);
    }
  };
})();
