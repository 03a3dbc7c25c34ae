"""Webhooks through the HTTP API and the Python client, against real servers: a local one (any URL on this machine
is fine) and one that asks for API keys (its tenants' URLs must be public: private, loopback and link-local
addresses and non-http(s) URLs are refused with a message saying what to do)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memstack.client import AsyncMemstackClient, MemstackClient
from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import InputError, NotFound, WebhookRefused
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack.types import DeliveryStatus

from .conftest import FAST, until
from .receiver import Receiver


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app(Config(home=tmp_path_factory.mktemp("hooks-local"), **FAST), settings=ServerSettings(auth="local"))
    with BackgroundServer(app) as server:
        yield server.url


async def _key(home: Path) -> str:
    async with AsyncMemstack(Config(home=home, **FAST), resume=False) as ms:
        return (await ms.keys.create("acme", name="webhooks"))[1]


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    home = tmp_path_factory.mktemp("hooks-keyed")
    key = asyncio.run(_key(home))
    app = create_app(Config(home=home, **FAST), settings=ServerSettings(auth="keys"))
    with BackgroundServer(app) as server:
        yield server.url, key


async def test_the_api_creates_lists_delivers_shows_and_replays(local_server: str, receiver: Receiver) -> None:
    async with AsyncMemstackClient(local_server) as ms:
        endpoint = await ms.webhooks.create(receiver.url, events=["memory.created"], description="crm sync")
        assert endpoint.secret is not None and endpoint.tenant == "default"
        receiver.secret = endpoint.secret
        listed = await ms.webhooks.list()
        assert [(e.id, e.secret, e.description) for e in listed] == [(endpoint.id, None, "crm sync")]
        memory = await ms.add("ana", "I am learning Portuguese")
        (got,) = await until(receiver, 1)
        assert got.verified and got.event["data"]["memory"]["id"] == memory.id
        deadline = asyncio.get_running_loop().time() + 10
        while (found := await ms.webhooks.deliveries(endpoint.id))[0].status is DeliveryStatus.PENDING:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        (delivered,) = found
        assert (delivered.status, delivered.attempts, delivered.last_status) == (DeliveryStatus.DELIVERED, 1, 204)
        replayed = await ms.webhooks.replay(delivered.id, webhook_id=endpoint.id)
        assert replayed.event_id == delivered.event_id and replayed.status is DeliveryStatus.PENDING
        first, second = await until(receiver, 2)
        assert first.event_id == second.event_id
        paused = await ms.webhooks.update(endpoint.id, enabled=False, events=["memory.deleted"])
        assert paused.enabled is False and paused.events == ("memory.deleted",)
        with pytest.raises(InputError, match="unknown webhook event"):
            await ms.webhooks.update(endpoint.id, events=["memory.exploded"])
        await ms.webhooks.delete(endpoint.id)
        with pytest.raises(NotFound):
            await ms.webhooks.get(endpoint.id)
        with pytest.raises(NotFound):
            await ms.webhooks.replay(delivered.id)


def test_the_blocking_client_has_webhooks(local_server: str, receiver: Receiver) -> None:
    with MemstackClient(local_server) as ms:
        endpoint = ms.webhooks.create(receiver.url)
        assert ms.webhooks.get(endpoint.id).url == receiver.url
        assert ms.webhooks.deliveries(endpoint.id, status="failed") == []
        ms.webhooks.delete(endpoint.id)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://example.com/hook", "must start with https:// or http://"),
        ("file:///etc/passwd", "must start with https:// or http://"),
        ("https:///no-host", "names no host"),
        ("https://ana:secret@example.com/hook", "must not carry a user name or password"),
        ("http://127.0.0.1:9/hook", "webhooks_allow_private"),
        ("http://localhost/hook", "webhooks_allow_private"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://10.1.2.3/hook", "private"),
        ("http://[::1]:8080/hook", "loopback"),
    ],
)
async def test_a_keyed_server_refuses_urls_it_will_not_call(keyed_server: tuple[str, str], url: str, says: str) -> None:
    base, key = keyed_server
    async with AsyncMemstackClient(base, api_key=key) as ms:
        with pytest.raises(WebhookRefused, match=says):
            await ms.webhooks.create(url)
        assert await ms.webhooks.list() == []
    answer = httpx.post(f"{base}/v1/webhooks", json={"url": url}, headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 400 and answer.json()["error"]["type"] == "WebhookRefused"


async def test_a_local_server_calls_this_machine_and_the_setting_decides_elsewhere(
    local_server: str, tmp_path: Path
) -> None:
    async with AsyncMemstackClient(local_server) as ms:
        endpoint = await ms.webhooks.create("http://127.0.0.1:9/hook")
        await ms.webhooks.delete(endpoint.id)
        with pytest.raises(WebhookRefused, match="https:// or http://"):
            await ms.webhooks.create("gopher://127.0.0.1/hook")
    async with AsyncMemstack(Config(home=tmp_path, webhooks_allow_private=False, **FAST), resume=False) as library:
        with pytest.raises(WebhookRefused, match="webhooks_allow_private"):
            await library.webhooks.create("http://127.0.0.1:9/hook")
