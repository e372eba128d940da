// Data: the workspace's data assets and, for each version, where its bytes live (uploaded to the
// workspace's blob store, a job's output, a path in an object store read where it is, a web
// file) and where it came from (an upload, a job, a data import). Names, paths and descriptions
// are user text: text nodes only.
"use strict";
(function () {
  const { el, api } = H;
  const enc = encodeURIComponent;

  // where says where a version's bytes live.
  function where(v) {
    if (v.location) {
      return el("span", {}, el("code", { class: "uri" }, v.location.uri),
        el("span", { class: "muted" }, v.location.datastore ? ` (datastore ${v.location.datastore}, read where it is)` : " (read where it is)"));
    }
    if (v.manifest) return el("span", {}, "workspaceblobstore", el("span", { class: "muted" }, ` (${v.files} files, ${H.bytes(v.size)})`));
    return el("code", { class: "uri" }, v.path || "");
  }

  // from says where a version came from: an import, a job's output, an upload, a path.
  function from(v) {
    if (v.import) {
      const i = v.import;
      return el("span", {}, `imported from connection ${i.connection} by `, H.link(i.job, "jobs", i.job));
    }
    const m = /^azureml:\/\/jobs\/([^/]+)\//.exec(v.source || "");
    if (m) return el("span", {}, "job ", H.link(m[1], "jobs", m[1]), el("span", { class: "muted" }, " " + v.source));
    return v.source === "local" ? "uploaded from a client" : v.source || "";
  }

  H.pages.data = async function (root, route, signal) {
    const name = route.args[0];
    if (name) return dataPage(root, name, signal);
    root.append(el("h1", {}, "Data"));
    const assets = await api("/api/data", { signal });
    if (!assets.length) {
      root.append(el("p", { class: "muted" }, "No data assets. Register one with hangar data create, or hangar data import."));
      return;
    }
    root.append(el("div", { class: "scroll-x" }, el("table", { class: "list", id: "data-assets" },
      el("thead", {}, el("tr", {}, ["Name", "Latest version", "Type", "Where the bytes live", "From", "Created"].map((h) => el("th", {}, h)))),
      el("tbody", {}, assets.map((v) => el("tr", { "data-asset": v.name },
        el("td", {}, H.link(v.name, "data", v.name)), el("td", {}, v.version), el("td", {}, v.type),
        el("td", { class: "where" }, where(v)), el("td", { class: "small from" }, from(v)),
        el("td", { class: "nowrap" }, H.when(v.created_at))))))));
  };

  async function dataPage(root, name, signal) {
    const versions = await api(`/api/data?name=${enc(name)}&include_archived=true`, { signal });
    root.append(el("h1", {}, name));
    if (!versions.length) {
      root.append(el("p", { class: "muted" }, "No versions."));
      return;
    }
    versions.sort((a, b) => new Date(b.created_at) - new Date(a.created_at));
    root.append(el("div", { class: "scroll-x" }, el("table", { class: "list", id: "data-versions" },
      el("thead", {}, el("tr", {}, ["Version", "Type", "Where the bytes live", "From", "Archived", "Description", "Use as", "Created"].map((h) => el("th", {}, h)))),
      el("tbody", {}, versions.map((v) => el("tr", { "data-version": v.version },
        el("td", {}, v.version), el("td", {}, v.type), el("td", { class: "where" }, where(v)),
        el("td", { class: "small from" }, from(v)), el("td", {}, v.archived ? "yes" : ""),
        el("td", { class: "description" }, v.description || ""), el("td", {}, el("code", {}, `azureml:${v.name}:${v.version}`)),
        el("td", { class: "nowrap" }, H.when(v.created_at))))))));
  }
})();
