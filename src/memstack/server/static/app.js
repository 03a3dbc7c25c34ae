// The page: views chosen by the URL's hash (#/users, #/memories, #/sessions, #/sessions/ID, #/chat, #/inspect/ID?user=U),
// the user picker and the API key dialog. The server's /ui/api/info says whether keys are required (keys mode) or not
// (local mode). Without a chosen user the page shows the tenant's users to pick from.

import { $, announce, clearError, guarded, request, showError, store, whenUnauthorized } from "./api.js";
import { setupChat, showChat } from "./chat.js";
import { setupInspector, showInspector } from "./inspector.js";
import { setupMemories, showMemories } from "./memories.js";
import { setupSessions, showSessions } from "./sessions.js";
import { setupUsers, showUsers } from "./users.js";
import { setupWebhooks, showWebhooks } from "./webhooks.js";

const VIEWS = ["users", "memories", "sessions", "chat", "inspect", "webhooks"];
const TITLES = {
  users: "Users", memories: "Memories", sessions: "Sessions", chat: "Chat", inspect: "Inspector", webhooks: "Webhooks",
};
const TENANT_VIEWS = ["users", "webhooks"]; // about the tenant, not one user
let info = null;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = raw.split("?");
  const [view, ...rest] = path.split("/");
  return {
    view: VIEWS.includes(view) ? view : "memories",
    arg: rest.length ? decodeURIComponent(rest.join("/")) : "",
    params: new URLSearchParams(query),
  };
}

async function route() {
  const parsed = parseHash();
  const { arg, params } = parsed;
  const fromLink = params.get("user");
  if (fromLink && fromLink !== store.user) setUser(fromLink);
  const user = store.user;
  const view = user || TENANT_VIEWS.includes(parsed.view) ? parsed.view : "users"; // the others are about one user
  for (const name of VIEWS) {
    const section = $(`#view-${name}`);
    const active = name === view;
    section.hidden = !active;
    const link = document.querySelector(`nav a[data-view="${name}"]`);
    if (active) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  clearError();
  if (view === "users") {
    await showUsers();
    if (!user && parsed.view !== "users") { // after the list's own request, which clears the alert box
      showError(new Error("Choose a user first: pick one below, or type a user id in the User box and press Open."));
    }
  } else if (view === "webhooks") await showWebhooks();
  else if (view === "memories") await showMemories(user);
  else if (view === "sessions") await showSessions(user, arg);
  else if (view === "chat") await showChat(user);
  else await showInspector(user, arg);
  document.title = `memstack · ${TITLES[view]}${user ? ` · ${user}` : ""}`;
}

function setUser(user) {
  store.user = user;
  $("#user-id").value = user;
}

function openKeyDialog(reason) {
  const dialog = $("#key-dialog");
  if (dialog.open) return;
  $("#key-input").value = store.key;
  if (reason) $("#key-help").textContent = reason;
  dialog.showModal();
  $("#key-input").focus();
}

function showAuth() {
  const mode = info ? info.auth : "";
  $("#auth-mode").textContent = mode === "local"
    ? (store.key ? "local mode · key set" : "local mode")
    : store.key ? "key set" : "no key";
}

function setupHeader() {
  $("#user-id").value = store.user;
  $("#user-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const user = $("#user-id").value.trim();
    if (!user) return;
    setUser(user);
    announce(`Showing user ${user}.`);
    route();
  });
  $("#key-button").addEventListener("click", () => openKeyDialog());
  $("#key-cancel").addEventListener("click", () => $("#key-dialog").close("cancel"));
  $("#key-clear").addEventListener("click", () => {
    store.key = "";
    $("#key-dialog").close("clear");
    showAuth();
    announce("API key forgotten.");
  });
  $("#key-form").addEventListener("submit", () => {
    // method=dialog closes the dialog; keep the key for this tab and reload the view with it.
    store.key = $("#key-input").value.trim();
    showAuth();
    announce(store.key ? "API key set for this tab." : "No API key set.");
    setTimeout(route, 0);
  });
  whenUnauthorized((error) => openKeyDialog(`${error.message}. The key is kept in this tab only.`));
}

async function start() {
  setupHeader();
  info = await guarded(() => request("GET", "/ui/api/info"));
  if (!info) return;
  showAuth();
  setupMemories(info);
  setupUsers();
  setupSessions();
  setupChat();
  setupInspector();
  setupWebhooks();
  window.addEventListener("hashchange", route);
  if (info.auth === "keys" && !store.key) openKeyDialog();
  await route();
  document.body.dataset.ready = "true"; // the UI tests wait for this
}

start();
