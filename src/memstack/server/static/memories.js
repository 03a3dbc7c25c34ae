// The memory manager: a user's memories grouped by category, full-text and semantic search, inline edit, manual
// add, forget / restore ("Recently forgotten"), forget everything about something (after a preview of the memories
// and of what mentions them), permanent delete with confirmation, tier usage and history; and the whole user:
// export (a JSON download) and erase (with confirmation), for data access and deletion requests.

import { $, announce, download, guarded, h, request, when } from "./api.js";

const PAGE = 500; // memories listed at once
const SEMANTIC_K = 20;

const state = {
  user: "",
  forgotten: false, // the "Recently forgotten" view
  category: "",
  search: null, // {mode: "text" | "meaning", query}
};

let categories = [];

const base = () => `/v1/users/${encodeURIComponent(state.user)}`;

export function setupMemories(info) {
  categories = info.categories;
  for (const select of document.querySelectorAll("select[data-categories]")) fillCategories(select, "general");
  const filter = $("#filter-category");
  for (const name of categories) filter.append(h("option", { value: name }, name));
  const tier = $("#tier");
  for (const [name, limit] of Object.entries(info.tiers)) {
    tier.append(h("option", { value: name }, `${name} (${limit === null ? "unlimited" : limit})`));
  }
  tier.value = info.default_tier;
  // No tiers configured (a self-hosted install): nothing is limited, so there is no tier to choose.
  const noTiers = Object.keys(info.tiers).length === 0;
  tier.hidden = noTiers;
  $("#tier-label").hidden = noTiers;

  tier.addEventListener("change", () => refreshUsage());
  filter.addEventListener("change", () => { state.category = filter.value; refresh(); });
  $("#show-active").addEventListener("click", () => showForgotten(false));
  $("#show-forgotten").addEventListener("click", () => showForgotten(true));
  $("#add-form").addEventListener("submit", addMemory);
  $("#forget-form").addEventListener("submit", forgetAbout);
  $("#export-user").addEventListener("click", exportUser);
  $("#erase-user").addEventListener("click", eraseUser);
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const query = form.query.value.trim();
    state.search = query ? { mode: form.mode.value, query } : null;
    refresh();
  });
  $("#search-clear").addEventListener("click", () => {
    $("#search-form").reset();
    state.search = null;
    refresh();
  });
}

function fillCategories(select, selected) {
  select.replaceChildren(...categories.map((name) => h("option", { value: name, selected: name === selected }, name)));
}

export async function showMemories(user) {
  state.user = user;
  $("#memories-title").textContent = `Memories of ${user}`;
  await Promise.all([refreshUsage(), refresh()]);
}

function showForgotten(forgotten) {
  state.forgotten = forgotten;
  $("#show-active").setAttribute("aria-pressed", String(!forgotten));
  $("#show-forgotten").setAttribute("aria-pressed", String(forgotten));
  refresh();
}

async function refreshUsage() {
  if (!state.user) return;
  const usage = await guarded(() => request("GET", `${base()}/usage`, { query: { tier: $("#tier").value } }));
  if (!usage) return;
  $("#usage").textContent = `${usage.display} memories`;
  // Automatic captures a full tier kept out: never silent.
  const dropped = $("#usage-dropped");
  dropped.hidden = !usage.dropped;
  dropped.textContent = usage.dropped
    ? `${usage.dropped} automatic ${usage.dropped === 1 ? "capture" : "captures"} not saved: the tier was full`
    : "";
  const meter = $("#usage-meter");
  meter.hidden = usage.limit === null;
  if (usage.limit !== null) {
    meter.max = usage.limit;
    meter.value = usage.active;
    meter.high = usage.limit * 0.9;
    meter.setAttribute("aria-valuetext", `${usage.active} of ${usage.limit} memories`);
  }
}

async function refresh() {
  if (!state.user) return;
  const list = $("#memory-list");
  list.setAttribute("aria-busy", "true");
  const semantic = state.search && state.search.mode === "meaning" && !state.forgotten;
  $("#list-title").textContent = title(semantic);
  const result = await guarded(async () => {
    if (semantic) {
      const body = { query: state.search.query, k: SEMANTIC_K };
      if (state.category) body.category = [state.category];
      return (await request("POST", `${base()}/memories/search`, { body })).results;
    }
    const query = {
      category: state.category,
      q: state.search ? state.search.query : null,
      include_deleted: state.forgotten ? "true" : null,
      limit: PAGE,
    };
    const found = (await request("GET", `${base()}/memories`, { query })).memories;
    if (!state.forgotten) return found.map((memory) => ({ memory }));
    return found
      .filter((m) => !m.is_active)
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at))
      .map((memory) => ({ memory }));
  });
  list.setAttribute("aria-busy", "false");
  if (result === undefined) return;
  render(list, result, semantic);
}

