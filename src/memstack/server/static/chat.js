// The chat playground: one conversation with the chosen user and agent, memory on or off, temporary or not. Each
// reply shows the "Memory updated" badge when detection saved something in time, and links to the context inspector.

import { $, announce, guarded, h, request, stream } from "./api.js";

const state = { user: "", sessionId: null, sending: false };

export function setupChat() {
  $("#chat-form").addEventListener("submit", (event) => { event.preventDefault(); send(); });
  $("#chat-message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
  });
  $("#chat-new").addEventListener("click", () => { newConversation(); $("#chat-message").focus(); });
  // Switching memory or temporary mid-conversation starts a new one: a temporary chat keeps no session.
  $("#chat-temporary").addEventListener("change", () => newConversation());
}

export async function showChat(user) {
  if (user !== state.user) {
    state.user = user;
    newConversation();
  }
  $("#chat-title").textContent = `Chat playground · ${user}`;
  await loadAgents();
}

async function loadAgents() {
  const select = $("#chat-agent");
  const chosen = select.value;
  const found = await guarded(() => request("GET", "/v1/agents"));
  const names = ["default", ...((found && found.agents) || []).map((a) => a.name).filter((n) => n !== "default")];
  select.replaceChildren(...names.map((name) => h("option", { value: name }, name)));
  if (names.includes(chosen)) select.value = chosen;
}

function newConversation() {
  state.sessionId = null;
  $("#transcript").replaceChildren();
  $("#chat-session").textContent = "New conversation";
}

async function send() {
  const box = $("#chat-message");
  const message = box.value.trim();
  if (!message || state.sending || !state.user) return;
  state.sending = true;
  $("#chat-send").disabled = true;
  const temporary = $("#chat-temporary").checked;
  const body = {
    user_id: state.user,
    message,
    memory: $("#chat-memory").checked,
    temporary,
    metadata: {
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      local_time: localTime(),
      user_agent: navigator.userAgent,
    },
  };
  const agent = $("#chat-agent").value;
  if (agent && agent !== "default") body.agent = agent;
  if (state.sessionId && !temporary) body.session_id = state.sessionId;
  else if (!temporary) body.new_session = true; // a new conversation here, not the user's current session

  const transcript = $("#transcript");
  transcript.append(h("li", { class: "msg user" }, h("span", { class: "who" }, "You"), h("p", {}, message)));
  const text = h("p", { class: "reply" });
  const reply = h("li", { class: "msg assistant", "aria-busy": "true" }, h("span", { class: "who" }, "Assistant"), text);
  transcript.append(reply);
  box.value = "";
  reply.scrollIntoView({ block: "nearest" });

  const result = await guarded(() => stream("/v1/chat", body, (name, data) => {
    if (name === "token") text.textContent += data.text;
  }));
  reply.setAttribute("aria-busy", "false");
  state.sending = false;
  $("#chat-send").disabled = false;
  box.focus();
  if (!result) {
    reply.classList.add("failed");
    text.textContent = text.textContent || "No reply: see the error above.";
    return;
  }
  text.textContent = result.reply;
  if (!temporary) state.sessionId = result.session_id;
  $("#chat-session").textContent = temporary
    ? "Temporary chat: nothing is stored"
    : `Session ${result.session_id}${result.turn ? ` · turn ${result.turn}` : ""}`;
  reply.append(footer(result, temporary));
  transcript.scrollTop = transcript.scrollHeight; // the badge and the inspector link in view
}

function footer(result, temporary) {
  const parts = [];
  const saved = (result.memory_updates || []).filter((u) => u.action === "created" || u.action === "updated");
  if (saved.length) {
    parts.push(h("span", { class: "badge" }, "Memory updated"));
    parts.push(h("ul", { class: "updates" }, saved.map((u) => h("li", {}, `${u.content} `,
      h("span", { class: "tag" }, u.category), u.action === "updated" ? " (updated)" : ""))));
    // The live region announces it; the badge itself is in the transcript for sighted users.
    $("#badge-live").textContent = `Memory updated: ${saved.map((u) => u.content).join("; ")}`;
  } else if (result.memory_pending) {
    parts.push(h("span", { class: "muted" }, "Memory check still running; anything found is saved."));
  }
  // The user's tier is full: what this message would have saved is not stored, and the reply says so.
  const dropped = (result.memory_updates || []).filter((u) => u.action === "dropped_limit");
  if (dropped.length) {
    const { tier, limit } = dropped[0];
    parts.push(h("span", { class: "badge full" }, "Memory full: not saved"));
    parts.push(h("ul", { class: "updates dropped" }, dropped.map((u) => h("li", {}, `${u.content} `,
      h("span", { class: "tag" }, u.category)))));
    parts.push(h("p", { class: "limit-note" },
      `The ${tier} tier keeps at most ${limit} memories: forget some in Memories to make room.`));
    $("#badge-live").textContent = `Memory full, not saved: ${dropped.map((u) => u.content).join("; ")}`;
  }
  if (result.upgrade_prompt) parts.push(h("p", { class: "upgrade" }, result.upgrade_prompt));
  if (result.context_id) {
    const href = `#/inspect/${encodeURIComponent(result.context_id)}?user=${encodeURIComponent(state.user)}`;
    parts.push(h("a", { href, class: "inspect-link" }, "Inspect context"));
  } else if (temporary) {
    parts.push(h("span", { class: "muted" }, "Temporary chat: no context kept to inspect"));
  }
  if (result.offline) parts.push(h("span", { class: "muted" }, "offline responder"));
  else if (result.model) parts.push(h("span", { class: "muted" }, result.model));
  if (saved.length) announce("Memory updated.");
  else if (dropped.length) announce("Memory full: not saved.");
  return h("div", { class: "reply-footer" }, parts);
}

function localTime() {
  const now = new Date();
  const pad = (n) => String(n).padStart(2, "0");
  const offset = -now.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}T${pad(now.getHours())}:`
    + `${pad(now.getMinutes())}:${pad(now.getSeconds())}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:`
    + `${pad(Math.abs(offset) % 60)}`;
}
