"""The UI against a server that requires API keys: it asks for one, keeps it in the tab only (sessionStorage), sends it
as a bearer token, and asks again when the server refuses it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import LAPTOP, Console, Served, user_id


def test_key_entered_in_the_ui(
    page: Page, browser: Browser, keyed_server: Served, console: Console, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    with keyed_server.api() as api:
        api.post(f"/v1/users/{user}/memories", json={"content": "Keeps bees on the roof", "category": "fact"})
    console.expected.append("status of 401")

    page.goto(f"{keyed_server.url}/#/memories?user={user}")
    dialog = page.get_by_role("dialog", name="API key")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("textbox", name="API key")).to_be_focused()

    # A wrong key: the server says 401 and the dialog comes back with its message.
    dialog.get_by_role("textbox", name="API key").fill("msk_wrong")
    page.keyboard.press("Enter")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("unknown or revoked API key")

    dialog.get_by_role("textbox", name="API key").fill(keyed_server.key or "")
    dialog.get_by_role("button", name="Use key").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_text("Keeps bees on the roof", exact=True)).to_be_visible()
    expect(page.locator("#auth-mode")).to_have_text("key set")
    assert page.evaluate("() => sessionStorage.getItem('memstack.apiKey')") == keyed_server.key
    assert page.evaluate("() => localStorage.getItem('memstack.apiKey')") is None

    # Another tenant's key sees nothing of this user (ids are namespaced per tenant).
    page.get_by_role("button", name="API key").click()
    dialog.get_by_role("textbox", name="API key").fill(keyed_server.other_key or "")
    dialog.get_by_role("button", name="Use key").click()
    expect(page.locator(".empty")).to_have_text("No memories yet. Add one above, or chat with memory on.")

    # A new tab (a new browsing context) starts without the key.
    other = browser.new_context(viewport=LAPTOP)  # type: ignore[arg-type]
    try:
        fresh = other.new_page()
        fresh.goto(f"{keyed_server.url}/#/memories?user={user}")
        expect(fresh.get_by_role("dialog", name="API key")).to_be_visible()
        assert fresh.evaluate("() => sessionStorage.getItem('memstack.apiKey')") is None
    finally:
        other.close()

    # Forget key: removed from the tab.
    page.get_by_role("button", name="API key").click()
    dialog.get_by_role("button", name="Forget key").click()
    assert page.evaluate("() => sessionStorage.getItem('memstack.apiKey')") is None
    expect(page.locator("#auth-mode")).to_have_text("no key")
