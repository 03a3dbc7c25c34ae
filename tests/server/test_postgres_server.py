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
