// The JSON API from the page: the API key (sessionStorage), errors as ApiError, and small DOM helpers.
// Everything from the server is put in the page as text (textContent), never parsed as HTML.

const KEY_ITEM = "memstack.apiKey";
const USER_ITEM = "memstack.user";

export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export const store = {
  get key() { return sessionStorage.getItem(KEY_ITEM) || ""; },
  set key(value) {
    if (value) sessionStorage.setItem(KEY_ITEM, value); else sessionStorage.removeItem(KEY_ITEM);
  },
  get user() { return localStorage.getItem(USER_ITEM) || ""; },
  set user(value) { localStorage.setItem(USER_ITEM, value); },
};

// Called with the ApiError when the server answers 401 (the app opens the key dialog).
let onUnauthorized = () => {};
export function whenUnauthorized(handler) { onUnauthorized = handler; }

function headers(json) {
  const out = { Accept: "application/json" };
  if (json) out["Content-Type"] = "application/json";
  if (store.key) out.Authorization = `Bearer ${store.key}`;
  return out;
}

async function failure(response) {
  let type = "HTTPError";
  let message = `the server answered ${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) {
      type = body.error.type || type;
      message = body.error.message || message;
    } else if (body && body.detail) {
      message = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    }
  } catch (_) {
    // not JSON: keep the status line
  }
  const error = new ApiError(response.status, type, message);
  if (response.status === 401) onUnauthorized(error);
  return error;
}

// fetch() a JSON endpoint; `query` values that are null/undefined/"" are left out, arrays repeat the name.
export async function request(method, path, { body, query } = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(one));
  }
  let response;
  try {
    response = await fetch(url, {
      method,
      headers: headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, "NetworkError", `the server could not be reached (${err.message}); is memstack serve running?`);
  }
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  return response.json();
}

// GET a file the server sends (a user's export) and save it under `filename` in the browser's downloads.
export async function download(path, filename) {
  let response;
  try {
    response = await fetch(new URL(path, location.origin), { headers: headers(false) });
  } catch (err) {
    throw new ApiError(0, "NetworkError", `the server could not be reached (${err.message})`);
  }
  if (!response.ok) throw await failure(response);
  const url = URL.createObjectURL(await response.blob());
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// POST with "stream": true and read the server-sent events; onEvent(name, data) for each. Resolves with the
// "done" event's data. A server that answers plain JSON instead is accepted too (the result is the body).
export async function stream(path, body, onEvent) {
  let response;
  try {
    response = await fetch(new URL(path, location.origin), {
      method: "POST",
      headers: { ...headers(true), Accept: "text/event-stream" },
      body: JSON.stringify({ ...body, stream: true }),
    });
  } catch (err) {
    throw new ApiError(0, "NetworkError", `the server could not be reached (${err.message})`);
  }
  if (!response.ok) throw await failure(response);
  if (!(response.headers.get("content-type") || "").startsWith("text/event-stream")) return response.json();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let result = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += value.replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      const parsed = JSON.parse(data.join("\n"));
      if (name === "error") {
        const e = parsed.error || {};
        throw new ApiError(e.status || 500, e.type || "Error", e.message || "the turn failed");
      }
      if (name === "done") result = parsed;
      onEvent(name, parsed);
    }
    if (done) break;
  }
  if (result === null) throw new ApiError(0, "StreamError", "the reply stream ended before its last event; try again");
  return result;
}

// h("li", {class: "x", onclick: f}, "text", child) → an element; strings become text nodes.
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function $(selector) { return document.querySelector(selector); }

let statusTimer = 0;
// A polite announcement (role=status): shown briefly, read by screen readers.
export function announce(text) {
  const box = $("#status");
  box.textContent = text;
  box.classList.add("shown");
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => box.classList.remove("shown"), 4000);
}

// An error the user must see (role=alert) until the next action clears it.
export function showError(error) {
  const box = $("#alert");
  box.textContent = error instanceof ApiError ? `${error.message} (${error.type})` : String(error.message || error);
  box.hidden = false;
}

export function clearError() {
  const box = $("#alert");
  box.hidden = true;
  box.textContent = "";
}

// Run an async action with errors shown in the alert box; the action's result, or undefined after an error.
export async function guarded(action) {
  clearError();
  try {
    return await action();
  } catch (error) {
    showError(error);
    return undefined;
  }
}

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
