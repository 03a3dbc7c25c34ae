"""``make screenshots``: the three views of the web UI at 1280×800, written as PNG files into a folder (``docs/``).

Runs ``memstack serve`` on a fresh temporary home (local mode, offline models), adds a few memories, holds a short
conversation in the chat playground through the browser, then captures the memory manager, the chat playground and
the context inspector of the last reply. Usage: ``python tests/ui/screenshots.py docs``.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from conftest import CHROMIUM, CHROMIUM_ARGS, LAPTOP, serve, stop

if TYPE_CHECKING:
    from playwright.sync_api import Page

USER = "maya"
MEMORIES = [
    ("Prefers green tea over coffee", "preference"),
    ("Is preparing for the MCAT in June", "goal"),
    ("Learns best from worked examples", "learningstyle"),
    ("Has piano lessons on Tuesdays at 6pm", "schedule"),
    ("Lives in Lyon with her partner and a cat", "fact"),
    ("Works night shifts as a nurse", "fact"),
]
FORGOTTEN = "Drives a red scooter"
CHAT = ["Can you plan my study snacks for Tuesday evening?", "Remember that I'm allergic to peanuts"]


def settle(page: Page) -> None:
    """Top of the page, pointer out of the way, the status toast faded."""
    from playwright.sync_api import expect

    page.evaluate("() => window.scrollTo(0, 0)")
    page.mouse.move(0, 0)
    expect(page.locator("#status")).not_to_have_class(re.compile("shown"), timeout=10_000)
    page.wait_for_timeout(300)  # the fade-out transition


def main(out: Path) -> int:
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: run `make chromium` first", file=sys.stderr)
        return 1
    from playwright.sync_api import expect, sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="memstack-screens-"))
    served = serve(home, "--auth", "local")
    try:
        with served.api() as api:
            if "/v1/chat" not in api.get("/openapi.json").json()["paths"]:
                print("this server has no POST /v1/chat yet: the chat view cannot be captured", file=sys.stderr)
                return 1
            for content, category in [*MEMORIES, (FORGOTTEN, "fact")]:
                api.post(f"/v1/users/{USER}/memories", json={"content": content, "category": category})
            gone = api.get(f"/v1/users/{USER}/memories", params={"q": "scooter"}).json()["memories"][0]
            api.delete(f"/v1/users/{USER}/memories/{gone['id']}")
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=LAPTOP)  # type: ignore[arg-type]
            page.set_default_timeout(30_000)

            page.goto(f"{served.url}/#/chat?user={USER}")
            page.wait_for_selector("body[data-ready='true']")
            for message in CHAT:
                before = page.locator("li.msg.assistant").count()
                page.get_by_label("Message").fill(message)
                page.get_by_label("Message").press("Enter")
                expect(page.locator("li.msg.assistant")).to_have_count(before + 1)
                expect(page.locator("li.msg.assistant").last).to_have_attribute("aria-busy", "false")
            settle(page)
            page.screenshot(path=str(out / "ui-chat.png"))

            page.locator("li.msg.assistant").last.get_by_role("link", name="Inspect context").click()
            expect(page.get_by_role("heading", name=re.compile("^Context ctx_"))).to_be_visible()
            settle(page)
            page.screenshot(path=str(out / "ui-inspector.png"))

            page.get_by_role("link", name="Memories").click()
            expect(page.locator("#usage")).to_have_text(re.compile(r"^\d+ / 50 memories$"))
            settle(page)
            page.screenshot(path=str(out / "ui-memories.png"))
            browser.close()
    finally:
        stop(served)
        shutil.rmtree(home, ignore_errors=True)
    for name in ("ui-memories.png", "ui-chat.png", "ui-inspector.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs")))
