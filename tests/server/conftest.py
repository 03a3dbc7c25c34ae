"""A real server over loopback HTTP for the API tests: uvicorn in a background thread, two tenants with one key each.

The store is a real SQLite file in a temporary directory and the embedder the real local MiniLM model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memstack.config import Config, TierLimits
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer


@dataclass(frozen=True)
class Running:
    url: str
    home: Path
    key_a: str  # tenant "acme"
    key_b: str  # tenant "globex"
    revoked: str  # tenant "acme", revoked before the server started

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0)


def make_config(home: Path) -> Config:
    # A small "tiny" tier so limit tests stay fast; "free" stays the default tier with its usual 50.
    tiers = TierLimits({"free": 50, "tiny": 2, "pro": 500, "premium": None}, default_tier="free")
    return Config.resolve(home=home, tiers=tiers)


async def _keys(home: Path) -> tuple[str, str, str]:
    async with AsyncMemstack(make_config(home)) as ms:
        _, key_a = await ms.store.keys.create("acme", name="tests")
        _, key_b = await ms.store.keys.create("globex")
        old, revoked = await ms.store.keys.create("acme", name="old")
        await ms.store.keys.revoke(old.id)
    return key_a, key_b, revoked


@pytest.fixture(scope="session")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    home = tmp_path_factory.mktemp("server-home")
    key_a, key_b, revoked = asyncio.run(_keys(home))
    app = create_app(make_config(home), settings=ServerSettings(auth="keys", max_body_bytes=64_000))
    with BackgroundServer(app) as server:
        yield Running(server.url, home, key_a, key_b, revoked)


@pytest.fixture
def acme(running: Running) -> Iterator[httpx.Client]:
    with running.client(running.key_a) as client:
        yield client


@pytest.fixture
def globex(running: Running) -> Iterator[httpx.Client]:
    with running.client(running.key_b) as client:
        yield client


@pytest.fixture
def anonymous(running: Running) -> Iterator[httpx.Client]:
    with running.client(None) as client:
        yield client


def fresh_user(request: pytest.FixtureRequest) -> str:
    """A user id no other test uses (tests share one server)."""
    return f"u-{request.node.name}"[:200]
