"""A full tier over HTTP, on SQLite and on PostgreSQL (issue 23): an automatic capture it stops is reported in the
reply (``memory_updates``: ``dropped_limit`` with the tier and its limit) through ``POST /v1/chat`` (JSON and
server-sent events) and ``/v1/chat/completions``, and counted in ``GET …/usage``; an explicit add gets the upgrade
prompt. Detection runs offline."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memstack.config import Config, TierLimits
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack_testing.postgres import EmbeddedPostgres

TIERS = TierLimits({"tiny": 1, "pro": None}, default_tier="tiny")


def _serve(config: Config) -> Iterator[httpx.Client]:
    async def key() -> str:
        async with AsyncMemstack(config) as ms:
            return (await ms.store.keys.create("acme"))[1]

    auth = {"Authorization": f"Bearer {asyncio.run(key())}"}
    app = create_app(config, settings=ServerSettings(auth="keys"))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, headers=auth, timeout=60) as client:
        yield client


def _config(**settings: Any) -> Config:
    return Config.resolve(embedder="hash:64", tiers=TIERS, badge_wait_s=10.0, **settings)


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    yield from _serve(_config(home=tmp_path_factory.mktemp("limits")))


@pytest.fixture(scope="module")
def postgres_app(tmp_path_factory: pytest.TempPathFactory, postgres_server: EmbeddedPostgres) -> Iterator[httpx.Client]:
    url = postgres_server.create_database()
    yield from _serve(_config(home=tmp_path_factory.mktemp("limits-pg"), database_url=url))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def client(request: pytest.FixtureRequest) -> httpx.Client:
    result: httpx.Client = request.getfixturevalue("sqlite_server" if request.param == "sqlite" else "postgres_app")
    return result


def _dropped(updates: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(u["action"], u["tier"], u["limit"]) for u in updates]


def test_a_capture_a_full_tier_stops_is_reported_and_counted(client: httpx.Client) -> None:
    added = client.post("/v1/users/ana/memories", json={"content": "User keeps bees", "category": "fact"})
    assert added.status_code == 201, added.text
    assert client.get("/v1/users/ana/usage").json()["dropped"] == 0

    chat = client.post("/v1/chat", json={"user_id": "ana", "message": "I'm vegetarian."})
    assert chat.status_code == 200, chat.text
    assert _dropped(chat.json()["memory_updates"]) == [("dropped_limit", "tiny", 1)]
    assert "vegetarian" in chat.json()["memory_updates"][0]["content"] and chat.json()["upgrade_prompt"] is None

    body = {"user_id": "ana", "message": "I live in Lisbon.", "stream": True}
    with client.stream("POST", "/v1/chat", json=body) as streamed:
        lines = [line for line in streamed.iter_lines() if line.startswith("data:")]
    done = json.loads(lines[-1].removeprefix("data:"))
    assert _dropped(done["memory_updates"]) == [("dropped_limit", "tiny", 1)]

    completion = {"user": "ana", "messages": [{"role": "user", "content": "I work as a nurse."}]}
    answered = client.post("/v1/chat/completions", json=completion)
    assert answered.status_code == 200, answered.text
    assert _dropped(answered.json()["memstack"]["memory_updates"]) == [("dropped_limit", "tiny", 1)]

    usage = client.get("/v1/users/ana/usage").json()
    assert (usage["active"], usage["limit"], usage["dropped"]) == (1, 1, 3) and usage["last_dropped_at"]
    assert client.get("/v1/users/ana/usage", params={"tier": "pro"}).json()["dropped"] == 3  # whatever tier is asked

    explicit = client.post("/v1/users/ana/memories", json={"content": "User speaks Danish", "category": "fact"})
    assert explicit.status_code == 409
    error = explicit.json()["error"]
    assert (error["tier"], error["limit"]) == ("tiny", 1) and "Upgrade" in error["upgrade_prompt"]
    assert client.get("/v1/users/ana/usage").json()["dropped"] == 3  # an explicit save is refused, not dropped
    exported = client.get("/v1/users/ana/export").json()
    assert [d["count"] for d in exported["dropped_captures"]] == [3]
