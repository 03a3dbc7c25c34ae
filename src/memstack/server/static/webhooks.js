// The tenant's webhook endpoints (GET/POST/PATCH/DELETE /v1/webhooks) and, for the one chosen, its recent
// deliveries (GET /v1/webhooks/{id}/deliveries): status, attempts, last error, and a Replay button
// (POST …/deliveries/{id}/replay). A new endpoint's signing secret is shown once, right after it is added.
// Works before any user is chosen: endpoints belong to the tenant.

import { $, announce, guarded, h, request, when } from "./api.js";

const state = { open: null };

export function setupWebhooks() {
  $("#webhook-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const url = $("#webhook-url").value.trim();
    const made = await guarded(() => request("POST", "/v1/webhooks", { body: { url } }));
    if (!made) return;
    $("#webhook-url").value = "";
    const secret = $("#webhook-secret");
    secret.hidden = false;
    secret.replaceChildren(
      h("p", {}, `Added ${made.id}. Its signing secret is shown only now; store it with your receiver:`),
      h("code", { class: "secret" }, made.secret));
    announce(`Webhook ${made.id} added.`);
    await showWebhooks();
  });
}

export async function showWebhooks() {
  const list = $("#webhook-list");
  const found = await guarded(() => request("GET", "/v1/webhooks"));
  if (!found) return;
  if (!found.webhooks.length) {
    list.replaceChildren(h("li", { class: "empty" }, "No webhooks yet: add an endpoint's URL above."));
    $("#delivery-panel").hidden = true;
    return;
  }
  list.replaceChildren(...found.webhooks.map(endpointItem));
  const open = found.webhooks.find((w) => w.id === state.open) || found.webhooks[0];
  await showDeliveries(open);
}

function endpointItem(w) {
  return h("li", { class: "memory webhook", dataset: { webhook: w.id } },
    h("div", { class: "content" }, w.url),
    h("div", { class: "meta" },
      h("span", {}, w.enabled ? "enabled" : "disabled"),
      h("span", {}, w.events.length === 8 ? "all events" : w.events.join(", ")),
      h("button", { type: "button", class: "secondary", "aria-label": `Deliveries of ${w.url}`,
        onclick: () => showDeliveries(w) }, "Deliveries"),
      h("button", { type: "button", class: "danger", "aria-label": `Delete webhook ${w.url}`,
        onclick: () => remove(w) }, "Delete")));
}

async function remove(w) {
  const path = `/v1/webhooks/${encodeURIComponent(w.id)}`;
  if (!(await guarded(async () => { await request("DELETE", path); return true; }))) return; // 204: no body
  announce(`Webhook ${w.url} deleted.`);
  if (state.open === w.id) state.open = null;
  await showWebhooks();
}

async function showDeliveries(w) {
  state.open = w.id;
  const path = `/v1/webhooks/${encodeURIComponent(w.id)}/deliveries`;
  const found = await guarded(() => request("GET", path, { query: { limit: 50 } }));
  if (!found) return;
  $("#delivery-panel").hidden = false;
  $("#delivery-title").textContent = `Recent deliveries to ${w.url}`;
  const rows = $("#delivery-list");
  if (!found.deliveries.length) {
    rows.replaceChildren(h("li", { class: "empty" }, "No deliveries yet."));
    return;
  }
  rows.replaceChildren(...found.deliveries.map((d) => deliveryItem(w, d)));
}

function deliveryItem(w, d) {
  const attempts = `${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`;
  return h("li", { class: `memory delivery ${d.status}`, dataset: { delivery: d.id } },
    h("div", { class: "content" }, `${d.type} · ${d.user_id}`),
    h("div", { class: "meta" },
      h("span", { class: "status" }, d.status),
      h("span", {}, attempts),
      h("span", {}, when(d.occurred_at)),
      d.last_error ? h("span", { class: "error" }, d.last_error) : null,
      h("button", { type: "button", class: "secondary", "aria-label": `Replay delivery ${d.id}`,
        onclick: () => replay(w, d) }, "Replay")));
}

async function replay(w, d) {
  const path = `/v1/webhooks/${encodeURIComponent(w.id)}/deliveries/${encodeURIComponent(d.id)}/replay`;
  const again = await guarded(() => request("POST", path));
  if (!again) return;
  announce(`Replaying ${d.type}.`);
  await showDeliveries(w);
}
