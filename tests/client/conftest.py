"""Two backends for the same behaviour tests: ``embedded`` (``AsyncMemstack`` on a temporary home) and ``remote``
(``AsyncMemstackClient`` against a real server on another temporary home, over loopback HTTP, local auth mode).
Both use the same configuration (the offline chat responder, a small ``tiny`` tier, the hashing embedder)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memstack.client import AsyncMemstackClient
from memstack.config import Config, TierLimits
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer

Backend = AsyncMemstack | AsyncMemstackClient


def make_config(home: Path) -> Config:
    tiers = TierLimits({"free": 50, "tiny": 2, "premium": None}, default_tier="free")
    return Config.resolve(home=home, tiers=tiers, embedder="hash:64")


@pytest.fixture(autouse=True)
def _no_client_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client reads its URL and key from the environment when not given them: the tests give them."""
    for name in ("MEMSTACK_URL", "MEMSTACK_API_KEY", "MEMSTACK_KEY"):
        monkeypatch.delenv(name, raising=False)


@dataclass(frozen=True)
class Servers:
    local: str  # auth "local": requests without a key act for tenant "default"
    keyed: str  # auth "keys"
    key: str  # a key of tenant "acme" on the keyed server


async def _key(home: Path) -> str:
    async with AsyncMemstack(make_config(home)) as ms:
        return (await ms.keys.create("acme", name="client-tests"))[1]


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    local_home = tmp_path_factory.mktemp("client-local")
    keyed_home = tmp_path_factory.mktemp("client-keyed")
    key = asyncio.run(_key(keyed_home))
    local = create_app(make_config(local_home), settings=ServerSettings(auth="local"))
    keyed = create_app(make_config(keyed_home), settings=ServerSettings(auth="keys"))
    with BackgroundServer(local) as one, BackgroundServer(keyed) as two:
        yield Servers(one.url, two.url, key)


@pytest.fixture(scope="session")
async def embedded(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AsyncMemstack]:
    async with AsyncMemstack(make_config(tmp_path_factory.mktemp("client-embedded"))) as ms:
        yield ms


@pytest.fixture
async def remote(servers: Servers) -> AsyncIterator[AsyncMemstackClient]:
    async with AsyncMemstackClient(servers.local) as client:
        yield client


@pytest.fixture(params=["embedded", "remote"])
def ms(request: pytest.FixtureRequest) -> Backend:
    """The backend under test: every behaviour test runs once on each."""
    backend: Backend = request.getfixturevalue(request.param)
    return backend


@pytest.fixture
def user(request: pytest.FixtureRequest) -> str:
    """A user id no other test uses (the backends are shared by the tests)."""
    return f"u-{request.node.name}"[:200]