function title(semantic) {
  const what = state.forgotten ? "Recently forgotten" : "Active memories";
  if (!state.search) return what;
  return semantic
    ? `Closest in meaning to “${state.search.query}”`
    : `${what} containing “${state.search.query}”`;
}

function render(list, hits, semantic) {
  if (!hits.length) {
    const empty = state.forgotten
      ? "Nothing forgotten. Memories you forget appear here and can be restored."
      : state.search ? "No memory matches." : "No memories yet. Add one above, or chat with memory on.";
    list.replaceChildren(h("p", { class: "empty" }, empty));
    return;
  }
  if (semantic || state.forgotten) {
    // Ranked by score, or by when they were forgotten: one list, the category on each item.
    list.replaceChildren(h("ul", { class: "memories" }, hits.map((hit) => item(hit.memory, hit.score))));
    return;
  }
  const groups = new Map(categories.map((name) => [name, []]));
  for (const { memory } of hits) {
    if (!groups.has(memory.category)) groups.set(memory.category, []);
    groups.get(memory.category).push(memory);
  }
  const sections = [];
  for (const [name, members] of groups) {
    if (!members.length) continue;
    const id = `group-${name}`;
    sections.push(
      h("section", { class: "group", "aria-labelledby": id },
        h("h3", { id }, `${name} `, h("span", { class: "count" }, `(${members.length})`)),
        h("ul", { class: "memories" }, members.map((memory) => item(memory)))),
    );
  }
  list.replaceChildren(...sections);
}

function item(memory, score) {
  const li = h("li", { class: "memory", dataset: { id: memory.id } });
  fillItem(li, memory, score);
  return li;
}

function fillItem(li, memory, score) {
  const meta = [
    h("span", { class: `tag cat-${memory.category}` }, memory.category),
    h("span", {}, memory.source),
    h("span", {}, `confidence ${memory.confidence.toFixed(2)}`),
    h("span", {}, `updated ${when(memory.updated_at)}`),
  ];
  if (score !== undefined) meta.unshift(h("span", { class: "score" }, `score ${score.toFixed(3)}`));
  // A past version: what held until news superseded it (inactive, neither forgotten nor merged, with an end).
  const past = !memory.is_active && !memory.deleted_by && !memory.merged_into && memory.valid_to;
  if (past) {
    meta.push(h("span", { class: "forgotten" }, `held until ${when(memory.valid_to)}`));
  } else if (!memory.is_active) {
    meta.push(h("span", { class: "forgotten" },
      memory.merged_into ? `merged into ${memory.merged_into}`
        : memory.deleted_by === "ai" ? "forgotten by the assistant" : "forgotten by you"));
  }
  const actions = past
    ? [
      h("button", { type: "button", class: "secondary", onclick: () => history(memory) }, "History"),
      h("button", { type: "button", class: "secondary", onclick: () => forget(memory) }, "Forget"),
      h("button", { type: "button", class: "danger-link", onclick: () => destroy(memory) }, "Delete"),
    ]
    : memory.is_active
    ? [
      h("button", { type: "button", class: "secondary", onclick: () => startEdit(li, memory) }, "Edit"),
      h("button", { type: "button", class: "secondary", onclick: () => history(memory) }, "History"),
      h("button", { type: "button", class: "secondary", onclick: () => forget(memory) }, "Forget"),
      h("button", { type: "button", class: "danger-link", onclick: () => destroy(memory) }, "Delete"),
    ]
    : [
      h("button", { type: "button", onclick: () => restore(memory) }, "Restore"),
      h("button", { type: "button", class: "secondary", onclick: () => history(memory) }, "History"),
      h("button", { type: "button", class: "danger-link", onclick: () => destroy(memory) }, "Delete"),
    ];
  // Each button names its memory for screen readers: "Edit: likes green tea".
  for (const button of actions) button.setAttribute("aria-label", `${button.textContent}: ${memory.content}`);
  li.replaceChildren(
    h("p", { class: "content" }, memory.content),
    h("p", { class: "meta" }, meta),
    h("div", { class: "actions" }, actions),
  );
}

