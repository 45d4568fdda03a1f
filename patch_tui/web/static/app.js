// patch-tui inbox: the little script the pages need (no framework, no build step, served from
// this origin only: the CSP allows nothing else). It runs the passkey ceremonies the server
// starts, and keeps the list live from server-sent events.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
const say = (text) => { document.getElementById("status").textContent = text; };

function fromB64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
}
function toB64url(buffer) {
  let s = "";
  for (const b of new Uint8Array(buffer)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function post(url, body) {
  const answer = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: JSON.stringify(body || {}),
  });
  let data = {};
  try { data = await answer.json(); } catch (e) { data = { why: answer.statusText }; }
  if (!answer.ok || data.ok === false) throw new Error(data.why || answer.statusText);
  return data;
}

function credentialJSON(cred) {
  const r = cred.response;
  const out = { id: cred.id, rawId: toB64url(cred.rawId), type: cred.type, response: {
    clientDataJSON: toB64url(r.clientDataJSON) } };
  if (r.attestationObject) {
    out.response.attestationObject = toB64url(r.attestationObject);
    if (r.getTransports) out.response.transports = r.getTransports();
  } else {
    out.response.authenticatorData = toB64url(r.authenticatorData);
    out.response.signature = toB64url(r.signature);
    if (r.userHandle) out.response.userHandle = toB64url(r.userHandle);
  }
  out.clientExtensionResults = cred.getClientExtensionResults ? cred.getClientExtensionResults() : {};
  return out;
}

async function assertWith(options) {
  const o = Object.assign({}, options, { challenge: fromB64url(options.challenge) });
  o.allowCredentials = (options.allowCredentials || []).map((c) => Object.assign({}, c, { id: fromB64url(c.id) }));
  return credentialJSON(await navigator.credentials.get({ publicKey: o }));
}

async function createWith(options) {
  const o = Object.assign({}, options, { challenge: fromB64url(options.challenge) });
  o.user = Object.assign({}, options.user, { id: fromB64url(options.user.id) });
  o.excludeCredentials = (options.excludeCredentials || []).map((c) => Object.assign({}, c, { id: fromB64url(c.id) }));
  return credentialJSON(await navigator.credentials.create({ publicKey: o }));
}

function failed(error) {
  const why = error && error.name === "NotAllowedError" ? "the passkey was not used (cancelled or timed out)" : (error.message || String(error));
  say("Not done: " + why);
}

// -- sign in, sign out, enroll ---------------------------------------------------------------

async function login() {
  try {
    say("Asking your passkey…");
    const start = await post("/login/options");
    const credential = await assertWith(start.options);
    await post("/login/finish", { ceremony: start.ceremony, credential });
    location.assign("/");
  } catch (e) { failed(e); }
}

async function enroll(link) {
  try {
    say("Checking the link…");
    const start = await post("/enroll/options", { link });
    say("Creating a passkey for " + start.approver + "…");
    const credential = await createWith(start.options);
    await post("/enroll/finish", { ceremony: start.ceremony, credential });
    say("Passkey registered for " + start.approver + ".");
    location.assign("/");
  } catch (e) { failed(e); }
}

// -- deciding ----------------------------------------------------------------------------------

function editedArgs(form) {
  const args = {};
  for (const field of form.querySelectorAll(".field")) {
    const name = field.dataset.input;
    const input = field.querySelector("input, textarea");
    args[name] = field.dataset.type === "boolean" ? input.checked : input.value;
  }
  return args;
}

async function decide(form) {
  const article = document.querySelector("article.action");
  const token = article.dataset.token;
  const body = {
    decision: form.dataset.decision,
    note: form.elements.note ? form.elements.note.value : "",
    shown_args_sha256: article.dataset.argsSha256,
  };
  if (form.dataset.edit) body.args = editedArgs(form);
  const buttons = form.querySelectorAll("button");
  buttons.forEach((b) => { b.disabled = true; });
  try {
    say("Asking your passkey to sign this decision…");
    const start = await post(`/actions/${encodeURIComponent(token)}/prepare`, body);
    const credential = await assertWith(start.options);
    const done = await post(`/actions/${encodeURIComponent(token)}/decide`, { ceremony: start.ceremony, credential });
    say(`Done: ${done.status}.`);
    location.reload();
  } catch (e) {
    failed(e);
    buttons.forEach((b) => { b.disabled = false; });
  }
}

// -- live --------------------------------------------------------------------------------------

function live(onChange) {
  if (!window.EventSource) return;
  const source = new EventSource("/events");
  source.addEventListener("changed", onChange);
  // The session ended (idle): stop listening and ask for the passkey again.
  source.addEventListener("signed-out", () => { source.close(); location.assign("/login"); });
}

async function refreshList() {
  const answer = await fetch("/fragments/list", { credentials: "same-origin" });
  if (answer.status === 401) { location.assign("/login"); return; }
  if (!answer.ok) return;
  const holder = document.getElementById("live-list");
  const before = holder.querySelectorAll(".action-row").length;
  // Server-rendered, autoescaped HTML from this origin: no script runs from it (CSP).
  holder.innerHTML = await answer.text();
  const after = holder.querySelectorAll(".action-row").length;
  if (after > before) say(`${after - before} new action${after - before > 1 ? "s" : ""} waiting.`);
}

async function watchAction() {
  const article = document.querySelector("article.action");
  const answer = await fetch(`/actions/${encodeURIComponent(article.dataset.token)}.json`, { credentials: "same-origin" });
  if (!answer.ok) return;
  const now = await answer.json();
  if (now.status !== article.dataset.status || now.args_sha256 !== article.dataset.argsSha256) {
    const note = document.getElementById("changed-elsewhere");
    note.textContent = `This action is now ${now.status}${now.decided_by ? " (by " + now.decided_by + ")" : ""}. Reload to see it.`;
    note.hidden = false;
    document.querySelectorAll("form.decision button").forEach((b) => { b.disabled = true; });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  const out = document.getElementById("logout");
  if (out) out.addEventListener("click", async () => {
    try { await post("/logout"); } catch (e) { /* already gone */ }
    location.assign("/login");
  });
  if (page === "login") {
    const button = document.getElementById("login");
    if (button) button.addEventListener("click", login);
  } else if (page === "enroll") {
    const link = location.hash.slice(1);
    // The link is one-time: keep it out of the history and any later copy of the address.
    history.replaceState(null, "", "/enroll");
    document.getElementById("enroll").addEventListener("click", () => enroll(link));
  } else if (page === "list") {
    live(refreshList);
  } else if (page === "action") {
    for (const form of document.querySelectorAll("form.decision")) {
      form.addEventListener("submit", (event) => { event.preventDefault(); decide(form); });
    }
    live(watchAction);
  }
});
