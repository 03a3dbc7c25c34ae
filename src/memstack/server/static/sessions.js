// A user's sessions and recall: the sessions most recently active first (turns, last active, ended or open, the
// cross-session line) with "End session", and a recall box over memories and past conversations together
// (POST /v1/users/{user}/recall: each item says whether it is a memory or a message, its score, when and where).
// A session opens (#/sessions/ID?user=U) on what it holds: its facts (hard exceptions marked), the turn log, the
// latest messages verbatim, and the responses it stored, each linked to the context inspector.

import { $, announce, guarded, h, request, when } from "./api.js";

const PAGE = 20; // sessions listed at once
const RECALL_K = 10;

const state = { user: "", shown: PAGE };

const base = () => `/v1/users/${encodeURIComponent(state.user)}`;

export function setupSessions() {
  $("#recall-form").addEventListener("submit", (event) => {
    event.preventDefault();
    recall(event.currentTarget);
  });
  $("#sessions-more").addEventListener("click", () => {
    state.shown += PAGE;
    refresh();
  });
}

export async function showSessions(user, sessionId) {
  if (user !== state.user) {
    state.shown = PAGE;
    $("#recall-results").replaceChildren();
  }
  state.user = user;
  $("#sessions-title").textContent = `Sessions of ${user}`;
  const detail = $("#session-detail");
  detail.hidden = !sessionId;
  detail.replaceChildren();
  await Promise.all(sessionId ? [refresh(), openSession(sessionId, detail)] : [refresh()]);
}

const sessionLink = (id) => `#/sessions/${encodeURIComponent(id)}?user=${encodeURIComponent(state.user)}`;

async function openSession(sessionId, detail) {
  const query = { user_id: state.user };
  const [session, contexts] = await Promise.all([
    guarded(() => request("GET", `/v1/sessions/${encodeURIComponent(sessionId)}`, { query })),
    guarded(() => request("GET", `/ui/api/users/${encodeURIComponent(state.user)}/contexts`, {
      query: { session_id: sessionId, limit: 100 },
    })),
  ]);
  if (!session) { detail.hidden = true; return; }
  const heading = h("h2", { id: "session-heading", tabindex: "-1" }, `Session ${session.session_id}`);
  detail.replaceChildren(
    h("div", { class: "row wrap" }, heading,
      h("a", { href: `#/sessions?user=${encodeURIComponent(state.user)}`, class: "muted" }, "Close")),
    h("dl", { class: "summary" },
      pair("Agent", session.agent || "—"), pair("Turns", String(session.turn_count)),
      pair("Started", when(session.created_at)), pair("Last active", when(session.updated_at)),
      pair("Ended", session.ended_at ? when(session.ended_at) : "no, open")),
    part("Facts", "session-facts", session.base_truth, (f) => h("li", { class: f.hard_exception ? "hard" : "" },
      f.text, f.hard_exception ? h("span", { class: "tag cat-goal" }, " hard exception") : null,
      h("span", { class: "muted" }, ` · since turn ${f.since_turn}`)), "No facts kept for this session."),
    part("Turn log", "session-turns", session.turn_log, (t) => h("li", { value: String(t.turn) },
      h("span", { class: "speaker" }, "User: "), t.user_summary || "—", h("br"),
      h("span", { class: "speaker" }, "Assistant: "), t.assistant_summary || "—",
      t.unsummarized ? h("span", { class: "forgotten" }, " (not summarized yet)") : null), "No turn logged yet.", "ol"),
    part("Latest messages", "session-window", session.raw_window, (m) => h("li", { class: `msg ${m.role}` },
      h("span", { class: "speaker" }, `${m.role === "user" ? "User" : m.role === "assistant" ? "Assistant" : m.role}`
        + ` · turn ${m.turn}: `), m.content), "No messages in the window."),
    part("Responses", "session-contexts", contexts ? contexts.contexts : [], (c) => h("li", {},
      h("a", { href: `#/inspect/${encodeURIComponent(c.context_id)}?user=${encodeURIComponent(state.user)}` },
        `Inspect context of ${when(c.created_at)}`),
      ` · ${c.tokens} / ${c.budget_tokens} tokens · ${c.memories} memories`), "No stored response in this session."),
  );
  heading.focus();
}

