"""The memory manager in Chromium: add, search (words and meaning), edit (re-embedded), forget and restore, delete
for good with confirmation, history, tier usage, categories, keyboard use and a phone-width layout."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import PHONE, Console, Served, assert_fits, open_view, serve, stop, user_id


def memory(page: Page, content: str) -> Locator:
    return page.locator("li.memory", has=page.get_by_text(content, exact=True))


def add(page: Page, content: str, category: str) -> None:
    page.get_by_label("What to remember about the user").fill(content)
    page.locator("#add-category").select_option(category)
    page.get_by_role("button", name="Add memory").click()
    expect(memory(page, content)).to_be_visible()


def search(page: Page, query: str, mode: str) -> None:
    page.get_by_label("Search memories").fill(query)
    page.get_by_label(mode).check()
    page.get_by_role("button", name="Search", exact=True).click()


def test_add_search_edit_forget_restore_delete(
    page: Page, local_server: Served, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    open_view(page, local_server.url, "memories", user)
    expect(page.get_by_role("heading", name=f"Memories of {user}")).to_be_visible()
    expect(page.locator("#usage")).to_have_text("0 / 50 memories")

    # Add, grouped by category.
    add(page, "Prefers green tea over coffee", "preference")
    add(page, "Has piano lessons on Tuesdays at 6pm", "schedule")
    add(page, "Lives in Lyon", "fact")
    expect(page.locator("#usage")).to_have_text("3 / 50 memories")
    preference = page.get_by_role("region", name=re.compile(r"^preference"))
    expect(preference.locator("li.memory")).to_have_count(1)
    expect(preference).to_contain_text("Prefers green tea over coffee")
    expect(page.get_by_role("region", name=re.compile(r"^schedule"))).to_contain_text("piano")

    # Full-text search keeps memories containing the words.
    search(page, "piano", "Words (full text)")
    expect(page.locator("#list-title")).to_have_text("Active memories containing “piano”")
    expect(page.locator("li.memory")).to_have_count(1)
    expect(memory(page, "Has piano lessons on Tuesdays at 6pm")).to_be_visible()

    # Semantic search ranks by meaning: no word in common with the tea memory.
    search(page, "what does the user like to drink", "Meaning (semantic)")
    expect(page.locator("#list-title")).to_have_text(re.compile("^Closest in meaning"))
    expect(page.locator("li.memory").first).to_contain_text("Prefers green tea over coffee")
    expect(page.locator("li.memory").first.locator(".score")).to_have_text(re.compile(r"^score 0\.\d{3}$"))
    page.get_by_role("button", name="Clear").click()
    expect(page.locator("li.memory")).to_have_count(3)

    # Inline edit: the new text is re-embedded, so searching for it exactly scores 1.000.
    page.get_by_role("button", name="Edit: Prefers green tea over coffee").click()
    editor = page.get_by_label("Edit memory")
    expect(editor).to_be_focused()
    editor.fill("Prefers jasmine tea in the afternoon")
    page.get_by_role("button", name="Save").click()
    expect(memory(page, "Prefers jasmine tea in the afternoon")).to_be_visible()
    expect(page.get_by_role("button", name="Edit: Prefers jasmine tea in the afternoon")).to_be_focused()
    search(page, "Prefers jasmine tea in the afternoon", "Meaning (semantic)")
    expect(page.locator("li.memory").first.locator(".score")).to_have_text("score 1.000")
    page.get_by_role("button", name="Clear").click()
    with local_server.api() as api:
        stored = api.get(f"/v1/users/{user}/memories", params={"q": "jasmine"}).json()["memories"]
    assert [m["content"] for m in stored] == ["Prefers jasmine tea in the afternoon"]
    tea_id = stored[0]["id"]

    # Forget: it leaves the active list and appears in "Recently forgotten", from where it is restored.
    page.get_by_role("button", name="Forget: Prefers jasmine tea in the afternoon").click()
    expect(memory(page, "Prefers jasmine tea in the afternoon")).to_have_count(0)
    expect(page.locator("#usage")).to_have_text("2 / 50 memories")
    page.get_by_role("button", name="Recently forgotten").click()
    expect(page.locator("#list-title")).to_have_text("Recently forgotten")
    forgotten = memory(page, "Prefers jasmine tea in the afternoon")
    expect(forgotten).to_contain_text("forgotten by you")
    expect(page.locator("li.memory")).to_have_count(1)
    page.get_by_role("button", name="Restore: Prefers jasmine tea in the afternoon").click()
    expect(page.locator("li.memory")).to_have_count(0)
    page.get_by_role("button", name="Active").click()
    expect(memory(page, "Prefers jasmine tea in the afternoon")).to_be_visible()
    expect(page.locator("#usage")).to_have_text("3 / 50 memories")

    # History: every change, oldest first, with what changed.
    page.get_by_role("button", name="History: Prefers jasmine tea in the afternoon").click()
    dialog = page.get_by_role("dialog", name=re.compile("^History of"))
    expect(dialog).to_be_visible()
    expect(dialog.locator("li strong")).to_have_text(["create", "update", "forget", "restore"])
    expect(dialog).to_contain_text("Prefers green tea over coffee")  # the text before the edit
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    # Permanent delete asks first; cancelling keeps the memory.
    page.get_by_role("button", name="Delete: Prefers jasmine tea in the afternoon").click()
    confirm = page.get_by_role("dialog", name="Delete for good?")
    expect(confirm).to_contain_text("cannot be restored")
    confirm.get_by_role("button", name="Cancel").click()
    expect(memory(page, "Prefers jasmine tea in the afternoon")).to_be_visible()
    page.get_by_role("button", name="Delete: Prefers jasmine tea in the afternoon").click()
    confirm.get_by_role("button", name="Delete permanently").click()
    expect(memory(page, "Prefers jasmine tea in the afternoon")).to_have_count(0)
    expect(page.locator("#usage")).to_have_text("2 / 50 memories")
    page.get_by_role("button", name="Recently forgotten").click()
    expect(page.locator("li.memory")).to_have_count(0)
    with local_server.api() as api:
        assert api.get(f"/v1/users/{user}/memories/{tea_id}").status_code == 404


def test_forget_everything_about_something_after_a_preview(
    page: Page, local_server: Served, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    said = [
        {"role": "user", "content": "My cat Miso hates the vacuum"},
        {"role": "assistant", "content": "Poor Miso!"},
        {"role": "user", "content": "I am learning Portuguese"},
        {"role": "assistant", "content": "Boa sorte!"},
    ]
    with local_server.api() as api:
        body = {"session_id": "pets", "messages": said, "capture": False}
        assert api.post(f"/v1/users/{user}/ingest", json=body).status_code == 200
        for text in ("User has a cat named Miso", "Miso is afraid of the vacuum", "User is learning Portuguese"):
            assert api.post(f"/v1/users/{user}/memories", json={"content": text}).status_code == 201
    open_view(page, local_server.url, "memories", user)
    expect(page.locator("li.memory")).to_have_count(3)

    # The preview lists the memories and what mentions them; cancelling changes nothing.
    page.get_by_label("What the user wants forgotten").fill("everything about my cat")
    page.get_by_role("button", name="Preview").click()
    dialog = page.get_by_role("dialog", name="Forget these?")
    expect(dialog).to_contain_text("2 memories are about “everything about my cat”")
    expect(dialog.locator("#forget-memories li")).to_have_text(
        ["Miso is afraid of the vacuum", "User has a cat named Miso"]
    )
    expect(dialog.locator("#forget-hidden")).to_contain_text("Conversation turn: My cat Miso hates the vacuum")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("li.memory")).to_have_count(3)

    # Confirmed: both go to Recently forgotten; the other memory stays.
    page.get_by_role("button", name="Preview").click()
    dialog.get_by_role("button", name="Forget these").click()
    expect(page.locator("li.memory")).to_have_count(1)
    expect(memory(page, "User is learning Portuguese")).to_be_visible()
    expect(page.locator("#usage")).to_have_text("1 / 50 memories")
    page.get_by_role("button", name="Recently forgotten").click()
    expect(page.locator("li.memory")).to_have_count(2)
    with local_server.api() as api:
        found = api.post(f"/v1/users/{user}/recall", json={"query": "Miso vacuum", "k": 10}).json()["results"]
    assert not any("Miso" in item["text"] for item in found)


def test_category_filter_and_tier_limit(
    page: Page, local_server: Served, console: Console, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    console.expected.append("status of 409")  # the browser logs the refused add
    with local_server.api() as api:
        for content, category in [
            ("Runs marathons", "fact"),
            ("Works as a nurse", "fact"),
            ("Wants to learn Go", "goal"),
        ]:
            assert api.post(f"/v1/users/{user}/memories", json={"content": content, "category": category}).is_success
    open_view(page, local_server.url, "memories", user)
    expect(page.locator("section.group h3")).to_have_text(["fact (2)", "goal (1)"])
    page.locator("#filter-category").select_option("goal")
    expect(page.locator("li.memory")).to_have_count(1)
    expect(memory(page, "Wants to learn Go")).to_be_visible()
    page.locator("#filter-category").select_option("")
    expect(page.locator("li.memory")).to_have_count(3)

    # A full tier: the add fails with the server's message, shown as an alert; nothing is added.
    page.get_by_label("Tier", exact=True).select_option("tiny")
    expect(page.locator("#usage")).to_have_text("3 / 2 memories")
    page.get_by_label("What to remember about the user").fill("Drinks oat milk")
    page.get_by_role("button", name="Add memory").click()
    alert = page.get_by_role("alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("LimitReached")
    expect(memory(page, "Drinks oat milk")).to_have_count(0)


def test_without_tiers_there_is_no_limit_to_choose(
    page: Page, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    """A self-hosted install (no tiers configured) limits nothing: no tier selector, usage "N / unlimited"."""
    served = serve(tmp_path_factory.mktemp("ui-no-tiers"), "--auth", "local", tiers=None)
    try:
        user = user_id(request)
        open_view(page, served.url, "memories", user)
        expect(page.locator("#usage")).to_have_text("0 / unlimited memories")
        expect(page.locator("#tier")).to_be_hidden()
        expect(page.locator("#usage-meter")).to_be_hidden()
        expect(page.locator("#usage-dropped")).to_be_hidden()
        add(page, "Keeps bees on the roof", "fact")
        expect(page.locator("#usage")).to_have_text("1 / unlimited memories")
    finally:
        stop(served)


def test_a_memory_already_held_is_not_added_twice(
    page: Page, local_server: Served, request: pytest.FixtureRequest
) -> None:
    """The same text again (case and a full stop aside) is announced as already saved and nothing is added; adding
    it once more right after stores another copy (force)."""
    user = user_id(request)
    open_view(page, local_server.url, "memories", user)
    add(page, "Prefers green tea over coffee", "preference")
    page.get_by_label("What to remember about the user").fill("prefers green tea over coffee.")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("#status")).to_contain_text('Already saved: "Prefers green tea over coffee"')
    expect(page.locator("li.memory")).to_have_count(1)
    expect(page.locator("#usage")).to_contain_text("1 /")
    page.get_by_role("button", name="Add memory").click()
    expect(page.locator("li.memory")).to_have_count(2)
    expect(page.locator("#usage")).to_contain_text("2 /")


def test_keyboard_only(page: Page, local_server: Served, request: pytest.FixtureRequest) -> None:
    """Add and edit a memory without the mouse; Escape cancels an edit and gives focus back to its button."""
    user = user_id(request)
    open_view(page, local_server.url, "memories", user)
    page.get_by_label("What to remember about the user").focus()
    page.keyboard.type("Speaks Portuguese at home")
    page.keyboard.press("Tab")  # the category select
    expect(page.locator("#add-category")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Add memory")).to_be_focused()
    page.keyboard.press("Enter")
    expect(memory(page, "Speaks Portuguese at home")).to_be_visible()
    expect(page.get_by_label("What to remember about the user")).to_be_focused()

    edit = page.get_by_role("button", name="Edit: Speaks Portuguese at home")
    edit.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Edit memory")).to_be_focused()
    page.keyboard.type(" and Spanish at work")
    page.keyboard.press("Escape")
    expect(memory(page, "Speaks Portuguese at home")).to_be_visible()
    expect(edit).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("End")
    page.keyboard.type(" and Spanish at work")
    page.keyboard.press("Tab")  # category
    page.keyboard.press("Tab")  # Save
    page.keyboard.press("Enter")
    expect(memory(page, "Speaks Portuguese at home and Spanish at work")).to_be_visible()


def test_every_control_has_a_name_and_the_phone_layout_fits(
    page: Page, local_server: Served, request: pytest.FixtureRequest
) -> None:
    user = user_id(request)
    with local_server.api() as api:
        api.post(f"/v1/users/{user}/memories", json={"content": "Collects vintage film cameras", "category": "fact"})
    for view in ("memories", "chat", "inspect"):
        open_view(page, local_server.url, view, user)
        unnamed = page.evaluate(
            """() => [...document.querySelectorAll('input, select, textarea, button')]
                 .filter((el) => el.offsetParent !== null)
                 .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
                                 && !(el.tagName === 'BUTTON' && el.textContent.trim()))
                 .map((el) => el.outerHTML)"""
        )
        assert unnamed == [], f"controls without a label on {view}: {unnamed}"
    page.set_viewport_size(PHONE)
    for view in ("memories", "chat", "inspect"):
        open_view(page, local_server.url, view, user)
        assert_fits(page, view)
    expect(memory(page, "Collects vintage film cameras")).to_be_hidden()  # on the inspector now
    page.get_by_role("link", name="Memories").click()
    expect(memory(page, "Collects vintage film cameras")).to_be_visible()


def test_export_and_erase_the_whole_user(page: Page, local_server: Served, request: pytest.FixtureRequest) -> None:
    user = user_id(request)
    open_view(page, local_server.url, "memories", user)
    add(page, "Prefers green tea over coffee", "preference")
    add(page, "Lives in Lyon", "fact")
    with local_server.api() as api:
        other = api.post(f"/v1/users/{user}-other/memories", json={"content": "Plays the oboe"})
        assert other.status_code == 201

    # Export: a JSON download of everything held about the user.
    with page.expect_download() as downloading:
        page.get_by_role("button", name="Export user").click()
    download = downloading.value
    assert download.suggested_filename.endswith(".json")
    document = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert document["format"] == "memstack.user-export" and document["user_id"] == user
    assert {m["content"] for m in document["memories"]} == {"Prefers green tea over coffee", "Lives in Lyon"}

    # Erase asks first; Cancel keeps everything.
    dialog = page.get_by_role("dialog", name="Erase this user?")
    page.get_by_role("button", name="Erase user").click()
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(f"Everything held about {user} will be erased")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("li.memory")).to_have_count(2)

    page.get_by_role("button", name="Erase user").click()
    dialog.get_by_role("button", name="Erase everything").click()
    expect(page.locator("#status")).to_contain_text(f"Erased {user}")
    expect(page.locator("li.memory")).to_have_count(0)
    expect(page.locator("#usage")).to_have_text("0 / 50 memories")
    with local_server.api() as api:
        assert api.get(f"/v1/users/{user}/memories", params={"include_deleted": True}).json()["memories"] == []
        assert len(api.get(f"/v1/users/{user}-other/memories").json()["memories"]) == 1