function startEdit(li, memory) {
  const contentId = `edit-${memory.id}`;
  const categoryId = `edit-cat-${memory.id}`;
  const select = h("select", { id: categoryId, name: "category" });
  fillCategories(select, memory.category);
  const form = h("form", { class: "edit" },
    h("label", { for: contentId }, "Edit memory"),
    h("textarea", { id: contentId, name: "content", rows: 2, maxlength: 2000, required: true }),
    h("div", { class: "row" },
      h("label", { for: categoryId }, "Category"), select,
      h("button", { type: "submit" }, "Save"),
      h("button", { type: "button", class: "secondary", onclick: () => stopEdit(li, memory) }, "Cancel")),
    h("p", { class: "muted hint" }, "Saving new text re-embeds the memory. Escape cancels."),
  );
  form.content.value = memory.content;
  form.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { event.preventDefault(); stopEdit(li, memory); }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const patch = {};
    const content = form.content.value.trim();
    if (content && content !== memory.content) patch.content = content;
    if (form.category.value !== memory.category) patch.category = form.category.value;
    if (!Object.keys(patch).length) { stopEdit(li, memory); return; }
    const saved = await guarded(() => request("PATCH", `${base()}/memories/${encodeURIComponent(memory.id)}`, {
      body: patch,
    }));
    if (!saved) return;
    announce("Memory saved.");
    if (patch.category && !state.forgotten && !state.search) {
      await refresh(); // it moves to another group
      focusItem(saved.id, "Edit");
    } else {
      stopEdit(li, saved);
    }
  });
  li.replaceChildren(form);
  form.content.focus();
}

function stopEdit(li, memory) {
  fillItem(li, memory);
  li.querySelector("button").focus();
}

function focusItem(id, label) {
  const li = document.querySelector(`li.memory[data-id="${CSS.escape(id)}"]`);
  const button = li && [...li.querySelectorAll("button")].find((b) => b.textContent === label);
  if (button) button.focus();
}

// A memory the user already has is not stored twice: the server answers "duplicate" with the existing memory,
// which is announced and shown; adding the same text again right after stores it anyway (force).
async function addMemory(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const body = { content: form.content.value.trim(), category: form.category.value, tier: $("#tier").value };
  if (!body.content) return;
  if (form.dataset.duplicate === body.content) body.force = true;
  const saved = await guarded(() => request("POST", `${base()}/memories`, { body }));
  if (!saved) return;
  if (saved.action === "duplicate") {
    form.dataset.duplicate = body.content;
    announce(`Already saved: "${saved.content}". Add it again to store another copy.`);
    await refresh();
    const li = document.querySelector(`li.memory[data-id="${CSS.escape(saved.id)}"]`);
    if (li) li.scrollIntoView({ block: "nearest" });
    form.content.focus();
    return;
  }
  delete form.dataset.duplicate;
  form.content.value = "";
  announce(`Memory added to ${saved.category}.`);
  await Promise.all([refreshUsage(), refresh()]);
  form.content.focus();
}

async function forget(memory) {
  const done = await guarded(() => request("DELETE", `${base()}/memories/${encodeURIComponent(memory.id)}`));
  if (!done) return;
  announce("Memory forgotten. It is in Recently forgotten, where it can be restored.");
  await Promise.all([refreshUsage(), refresh()]);
  $("#show-forgotten").focus();
}

const HIDDEN_KIND = { turn: "Conversation turn", fact: "Session fact", line: "Summary of a past conversation" };

