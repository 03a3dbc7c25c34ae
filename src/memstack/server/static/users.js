// The tenant's users (GET /v1/users): each with active memories, sessions and last activity, a page at a time
// (the server's cursor, `next`); a user's id opens their memories. Works before any user is chosen.

import { $, guarded, h, request, when } from "./api.js";

const PAGE = 50;
const state = { next: null };

export function setupUsers() {
  $("#users-more").addEventListener("click", () => load(state.next));
}

export async function showUsers() {
  $("#user-list").replaceChildren();
  await load(null);
}

async function load(after) {
  const list = $("#user-list");
  list.setAttribute("aria-busy", "true");
  const found = await guarded(() => request("GET", "/v1/users", { query: { limit: PAGE, after } }));
  list.setAttribute("aria-busy", "false");
  if (!found) return;
  state.next = found.next;
  $("#users-more").hidden = !found.next;
  if (!after && !found.users.length) {
    list.replaceChildren(h("li", { class: "empty" }, "No users yet: add a memory or chat as someone first."));
    return;
  }
  list.append(...found.users.map(userItem));
}

function userItem(u) {
  const open = `#/memories?user=${encodeURIComponent(u.user_id)}`;
  return h("li", { class: "memory user", dataset: { user: u.user_id } },
    h("div", { class: "content" }, h("a", { href: open }, u.user_id)),
    h("div", { class: "meta" },
      h("span", {}, `${u.memories} memor${u.memories === 1 ? "y" : "ies"}`),
      h("a", { href: `#/sessions?user=${encodeURIComponent(u.user_id)}` },
        `${u.sessions} session${u.sessions === 1 ? "" : "s"}`),
      u.last_active ? h("span", {}, `last active ${when(u.last_active)}`) : null));
}
