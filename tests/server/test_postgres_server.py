"""The HTTP API on the production backend: keys, tenant isolation and search against a real PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.server import create_app
from memstack.server.runner import BackgroundServer

pytestmark = pytest.mark.postgres


def test_the_api_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    config = Config.resolve(home=tmp_path, database_url=postgres_url, embedder="hash:64")

    async def keys() -> tuple[str, str]:
        async with AsyncMemstack(config) as ms:
            return (await ms.store.keys.create("acme"))[1], (await ms.store.keys.create("globex"))[1]

    key_a, key_b = asyncio.run(keys())
    with BackgroundServer(create_app(config)) as server:
        acme = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key_a}"})
        globex = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key_b}"})
        added = acme.post("/v1/users/ana/memories", json={"content": "User keeps bees", "category": "fact"})
        assert added.status_code == 201, added.text
        memory_id = added.json()["id"]
        found = acme.post("/v1/users/ana/memories/search", json={"query": "User keeps bees", "k": 3}).json()
        assert [r["memory"]["id"] for r in found["results"]] == [memory_id]
        assert globex.get(f"/v1/users/ana/memories/{memory_id}").status_code == 404
        assert globex.post("/v1/users/ana/memories/search", json={"query": "bees"}).json() == {"results": []}
        assert acme.put("/v1/agents/keeper", json={"core": "You help beekeepers."}).status_code == 200
        assert globex.get("/v1/agents/keeper").status_code == 404
        assert httpx.get(f"{server.url}/v1/users/ana/memories").status_code == 401
        acme.close()
        globex.close()


def test_text_filter_finds_stemmed_words_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    """``?q=`` is the same full-text search as on SQLite: stems, so "bakeries" finds "bakery" and "run" "running"."""
    config = Config.resolve(home=tmp_path, database_url=postgres_url, embedder="hash:64")

    async def key() -> str:
        async with AsyncMemstack(config) as ms:
            return (await ms.store.keys.create("acme"))[1]

    auth = {"Authorization": f"Bearer {asyncio.run(key())}"}
    with BackgroundServer(create_app(config)) as server, httpx.Client(base_url=server.url, headers=auth) as client:
        for content in ("Loves the bakery on Rua Augusta", "Went running by the river", "Studies biology"):
            assert client.post("/v1/users/ana/memories", json={"content": content}).status_code == 201
        for query, expected in [("bakeries", "Loves the bakery on Rua Augusta"), ("run", "Went running by the river"),
                                ("studying", "Studies biology")]:  # fmt: skip
            listed = client.get("/v1/users/ana/memories", params={"q": query})
            assert listed.status_code == 200, listed.text
            assert [m["content"] for m in listed.json()["memories"]] == [expected], query


def test_recall_ingest_sessions_end_and_delegate_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    """The library operations over HTTP (issue 17) on PostgreSQL, which ranks the archive itself."""
    config = Config.resolve(home=tmp_path, database_url=postgres_url, embedder="hash:64")

    async def keys() -> tuple[str, str]:
        async with AsyncMemstack(config) as ms:
            return (await ms.store.keys.create("acme"))[1], (await ms.store.keys.create("globex"))[1]

    key_a, key_b = asyncio.run(keys())
    messages = [
        {"role": "user", "content": "I keep bees on the roof.", "at": "2024-05-01T09:00:00Z"},
        {"role": "assistant", "content": "Bees on a roof: lovely."},
        {"role": "user", "content": "The hive is called Duchess.", "at": "2024-05-01T09:05:00Z"},
        {"role": "assistant", "content": "A fine name for a hive."},
    ]
    with BackgroundServer(create_app(config)) as server:
        acme = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key_a}"}, timeout=60)
        globex = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key_b}"}, timeout=60)
        body = {"session_id": "bees", "messages": messages, "end": False}
        imported = acme.post("/v1/users/ana/ingest", json=body)
        assert imported.status_code == 200, imported.text
        assert imported.json()["turns"] == ["bees:1", "bees:2"] and imported.json()["summary"] is None
        recalled = acme.post("/v1/users/ana/recall", json={"query": "what is the hive called?", "kinds": ["turn"]})
        assert recalled.status_code == 200, recalled.text
        assert any("Duchess" in r["text"] for r in recalled.json()["results"])
        listed = acme.get("/v1/users/ana/sessions").json()["sessions"]
        assert [(s["session_id"], s["turn_count"], s["ended"]) for s in listed] == [("bees", 2, False)]
        assert globex.get("/v1/users/ana/sessions").json() == {"sessions": []}
        assert globex.post("/v1/sessions/bees/end", params={"user_id": "ana"}).status_code == 404
        ended = acme.post("/v1/sessions/bees/end", params={"user_id": "ana"})
        assert ended.status_code == 200 and ended.json()["summary"]["ended"], ended.text
        assert acme.post("/v1/sessions/nope/end", params={"user_id": "ana"}).status_code == 404
        delegated = acme.post("/v1/delegate", json={"user_id": "ana", "parent": "keeper", "task": "Plan a hive check"})
        assert delegated.status_code == 200 and delegated.json()["reply"], delegated.text
        acme.close()
        globex.close()