// "Forget everything about my cat": the server previews (dry_run) what would go; the dialog lists it; only a
// confirmation forgets, with the same query.
async function forgetAbout(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const query = form.query.value.trim();
  if (!query) return;
  const url = `${base()}/memories/forget`;
  const preview = await guarded(() => request("POST", url, { body: { query, dry_run: true } }));
  if (!preview) return;
  if (!preview.memories.length) {
    announce(`No memory is about “${query}”; nothing to forget.`);
    return;
  }
  const dialog = $("#forget-dialog");
  const n = preview.memories.length;
  $("#forget-summary").textContent =
    `${n} ${n === 1 ? "memory is" : "memories are"} about “${query}”. Forgetting ${n === 1 ? "it" : "them"} also ` +
    `keeps ${preview.hidden.length} thing${preview.hidden.length === 1 ? "" : "s"} that mention${
      preview.hidden.length === 1 ? "s" : ""} ${n === 1 ? "it" : "them"} from the assistant.`;
  $("#forget-memories").replaceChildren(...preview.memories.map((m) => h("li", {}, m.content)));
  $("#forget-hidden").replaceChildren(...preview.hidden.map((item) => h("li", {},
    h("strong", {}, `${HIDDEN_KIND[item.kind] || item.kind}: `), item.text || `turn ${item.turn}`,
    h("span", { class: "muted" }, ` (session ${item.session_id}${item.kind === "turn" ? `, turn ${item.turn}` : ""})`))));
  $("#forget-hidden-title").hidden = !preview.hidden.length;
  const answer = await new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
  });
  if (answer !== "confirm") return;
  const done = await guarded(() => request("POST", url, { body: { query } }));
  if (!done) return;
  form.query.value = "";
  announce(`Forgot ${done.memories.length} ${done.memories.length === 1 ? "memory" : "memories"} about “${query}”. ` +
    "They are in Recently forgotten, where each can be restored.");
  await Promise.all([refreshUsage(), refresh()]);
}

async function restore(memory) {
  const query = { tier: $("#tier").value };
  const done = await guarded(() => request("POST", `${base()}/memories/${encodeURIComponent(memory.id)}/restore`, {
    query,
  }));
  if (!done) return;
  announce("Memory restored.");
  await Promise.all([refreshUsage(), refresh()]);
  $("#show-active").focus();
}

async function destroy(memory) {
  const dialog = $("#confirm-dialog");
  $("#confirm-text").textContent =
    `“${memory.content}” will be deleted permanently: its text and embedding are removed and it cannot be restored.`;
  const answer = await new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
  });
  if (answer !== "confirm") return;
  const done = await guarded(() => request("DELETE", `${base()}/memories/${encodeURIComponent(memory.id)}`, {
    query: { permanent: "true" },
  }));
  if (done === undefined) return;
  announce("Memory deleted permanently.");
  await Promise.all([refreshUsage(), refresh()]);
  $("#memory-list").focus?.();
}

async function history(memory) {
  const found = await guarded(() => request("GET", `${base()}/memories/${encodeURIComponent(memory.id)}/history`));
  if (!found) return;
  $("#history-title").textContent = `History of “${memory.content}”`;
  $("#history-list").replaceChildren(...found.events.map((event) => h("li", {},
    h("p", {}, h("strong", {}, event.action), ` by ${event.actor || "unknown"} · ${when(event.at)}`),
    event.note ? h("p", { class: "muted" }, event.note) : null,
    change(event.before, event.after),
  )));
  $("#history-dialog").showModal();
}

function change(before, after) {
  const rows = [];
  for (const field of ["content", "category", "confidence", "is_active"]) {
    const was = before ? before[field] : undefined;
    const now = after ? after[field] : undefined;
    if (was === now || (was === undefined && now === undefined)) continue;
    rows.push(h("li", {}, `${field}: `,
      was === undefined ? "" : h("del", {}, String(was)), was !== undefined && now !== undefined ? " → " : "",
      now === undefined ? "" : h("ins", {}, String(now))));
  }
  return rows.length ? h("ul", { class: "diff" }, rows) : null;
}

async function exportUser() {
  const name = `memstack-export-${state.user.replace(/[^A-Za-z0-9._-]/g, "_")}.json`;
  const done = await guarded(() => download(`${base()}/export`, name).then(() => true));
  if (done) announce(`Export of ${state.user} downloaded.`);
}

async function eraseUser() {
  const dialog = $("#erase-dialog");
  $("#erase-text").textContent =
    `Everything held about ${state.user} will be erased: memories and their history, sessions, archived ` +
    "conversations, stored contexts and pending work. This cannot be undone; export the user first if the data " +
    "was asked for.";
  const answer = await new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
  });
  if (answer !== "confirm") return;
  const report = await guarded(() => request("DELETE", base()));
  if (!report) return;
  announce(`Erased ${state.user}: ${report.total} records removed.`);
  await Promise.all([refreshUsage(), refresh()]);
}