function pair(name, value) {
  return h("div", {}, h("dt", {}, name), h("dd", {}, value));
}

function part(title, id, items, render, empty, tag = "ul") {
  return h("section", { "aria-labelledby": `${id}-title` },
    h("h3", { id: `${id}-title` }, title),
    items.length ? h(tag, { id, class: "session-part", "aria-labelledby": `${id}-title` }, items.map(render))
      : h("p", { class: "empty" }, empty));
}

async function refresh() {
  const list = $("#session-list");
  list.setAttribute("aria-busy", "true");
  const found = await guarded(() => request("GET", `${base()}/sessions`, { query: { limit: state.shown + 1 } }));
  list.setAttribute("aria-busy", "false");
  if (!found) return;
  const rows = found.sessions.slice(0, state.shown);
  $("#sessions-more").hidden = found.sessions.length <= state.shown;
  if (!rows.length) {
    list.replaceChildren(h("li", { class: "empty" }, `${state.user} has no sessions yet.`));
    return;
  }
  list.replaceChildren(...rows.map(sessionItem));
}

function sessionItem(s) {
  const status = s.ended
    ? h("span", { class: "tag" }, `ended ${when(s.ended_at)}`)
    : h("span", { class: "tag cat-goal" }, "open");
  const end = s.ended ? null : h("button", {
    type: "button",
    class: "secondary",
    "aria-label": `End session ${s.session_id}`,
    onclick: (event) => endSession(s.session_id, event.currentTarget),
  }, "End session");
  return h("li", { class: "memory session", dataset: { session: s.session_id } },
    h("div", { class: "content" }, h("a", { href: sessionLink(s.session_id) }, s.session_id), " ", status),
    h("div", { class: "meta" },
      h("span", {}, `${s.turn_count} turn${s.turn_count === 1 ? "" : "s"}`),
      s.agent ? h("span", {}, `agent ${s.agent}`) : null,
      h("span", {}, `started ${when(s.created_at)}`),
      h("span", {}, `last active ${when(s.updated_at)}`),
      s.flagged ? h("span", { class: "forgotten" }, `${s.flagged} summaries due`) : null),
    s.line ? h("p", { class: "line" }, s.line) : null,
    end ? h("div", { class: "actions" }, end) : null);
}

async function endSession(sessionId, button) {
  button.disabled = true;
  const done = await guarded(() => request("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/end`, {
    query: { user_id: state.user },
  }));
  button.disabled = false;
  if (!done) return;
  announce(`Session ${sessionId} ended.`);
  await refresh();
}

async function recall(form) {
  const query = form.query.value.trim();
  const list = $("#recall-results");
  if (!query) { list.replaceChildren(); return; }
  const body = { query, k: RECALL_K };
  if (form.kinds.value) body.kinds = [form.kinds.value];
  list.setAttribute("aria-busy", "true");
  const found = await guarded(() => request("POST", `${base()}/recall`, { body }));
  list.setAttribute("aria-busy", "false");
  if (!found) return;
  if (!found.results.length) {
    list.replaceChildren(h("li", { class: "empty" }, `Nothing of ${state.user} matches “${query}”.`));
    return;
  }
  list.replaceChildren(...found.results.map(recallItem));
  announce(`${found.results.length} recalled for “${query}”.`);
}

function recallItem(item) {
  const memory = item.kind === "memory";
  const kind = memory ? `memory · ${item.category}` : `${item.speaker || item.role} · session ${item.session_id}`;
  return h("li", { class: "memory recalled", dataset: { kind: item.kind } },
    memory ? null : item.context ? h("p", { class: "muted context" }, item.context) : null,
    h("div", { class: "content" }, item.text),
    h("div", { class: "meta" },
      h("span", { class: `tag${memory ? ` cat-${item.category}` : ""}` }, kind),
      h("span", { class: "score" }, `score ${item.score.toFixed(3)}`),
      item.at ? h("span", {}, when(item.at)) : null));
}
