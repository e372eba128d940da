// Hangar studio: shared helpers, the API client, login and the router.
// Every piece of user text (job names, log lines, tags, metric names) reaches the page through
// text nodes (el() and text()), never innerHTML.
"use strict";

const H = (window.H = {});

// el builds an element: attrs are set as attributes (or listeners for on* keys given functions);
// strings among children become text nodes.
H.el = function (tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  H.append(e, children);
  return e;
};

H.append = function (parent, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    parent.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return parent;
};

H.clear = function (e) {
  while (e.firstChild) e.removeChild(e.firstChild);
  return e;
};

H.CSRF = "X-Hangar-Studio";

class APIError extends Error {
  constructor(status, msg) {
    super(msg);
    this.status = status;
  }
}
H.APIError = APIError;

// api fetches JSON from the workspace API with the session cookie; every request carries the
// header the server asks of state-changing ones.
H.api = async function (path, opts = {}) {
  const r = await fetch(path, {
    method: opts.method || "GET",
    credentials: "same-origin",
    headers: { [H.CSRF]: "1", Accept: "application/json" },
    signal: opts.signal,
    cache: "no-store",
  });
  if (!r.ok) {
    let msg = r.status + " " + r.statusText;
    try {
      const b = await r.json();
      if (b && b.error) msg = b.error;
    } catch (_) { /* not JSON */ }
    if (r.status === 401) H.needLogin(msg);
    throw new APIError(r.status, msg);
  }
  if (r.status === 204) return null;
  // opts.page: also the token of the next page, from the job list's header.
  if (opts.page) return { body: await r.json(), next: r.headers.get("X-Hangar-Next-Page-Token") || "" };
  return r.json();
};

H.jobPath = (name) => "/api/jobs/" + encodeURIComponent(name);

// Times and numbers for people.
H.when = function (t) {
  if (!t) return "";
  const d = new Date(t);
  if (isNaN(d)) return "";
  return d.toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });
};
H.duration = function (secs) {
  if (secs === undefined || secs === null || isNaN(secs)) return "";
  secs = Math.max(0, Math.round(secs));
  const h = Math.floor(secs / 3600), m = Math.floor((secs % 3600) / 60), s = secs % 60;
  if (h) return h + "h " + m + "m";
  if (m) return m + "m " + s + "s";
  return s + "s";
};
H.runSeconds = function (run) {
  if (!run.started_at) return null;
  const end = run.ended_at ? new Date(run.ended_at) : new Date();
  return (end - new Date(run.started_at)) / 1000;
};
H.num = function (v) {
  if (typeof v !== "number") return String(v ?? "");
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(3) : String(+v.toPrecision(5));
};
H.bytes = function (n) {
  if (!n) return "0 B";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
};

H.STATES = ["NotStarted", "Queued", "Provisioning", "Preparing", "Starting", "Running", "Finalizing",
  "CancelRequested", "NotResponding", "Completed", "Failed", "Canceled"];
H.TERMINAL = new Set(["Completed", "Failed", "Canceled"]);
H.active = (run) => !H.TERMINAL.has(run.status);
H.badge = function (state) {
  let kind = "wait";
  if (state === "Running" || state === "Finalizing") kind = "run";
  else if (state === "Completed") kind = "ok";
  else if (state === "Failed" || state === "NotResponding") kind = "bad";
  else if (state === "Canceled" || state === "CancelRequested") kind = "off";
  return H.el("span", { class: "badge " + kind, "data-status": state }, state || "?");
};

// A definition list of the fields that exist (absent ones are left out).
H.facts = function (pairs) {
  const dl = H.el("dl", { class: "facts" });
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length)) continue;
    dl.append(H.el("dt", {}, k), H.el("dd", {}, v));
  }
  return dl;
};

// A key/value table of an object (tags, params, inputs), or a line saying there are none.
H.kvTable = function (obj, empty) {
  const keys = Object.keys(obj || {}).sort();
  if (!keys.length) return H.el("p", { class: "muted" }, empty);
  return H.el("table", { class: "kv" }, H.el("tbody", {}, keys.map((k) => {
    let v = obj[k];
    if (v !== null && typeof v === "object") v = JSON.stringify(v);
    return H.el("tr", {}, H.el("th", {}, k), H.el("td", {}, String(v ?? "")));
  })));
};

