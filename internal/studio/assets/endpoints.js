// Online endpoints: their traffic, deployments and replicas (runs), and each deployment's
// requests, errors and latency as the router counts them.
"use strict";
(function () {
  const { el, api } = H;
  const enc = encodeURIComponent;
  const pct = (m) => Object.entries(m || {}).sort().map(([k, v]) => `${k}=${v}`).join(" ") || "none";

  H.pages.endpoints = async function (root, route, signal) {
    const name = route.args[0];
    if (name) return endpointPage(root, name, signal);
    root.append(el("h1", {}, "Online endpoints"));
    const eps = await api("/api/online-endpoints", { signal });
    if (!eps.length) {
      root.append(el("p", { class: "muted" }, "No online endpoints. Create one with hangar online-endpoint create -f endpoint.yml."));
      return;
    }
    root.append(el("table", { class: "list", id: "endpoints" },
      el("thead", {}, el("tr", {}, ["Name", "Auth", "Traffic", "Mirror", "Scoring URI"].map((h) => el("th", {}, h)))),
      el("tbody", {}, eps.map((e) => el("tr", { "data-endpoint": e.name },
        el("td", {}, H.link(e.name, "endpoints", e.name)), el("td", {}, e.auth_mode), el("td", {}, pct(e.traffic)),
        el("td", {}, pct(e.mirror_traffic)), el("td", { class: "small" }, e.scoring_uri))))));
  };

  function statsTable(deps, stats) {
    const by = Object.fromEntries((stats || []).map((s) => [s.deployment, s]));
    const n = (s, k) => (s && s.requests && s.requests[k]) || 0;
    return el("table", { class: "list", id: "deployment-stats" },
      el("thead", {}, el("tr", {}, ["Deployment", "State", "Replicas ready", "Requests 2xx", "4xx", "5xx", "In flight", "Held",
        "Latency p50", "p99", "Mirrored"].map((h) => el("th", {}, h)))),
      el("tbody", {}, deps.map((d) => {
        const s = by[d.name];
        const ready = (d.replicas || []).filter((r) => r.status === "Running" && r.address).length;
        return el("tr", { "data-deployment": d.name },
          el("td", {}, d.name), el("td", { title: d.reason || "" }, d.provisioning_state),
          el("td", { class: "num" }, `${ready}/${(d.replicas || []).length}`),
          el("td", { class: "num requests-2xx" }, n(s, "2xx")), el("td", { class: "num" }, n(s, "4xx")),
          el("td", { class: "num errors" }, n(s, "5xx")), el("td", { class: "num" }, s ? s.in_flight : 0),
          el("td", { class: "num" }, s ? s.held : 0),
          el("td", { class: "num" }, s && s.latency_p50_ms ? `≤ ${H.num(s.latency_p50_ms)} ms` : ""),
          el("td", { class: "num" }, s && s.latency_p99_ms ? `≤ ${H.num(s.latency_p99_ms)} ms` : ""),
          el("td", { class: "num" }, s ? s.mirrored : 0));
      })));
  }

  function replicasTable(deps) {
    const rows = deps.flatMap((d) => (d.replicas || []).map((r) => ({ d, r })));
    if (!rows.length) return el("p", { class: "muted" }, "No replicas now.");
    return el("table", { class: "list", id: "replicas" },
      el("thead", {}, el("tr", {}, ["Deployment", "Replica (run)", "Status", "Address", "Generation", "Why"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map(({ d, r }) => el("tr", {}, el("td", {}, d.name), el("td", {}, H.link(r.run, "jobs", r.run)),
        el("td", {}, r.status), el("td", {}, r.address || ""), el("td", { class: "num" }, r.generation), el("td", {}, r.reason || "")))));
  }

  async function endpointPage(root, name, signal) {
    const e = await api(`/api/online-endpoints/${enc(name)}`, { signal });
    root.append(el("h1", {}, name), H.facts([["Scoring URI", e.scoring_uri], ["Auth mode", e.auth_mode],
      ["Traffic", pct(e.traffic)], ["Mirror traffic", pct(e.mirror_traffic)], ["Description", e.description]]));
    const stats = el("div", { class: "scroll-x" });
    const reps = el("div", { class: "scroll-x" });
    root.append(el("h2", {}, "Deployments"), stats, el("h2", {}, "Replicas"), reps);
    while (!signal.aborted) {
      const [deps, st] = await Promise.all([api(`/api/online-endpoints/${enc(name)}/deployments`, { signal }),
        api(`/api/online-endpoints/${enc(name)}/stats`, { signal })]);
      H.clear(stats).append(deps.length ? statsTable(deps, st) : el("p", { class: "muted" }, "No deployments."));
      H.clear(reps).append(replicasTable(deps));
      await H.sleep(2000, signal);
    }
  }
})();
