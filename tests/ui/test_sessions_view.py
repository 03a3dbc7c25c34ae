"""The Sessions view in Chromium: a support agent sees a user's sessions (most recently active first, open or ended)
and ends one, and recalls what the user said before, memories and past conversations together; in keys mode the
view shows only the key's tenant; and it fits a phone."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import PHONE, Console, Served, assert_fits, open_view, user_id

TRIP = [
    {"role": "user", "content": "I'm allergic to peanuts.", "at": "2024-05-01T09:00:00Z"},
    {"role": "assistant", "content": "Noted: no peanuts."},
    {"role": "user", "content": "We are flying to Kyoto in October with my sister Ines.", "at": "2024-05-01T09:02:00Z"},
    {"role": "assistant", "content": "Kyoto in October is lovely."},
]


def _import(served: Served, user: str, session_id: str, *, end: bool, key: str | None = None) -> None:
    with served.api(key) as api:
        done = api.post(
            f"/v1/users/{user}/ingest", json={"session_id": session_id, "messages": TRIP, "end": end}, timeout=120
        )
        assert done.status_code == 200, done.text


def test_sessions_end_and_recall(page: Page, local_server: Served, request: pytest.FixtureRequest) -> None:
    user = user_id(request)
    _import(local_server, user, "trip-may", end=True)
    _import(local_server, user, "trip-june", end=False)
    open_view(page, local_server.url, "sessions", user)
    expect(page.get_by_role("heading", name=f"Sessions of {user}")).to_be_visible()

    rows = page.locator("#session-list li.session")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("trip-june")  # most recently active first
    expect(rows.nth(0)).to_contain_text("open")
    expect(rows.nth(1)).to_contain_text("ended")
    expect(rows.nth(1).get_by_role("button", name="End session trip-may")).to_have_count(0)

    rows.nth(0).get_by_role("button", name="End session trip-june").click()
    expect(page.locator("#status")).to_contain_text("Session trip-june ended.")
    expect(page.locator("li.session[data-session='trip-june']")).to_contain_text("ended")
    expect(page.locator("li.session[data-session='trip-june'] .line")).not_to_be_empty()
    expect(page.get_by_role("button", name="End session trip-june")).to_have_count(0)

    page.get_by_label("What the user said before").fill("Who is coming to Kyoto?")
    page.get_by_role("button", name="Recall", exact=True).click()
    results = page.locator("#recall-results li.recalled")
    expect(results.first).to_be_visible()
    expect(page.locator("#recall-results li[data-kind='turn']").first).to_contain_text("session trip-")
    expect(page.locator("#recall-results")).to_contain_text("Ines")
    expect(page.locator("#recall-results li[data-kind='memory']").first).to_be_visible()  # both kinds together

    page.locator("#recall-kinds").select_option("memory")
    page.get_by_role("button", name="Recall", exact=True).click()
    expect(page.locator("#recall-results li[data-kind='turn']")).to_have_count(0)
    expect(page.locator("#recall-results li[data-kind='memory']").first).to_be_visible()

    page.set_viewport_size(PHONE)
    assert_fits(page, "the Sessions view at phone width")


def test_keys_mode_shows_only_the_keys_tenant(
    page: Page, keyed_server: Served, console: Console, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    console.expected.append("status of 401")  # the first load, before a key is given
    _import(keyed_server, user, "acme-only", end=False)  # tenant acme (keyed_server.key)
    page.goto(f"{keyed_server.url}/#/sessions?user={user}")
    dialog = page.get_by_role("dialog", name="API key")

    def use_key(key: str | None) -> None:
        if not dialog.is_visible():
            page.get_by_role("button", name="API key").click()
        dialog.get_by_role("textbox", name="API key").fill(key or "")
        dialog.get_by_role("button", name="Use key").click()
        expect(dialog).to_be_hidden()

    use_key(keyed_server.other_key)  # another tenant: the same user id is another user
    expect(page.locator("#session-list")).to_contain_text(f"{user} has no sessions yet.")
    use_key(keyed_server.key)
    expect(page.locator("li.session[data-session='acme-only']")).to_contain_text("open")


def test_a_session_opens_on_what_it_holds(page: Page, local_server: Served, request: pytest.FixtureRequest) -> None:
    """A session's id opens it: facts, turn log, the latest messages verbatim, and its stored responses, each a link
    to the context inspector."""
    user = user_id(request)
    _import(local_server, user, "trip-june", end=False)
    with local_server.api() as api:
        reply = api.post("/v1/chat", json={"user_id": user, "session_id": "trip-june", "message": "Any tips?"})
        assert reply.status_code == 200, reply.text
    open_view(page, local_server.url, "sessions", user)
    page.locator("li.session[data-session='trip-june']").get_by_role("link", name="trip-june").click()
    expect(page.get_by_role("heading", name="Session trip-june")).to_be_focused()
    detail = page.locator("#session-detail")
    expect(detail.locator(".summary")).to_contain_text("Turns")
    expect(page.locator("#session-window")).to_contain_text("We are flying to Kyoto in October with my sister Ines.")
    expect(page.locator("#session-window li.msg.user").first).to_contain_text("User · turn")
    expect(page.locator("#session-turns li").first).to_be_visible()
    responses = page.locator("#session-contexts").get_by_role("link")
    expect(responses).to_have_count(1)  # the chat turn; the import stored no response
    responses.first.click()
    expect(page.get_by_role("heading", name="Context ctx_", exact=False)).to_be_visible()

    page.go_back()
    expect(page.get_by_role("heading", name="Session trip-june")).to_be_visible()
    page.set_viewport_size(PHONE)
    assert_fits(page, "an opened session at phone width")


def test_the_users_view_lists_the_tenants_users(
    page: Page, local_server: Served, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    with local_server.api() as api:
        for name in (f"{user}-a", f"{user}-b"):
            api.post(f"/v1/users/{name}/memories", json={"content": f"{name} keeps bees", "category": "fact"})
    page.goto(f"{local_server.url}/#/users")
    page.wait_for_selector("body[data-ready='true']")
    rows = page.locator("#user-list li.user")
    mine = page.locator(f"#user-list li.user[data-user^='{user}-']")
    expect(mine).to_have_count(2)
    expect(mine.first).to_contain_text("1 memory")
    expect(rows.first).to_be_visible()
    mine.nth(1).get_by_role("link", name=f"{user}-b").click()
    expect(page.get_by_role("heading", name=f"Memories of {user}-b")).to_be_visible()
    expect(page.get_by_text(f"{user}-b keeps bees")).to_be_visible()


def test_without_a_chosen_user_the_page_offers_the_users(
    page: Page, local_server: Served, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    with local_server.api() as api:
        api.post(f"/v1/users/{user}/memories", json={"content": "Keeps bees", "category": "fact"})
    page.goto(f"{local_server.url}/#/memories")  # a fresh tab: no user chosen yet
    page.wait_for_selector("body[data-ready='true']")
    expect(page.get_by_role("alert")).to_contain_text("Choose a user first")
    expect(page.locator(f"#user-list li.user[data-user='{user}']")).to_be_visible()