// Routing: #/page/arg?query. Each page gets the route and an AbortSignal that fires when the
// user leaves it, which ends its polling.
H.pages = {};
let current = null;

H.route = function () {
  const h = location.hash.replace(/^#\/?/, "");
  const [p, q] = h.split("?");
  const parts = (p || "jobs").split("/").map((s) => decodeURIComponent(s));
  return { page: parts[0] || "jobs", args: parts.slice(1), query: new URLSearchParams(q || "") };
};

H.go = function (page, args, query) {
  let h = "#/" + [page, ...(args || [])].map(encodeURIComponent).join("/");
  const q = query ? query.toString() : "";
  if (q) h += "?" + q;
  if (location.hash !== h) location.hash = h;
};

H.link = (text, page, ...args) =>
  H.el("a", { href: "#/" + [page, ...args].map(encodeURIComponent).join("/") }, text);

async function render() {
  if (current) current.abort();
  const ctl = (current = new AbortController());
  const r = H.route();
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("here", a.dataset.page === r.page);
  }
  const main = document.getElementById("main");
  const page = H.pages[r.page];
  const root = H.el("div", { class: "page", "data-page": r.page });
  H.clear(main).append(root);
  if (!page) {
    root.append(H.el("p", {}, "No such page. "), H.link("Jobs", "jobs"));
    return;
  }
  try {
    await page(root, r, ctl.signal);
  } catch (e) {
    if (ctl.signal.aborted) return;
    root.append(H.el("p", { class: "error" }, e.message || String(e)));
  }
}

H.needLogin = function (msg) {
  const main = document.getElementById("main");
  if (main.querySelector(".login-needed")) return;
  if (current) current.abort();
  H.clear(main).append(H.el("div", { class: "page login-needed" },
    H.el("h1", {}, "Log in"),
    H.el("p", {}, msg),
    H.el("p", {}, "Run ", H.el("code", {}, "hangar studio"),
      " on a machine with the workspace's CLI: it prints a one-time link that logs this browser in.")));
  oidcButton(main.querySelector(".login-needed"));
};

// oidcButton offers the server's OpenID Connect sign-in, when it has one (GET /studio/oidc
// answers 404 otherwise).
async function oidcButton(page) {
  let info;
  try {
    const r = await fetch("/studio/oidc", { credentials: "same-origin" });
    if (!r.ok) return;
    info = await r.json();
  } catch (_) {
    return;
  }
  page.append(H.el("p", {}, H.el("a", { class: "button", id: "oidc-login", href: "/studio/oidc/login" },
    "Sign in with " + info.name)));
}

// sleep waits ms, or less when the page is left.
H.sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  if (signal) signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
});

// login trades the one-time code in the fragment for a session cookie, and takes the code out
// of the address bar and history at once.
async function login() {
  const m = location.hash.match(/^#login=([A-Za-z0-9_-]+)/);
  if (!m) return;
  history.replaceState(null, "", location.pathname + "#/jobs");
  const r = await fetch("/studio/login", {
    method: "POST", credentials: "same-origin",
    headers: { [H.CSRF]: "1", "Content-Type": "application/json" },
    body: JSON.stringify({ code: m[1] }),
  });
  if (!r.ok) {
    let msg = "login failed";
    try { msg = (await r.json()).error || msg; } catch (_) { /* not JSON */ }
    H.needLogin(msg);
    throw new APIError(r.status, msg);
  }
}

async function logout() {
  await fetch("/studio/logout", { method: "POST", credentials: "same-origin", headers: { [H.CSRF]: "1" } });
  H.needLogin("You logged out.");
}

window.addEventListener("DOMContentLoaded", async () => {
  document.getElementById("logout").addEventListener("click", logout);
  try {
    await login();
  } catch (_) {
    return;
  }
  window.addEventListener("hashchange", render);
  render();
});
