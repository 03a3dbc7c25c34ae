// The context inspector: what the model saw for one response. The layers in stack order with the tokens each took,
// every fragment kept, trimmed or quarantined with its text and flags, and the long-term memories used for the reply.

import { $, guarded, h, request, when } from "./api.js";

const state = { user: "" };

export function setupInspector() {
  $("#inspect-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const id = event.currentTarget.context.value.trim();
    if (id) location.hash = `#/inspect/${encodeURIComponent(id)}?user=${encodeURIComponent(state.user)}`;
  });
}

export async function showInspector(user, contextId) {
  state.user = user;
  $("#context-id").value = contextId || "";
  const detail = $("#inspect-detail");
  detail.replaceChildren();
  const jobs = [recent()];
  if (contextId) jobs.push(inspect(contextId, detail));
  await Promise.all(jobs);
}

async function recent() {
  const list = $("#recent-contexts");
  if (!state.user) { list.replaceChildren(); return; }
  const found = await guarded(() => request("GET", `/ui/api/users/${encodeURIComponent(state.user)}/contexts`));
  if (!found) return;
  if (!found.contexts.length) {
    list.replaceChildren(h("li", { class: "empty" }, `No stored responses for ${state.user} yet: chat first.`));
    return;
  }
  list.replaceChildren(...found.contexts.map((c) => h("li", {},
    h("a", { href: `#/inspect/${encodeURIComponent(c.context_id)}?user=${encodeURIComponent(state.user)}` },
      when(c.created_at)),
    ` · ${c.agent} · ${c.tokens} / ${c.budget_tokens} tokens · ${c.memories} memories`,
    c.trimmed ? ` · ${c.trimmed} trimmed` : "",
    c.quarantined ? ` · ${c.quarantined} quarantined` : "",
  )));
}

async function inspect(contextId, detail) {
  const data = await guarded(() => request("GET", `/ui/api/contexts/${encodeURIComponent(contextId)}`, {
    query: { user_id: state.user },
  }));
  if (!data) return;
  const m = data.manifest;
  const heading = h("h2", { id: "context-heading", tabindex: "-1" }, `Context ${m.context_id}`);
  detail.replaceChildren(
    heading,
    h("dl", { class: "summary" },
      pair("Agent", m.agent), pair("Model", m.model || "—"), pair("Tokens", `${m.tokens} / ${m.budget_tokens}`),
      pair("Encoding", m.encoding), pair("Memory", m.memory_enabled ? "on" : "off"),
      pair("Temporary", m.temporary ? "yes" : "no"), pair("When", when(m.created_at)),
      pair("Fragments", `${data.counts.kept} kept · ${data.counts.trimmed} trimmed · `
        + `${data.counts.quarantined} quarantined`),
      pair("Framing", `${data.framing_tokens} tokens of section titles and delimiters`)),
    h("div", { class: "inspect-grid" }, layers(data.layers, m.tokens), memoriesUsed(data.memories_used)),
  );
  heading.focus();
}

function pair(name, value) {
  return h("div", {}, h("dt", {}, name), h("dd", {}, value));
}

function memoriesUsed(all) {
  const used = all.filter((u) => u.status === "kept");
  const left = all.filter((u) => u.status !== "kept");
  const section = h("section", { class: "card", "aria-labelledby": "used-title" },
    h("h3", { id: "used-title" }, "Memories used for this reply"),
    used.length ? memoryList(used, "used-list")
      : h("p", { class: "empty" }, "No long-term memory was placed in this context."));
  if (left.length) {
    section.append(h("h4", { id: "left-title" }, "Retrieved but not shown to the model"),
      memoryList(left, "left-list"));
  }
  return section;
}

function memoryList(entries, id) {
  const items = entries.map((u) => {
    const memory = u.memory;
    const text = memory ? memory.content : u.gone ? "(deleted since)" : u.id;
    const notes = [u.status];
    if (memory && !memory.is_active) notes.push("forgotten since");
    if (u.flags.length) notes.push(...u.flags);
    return h("li", { class: `used ${u.status}` },
      h("span", { class: "content" }, text), " ",
      memory ? h("span", { class: `tag cat-${memory.category}` }, memory.category) : null, " ",
      h("span", { class: `status ${u.status}` }, notes.join(", ")), " ",
      h("span", { class: "nowrap muted" }, `· ${u.tokens} tokens`));
  });
  return h("ul", { id, class: "used-list" }, items);
}

function layers(all, total) {
  return h("section", { "aria-labelledby": "layers-title" },
    h("h3", { id: "layers-title" }, "Layers, in order of authority"),
    h("ol", { class: "layers" }, all.map((layer) => layerItem(layer, total))));
}

// The text the model saw. Quarantined text arrives as blocks (its words withheld by the server); session metadata is
// never stored, and a context stored before texts were kept has none.
function fragmentText(f, layerKey) {
  if (!f.text) {
    return h("span", { class: "muted" }, layerKey === "session" ? "(session metadata is never stored)" : "(text not stored)");
  }
  const label = f.status === "quarantined" ? "Quarantined text, withheld" : `Text of ${f.source}`;
  return h("div", { class: "fragment-text", tabindex: "0", "aria-label": label }, f.text);
}

function layerItem(layer, total) {
  const share = total ? Math.round((100 * layer.tokens) / total) : 0;
  const counts = [];
  if (layer.kept) counts.push(`${layer.kept} kept`);
  if (layer.trimmed) counts.push(`${layer.trimmed} trimmed`);
  if (layer.quarantined) counts.push(`${layer.quarantined} quarantined`);
  const summary = h("summary", {},
    h("span", { class: "layer-name" }, `${layer.position}. ${layer.key}`),
    h("span", { class: "layer-title muted" }, layer.title),
    h("span", { class: "layer-tokens" }, `${layer.tokens} tokens`),
    h("span", { class: "bar", "aria-hidden": "true" }, h("span", { class: "fill", style: null, dataset: { share } })),
    h("span", { class: "layer-counts muted" }, counts.length ? counts.join(" · ") : "empty"));
  const body = layer.fragments.length
    ? h("table", { class: "fragments" },
      h("caption", { class: "visually-hidden" }, `Fragments of layer ${layer.key}`),
      h("thead", {}, h("tr", {}, ["Source", "Text", "Tokens", "Status", "Flags", "Reason"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, layer.fragments.map((f) => h("tr", { class: f.status },
        h("td", { class: "source" }, f.source), h("td", { class: "text" }, fragmentText(f, layer.key)), h("td", {}, String(f.tokens)),
        h("td", {}, h("span", { class: `status ${f.status}` }, f.status)),
        h("td", {}, f.flags.join(", ")), h("td", {}, f.reason)))))
    : h("p", { class: "empty" }, "Nothing in this layer for this response.");
  const details = h("details", { class: `layer ${layer.tokens ? "" : "is-empty"}`, open: layer.trimmed + layer.quarantined > 0 },
    summary, body);
  const fill = details.querySelector(".fill");
  fill.style.width = `${share}%`; // set through CSSOM: the page's CSP allows no inline style attributes
  return h("li", { dataset: { layer: layer.key } }, details);
}
