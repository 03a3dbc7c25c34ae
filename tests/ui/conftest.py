"""The web UI in a real browser: Debian's Chromium (``/usr/bin/chromium``) driven by Playwright, against
``memstack serve`` running as a process on a free port, on a fresh SQLite home with the real local embedder.

Chromium is installed by ``make chromium`` (part of ``make test``). When it is missing these tests fail with the
command to run: they never skip, so a green run always means the UI was exercised in a browser.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import pytest

from memstack.engine import AsyncMemstack

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
T = TypeVar("T")
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
CLI = [sys.executable, "-c", "from memstack.cli import main; main()"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.ui)


@dataclass
class Served:
    """A ``memstack serve`` process: its URL and data directory."""

    url: str
    home: Path
    process: subprocess.Popen[str]
    key: str | None = None  # keys mode: a key of tenant "acme"
    other_key: str | None = None  # keys mode: a key of tenant "globex"

    def api(self, key: str | None = None) -> httpx.Client:
        key = key or self.key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The usual tiers plus a tiny one, so the limit is reached in two adds.
TIER_LIMITS = "free=50,lite=100,pro=500,premium=unlimited,tiny=2"


def serve(home: Path, *args: str, tiers: str | None = TIER_LIMITS) -> Served:
    """Start ``memstack serve`` on a free port and wait until it answers (``tiers=None``: none configured, as a
    self-hosted install runs)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    if tiers is not None:
        env["MEMSTACK_TIER_LIMITS"] = tiers
    command = [*CLI, "serve", "--port", str(port), "--home", str(home), "--log-level", "warning", *args]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise AssertionError(f"memstack serve exited: {process.communicate()[1]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return Served(url, home, process)
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError("memstack serve did not answer within 60 s")
        time.sleep(0.1)


def stop(served: Served) -> None:
    served.process.terminate()
    try:
        served.process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        served.process.kill()
        served.process.communicate()


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The server in local mode (no key needed), as ``memstack serve`` runs on a fresh clone."""
    served = serve(tmp_path_factory.mktemp("ui-local"), "--auth", "local")
    yield served
    stop(served)


async def _create_keys(home: Path, *tenants: str) -> list[str]:
    async with AsyncMemstack(home=home) as ms:
        return [(await ms.store.keys.create(tenant, name="ui tests"))[1] for tenant in tenants]


@pytest.fixture(scope="session")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The server in keys mode: every API call needs ``Authorization: Bearer KEY`` (tenant "acme")."""
    home = tmp_path_factory.mktemp("ui-keys")
    key, other_key = run_async(_create_keys(home, "acme", "globex"))
    served = serve(home, "--auth", "keys")
    served.key, served.other_key = key, other_key
    yield served
    stop(served)


# Module scope: Playwright's sync API runs an event loop on this thread while it is open, and asyncio code in tests
# of other modules must not find it running.
@pytest.fixture(scope="module")
def playwright_driver() -> Iterator[Playwright]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing, so the web UI cannot be tested. Install it with `make chromium` "
            "(apt-get install -y chromium, as root).",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright_driver: Playwright) -> Iterator[Browser]:
    browser = playwright_driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@dataclass
class Console:
    """Errors the page logged; a test fails on any it did not expect."""

    errors: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)  # substrings of errors a test provokes on purpose

    def on_message(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(part in e for part in self.expected)]


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def page(browser: Browser, console: Console) -> Iterator[Page]:
    context = browser.new_context(viewport=LAPTOP)  # type: ignore[arg-type]
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.on("console", console.on_message)
    page.on("pageerror", lambda error: console.errors.append(f"uncaught: {error}"))
    yield page
    context.close()
    assert not console.unexpected(), f"the page logged errors: {console.unexpected()}"


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from a test: in a thread, since Playwright's sync API owns this thread's loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def open_view(page: Page, url: str, view: str, user: str) -> None:
    """Load the UI on ``view`` for ``user`` and wait until its first render is done."""
    page.goto(f"{url}/#/{view}?user={user}")
    page.wait_for_selector("body[data-ready='true']")


def assert_fits(page: Page, what: str) -> None:
    """Nothing on the page is wider than the window (no sideways scrolling)."""
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{what} is {overflow}px wider than the {page.viewport_size} window"


def user_id(request: pytest.FixtureRequest) -> str:
    """A user id of this test only (the tests share one server)."""
    return f"u-{request.node.name}"[:100].replace("[", "-").replace("]", "")
