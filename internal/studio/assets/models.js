// Models: registered models, a model's versions (stages, aliases, tags, descriptions) and each
// version's lineage (the run that produced it, its code snapshot, environment and input data)
// and the deployments serving it. Names, tags and descriptions are user text: text nodes only.
"use strict";
(function () {
  const { el, api } = H;
  const enc = encodeURIComponent;

  // mlflowStage is the version's stage as MLflow's registry names it.
  const mlflowStage = (v) => (v.archived ? "Archived" : v.mlflow_stage || "None");

  const tagList = (tags) => Object.keys(tags || {}).sort().map((k) => el("span", { class: "tag" }, k + "=" + tags[k]));

  // H.registeredModelsSection is a run page's list of the model versions registered from the
  // run's outputs (lineage from the run's side); nothing when there are none.
  H.registeredModelsSection = function (run, signal) {
    const sec = el("section", { id: "registered-models" });
    api(`/api/jobs/${enc(run)}/models`, { signal }).then((vs) => {
      if (!vs.length) return;
      sec.append(el("h2", {}, "Registered models"), el("table", { class: "list" },
        el("thead", {}, el("tr", {}, ["Model", "Version", "Type", "From", "Created"].map((h) => el("th", {}, h)))),
        el("tbody", {}, vs.map((v) => el("tr", { "data-model": v.name + ":" + v.version },
          el("td", {}, H.link(v.name, "models", v.name)), el("td", {}, v.version), el("td", {}, v.type),
          el("td", { class: "small" }, v.source), el("td", { class: "nowrap" }, H.when(v.created_at)))))));
    }).catch((e) => { if (!signal.aborted) sec.append(el("p", { class: "error" }, e.message)); });
    return sec;
  };

  H.pages.models = async function (root, route, signal) {
    const name = route.args[0];
    if (name) return modelPage(root, name, signal);
    root.append(el("h1", {}, "Models"));
    const models = await api("/api/models", { signal });
    if (!models.length) {
      root.append(el("p", { class: "muted" }, "No models registered. Register one with hangar model create, or mlflow.register_model from a job."));
      return;
    }
    root.append(el("div", { class: "scroll-x" }, el("table", { class: "list", id: "models" },
      el("thead", {}, el("tr", {}, ["Name", "Latest version", "Type", "MLflow stage", "Source", "Created"].map((h) => el("th", {}, h)))),
      el("tbody", {}, models.map((v) => el("tr", { "data-model": v.name },
        el("td", {}, H.link(v.name, "models", v.name)), el("td", {}, v.version), el("td", {}, v.type),
        el("td", {}, mlflowStage(v)), el("td", { class: "small" }, v.source), el("td", { class: "nowrap" }, H.when(v.created_at))))))));
  };

  async function modelPage(root, name, signal) {
    const versions = await api(`/api/models?name=${enc(name)}&include_archived=true`, { signal });
    root.append(el("h1", {}, name));
    if (!versions.length) {
      root.append(el("p", { class: "muted" }, "No versions."));
      return;
    }
    versions.sort((a, b) => new Date(b.created_at) - new Date(a.created_at));
    const m = await api(`/api/models/${enc(name)}/lineage`, { signal });
    const byVersion = new Map(m.versions.map((l) => [l.version, l]));
    const lineages = versions.map((v) => byVersion.get(v.version) || { aliases: [], deployments: [] });
    if (m.description) root.append(el("p", { class: "model-description" }, m.description));
    if (Object.keys(m.tags || {}).length) root.append(el("p", { class: "model-tags" }, tagList(m.tags)));
    root.append(el("h2", {}, "Versions"), el("div", { class: "scroll-x" }, versionsTable(versions, lineages)));
    versions.forEach((v, i) => root.append(versionSection(v, lineages[i])));
  }

  function versionsTable(versions, lineages) {
    return el("table", { class: "list", id: "versions" },
      el("thead", {}, el("tr", {}, ["Version", "Type", "Stage", "Archived", "MLflow stage", "Aliases", "Tags", "Description", "Created"]
        .map((h) => el("th", {}, h)))),
      el("tbody", {}, versions.map((v, i) => el("tr", { "data-version": v.version },
        el("td", {}, el("a", { href: "#v-" + enc(v.version), onclick: jumpTo(v.version) }, v.version)), el("td", {}, v.type),
        el("td", {}, v.stage || ""), el("td", {}, v.archived ? "yes" : ""), el("td", { class: "mlflow-stage" }, mlflowStage(v)),
        el("td", { class: "aliases" }, lineages[i].aliases.map((a) => el("span", { class: "tag alias" }, "@" + a))),
        el("td", { class: "tags" }, tagList(v.tags)), el("td", { class: "description" }, v.description || ""),
        el("td", { class: "nowrap" }, H.when(v.created_at))))));
  }

  // jumpTo scrolls to a version's section without changing the route (the hash is the route).
  const jumpTo = (version) => (ev) => {
    ev.preventDefault();
    document.querySelector(`section.version[data-version="${CSS.escape(version)}"]`)?.scrollIntoView();
  };

  function versionSection(v, l) {
    const sec = el("section", { class: "version", "data-version": v.version },
      el("h2", {}, `Version ${v.version}`), el("h3", {}, "Lineage"), lineageFacts(l));
    if (l.run && !l.run.deleted) sec.append(el("h3", {}, "Input data"), inputsTable(l.run.inputs));
    sec.append(el("h3", {}, "Deployments"), deploymentsTable(l.deployments));
    return sec;
  }

  function lineageFacts(l) {
    const r = l.run;
    if (!r) return H.facts([["Source", "files uploaded from the client (no run)"]]);
    const run = r.deleted ? el("span", {}, r.name + " (deleted)") :
      el("span", { class: "run" }, H.link(r.name, "jobs", r.name), r.display_name && r.display_name !== r.name ? " " + r.display_name + " " : " ",
        H.badge(r.status));
    return el("dl", { class: "facts lineage" },
      fact("Run", run, "run"), fact("Output", r.output, "output"),
      r.deleted ? null : fact("Experiment", r.experiment_name || "", "experiment"),
      r.deleted ? null : fact("Code snapshot", r.code_snapshot ? el("code", { title: r.code_snapshot }, r.code_snapshot.slice(0, 12) + "…") :
        "none (the job had no code)", "code"),
      r.deleted ? null : fact("Environment", environment(r.environment), "environment"));
  }

  // fact is one dt/dd pair whose dd carries data-fact for tests and tools.
  const fact = (k, v, key) => [el("dt", {}, k), el("dd", { "data-fact": key }, v)];

  function environment(e) {
    if (e.name) return H.link(`${e.name}:${e.version}`, "environments", e.name, e.version);
    if (e.ref) return e.ref;
    if (e.image) return "inline, image " + e.image;
    return e.inline ? "inline" : "none (the host's)";
  }

  // inputPath links another job's output to that job's page; other paths are text.
  function inputPath(p) {
    const m = /^azureml:\/\/jobs\/([^/]+)\//.exec(p || "");
    return m ? H.link(p, "jobs", m[1]) : p || "";
  }

  function inputsTable(inputs) {
    if (!inputs.length) return el("p", { class: "muted" }, "The run had no input data.");
    return el("table", { class: "list inputs" },
      el("thead", {}, el("tr", {}, ["Input", "Type", "Path"].map((h) => el("th", {}, h)))),
      el("tbody", {}, inputs.map((i) => el("tr", { "data-input": i.name },
        el("td", {}, i.name), el("td", {}, i.type), el("td", { class: "small" }, inputPath(i.path))))));
  }

  function deploymentsTable(deps) {
    if (!deps.length) return el("p", { class: "muted" }, "No deployment serves this version.");
    return el("table", { class: "list deployments" },
      el("thead", {}, el("tr", {}, ["Kind", "Endpoint", "Deployment", "Model as named", "Serves version", "State"].map((h) => el("th", {}, h)))),
      el("tbody", {}, deps.map((d) => el("tr", { "data-deployment": d.endpoint + "/" + d.deployment, "data-kind": d.kind },
        el("td", {}, d.kind), el("td", {}, d.kind === "online" ? H.link(d.endpoint, "endpoints", d.endpoint) : d.endpoint),
        el("td", {}, d.deployment), el("td", { class: "ref" }, d.ref), el("td", { class: "served" }, d.version || "?"),
        el("td", {}, d.state || "")))));
  }
})();
