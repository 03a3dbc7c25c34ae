"""Server hardening, each point against a real server: local mode answers loopback Host headers only (no DNS rebinding),
read strictly; bodies not sent as JSON are 415; a key created while an ``auto`` server runs is required within the
key cache's delay; the data directory and database are private to their user; deeply nested JSON or YAML bodies are a
4xx; a failure of the database reaches the client without its host, user or database name."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import httpx
import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer

from .conftest import make_config


def test_local_mode_refuses_a_host_that_is_not_this_machine(tmp_path: Path) -> None:
    app = create_app(make_config(tmp_path), settings=ServerSettings(auth="local"))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url) as client:
        assert client.get("/v1/users/alice/memories").status_code == 200  # Host: 127.0.0.1:PORT
        assert client.get("/v1/users/alice/memories", headers={"Host": "localhost:8700"}).status_code == 200
        rebound = client.get("/v1/users/alice/memories", headers={"Host": "attacker.example:8700"})
        assert rebound.status_code == 403 and "local mode" in rebound.json()["error"]["message"]
        assert (
            client.post("/v1/users/alice/memories", headers={"Host": "evil.test"}, json={"content": "x"}).status_code
            == 403
        )
    keyed = create_app(make_config(tmp_path), settings=ServerSettings(auth="keys"))
    with BackgroundServer(keyed) as server, httpx.Client(base_url=server.url) as client:
        assert client.get("/healthz", headers={"Host": "memory.example.com"}).status_code == 200  # keys: any host


def test_local_mode_reads_the_host_header_strictly(tmp_path: Path) -> None:
    """Issue 24: a loopback name or address and an optional numeric port, nothing else (``localhost:80@evil.com`` was
    read as ``localhost``)."""
    app = create_app(make_config(tmp_path), settings=ServerSettings(auth="local"))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url) as client:
        for host in ("127.0.0.1", "127.0.0.1:8700", "LOCALHOST:8700", "[::1]:8700", "127.0.0.2"):
            assert client.get("/v1/users/alice/memories", headers={"Host": host}).status_code == 200, host
        for host in (
            "localhost:80@evil.com", "evil.com#@localhost", "127.0.0.1.evil.com", "localhost.", "localhost:",
            "localhost:http", "localhost:8700:1", "::1", "127.0.0.1:99999", "127.1", "localhost/admin",
        ):  # fmt: skip
            refused = client.get("/v1/users/alice/memories", headers={"Host": host})
            assert refused.status_code == 403 and "local mode" in refused.json()["error"]["message"], host


def test_bodies_not_sent_as_json_are_415(tmp_path: Path) -> None:
    """Issue 24: a web page of another site can make a browser post text/plain, a form or an untyped body without
    asking first; the search route read such a body as JSON. Every POST, PUT and PATCH refuses them (415) before
    reading, while JSON (any charset, a +json type), YAML agents and writes without a body go on as before."""
    app = create_app(make_config(tmp_path), settings=ServerSettings(auth="local"))
    search, add = "/v1/users/alice/memories/search", "/v1/users/alice/memories"
    body = b'{"query": "tea"}'  # each route refuses it before reading it
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url) as client:
        for path in (search, add, "/v1/chat", "/v1/chat/completions", "/v1/users/alice/recall"):
            for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
                refused = client.post(path, content=body, headers={"Content-Type": kind})
                assert refused.status_code == 415, (path, kind, refused.text)
                assert refused.json()["error"]["type"] == "UnsupportedMediaType"
                assert "Content-Type: application/json" in refused.json()["error"]["message"]
            untyped = client.post(path, content=body)  # a body without a content type (fetch with a Blob)
            assert untyped.status_code == 415, (path, untyped.text)
        memory = client.post(add, json={"content": "Alice likes tea"}).json()
        edit = client.patch(f"{add}/{memory['id']}", content=b'{"content": "Alice likes green tea"}')
        assert edit.status_code == 415
        typed = {"Content-Type": "application/json; charset=utf-8"}
        assert client.post(search, content=body, headers=typed).status_code == 200
        assert client.patch(f"{add}/{memory['id']}", content=b'{"confidence": 0.5}', headers=typed).is_success
        forgotten = client.delete(f"{add}/{memory['id']}")
        assert forgotten.is_success and client.post(f"{add}/{memory['id']}/restore").status_code == 200  # no body
        agent = b"core:\n  identity: a tutor\n"
        assert client.put("/v1/agents/tutor", content=agent, headers={"Content-Type": "text/yaml"}).is_success
        refused = client.put("/v1/agents/tutor", content=agent, headers={"Content-Type": "text/plain"})
        assert refused.status_code == 415 and "application/yaml" in refused.json()["error"]["message"]
        document = client.get("/openapi.json").json()["paths"]
        assert "415" in document["/v1/users/{user_id}/memories/search"]["post"]["responses"]
        assert "415" not in document["/v1/users/{user_id}/memories/{memory_id}/restore"]["post"]["responses"]


def test_a_key_created_while_an_auto_server_runs_is_required_soon(tmp_path: Path) -> None:
    settings = ServerSettings(auth="auto", key_cache_s=0.2)
    with (
        BackgroundServer(create_app(make_config(tmp_path), settings=settings)) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        assert client.get("/v1/users/alice/memories").status_code == 200  # no key exists: local

        async def make_key() -> str:
            async with AsyncMemstack(make_config(tmp_path)) as ms:  # another process would do the same
                return (await ms.store.keys.create("acme"))[1]

        key = asyncio.run(make_key())
        asyncio.run(asyncio.sleep(0.3))
        refused = client.get("/v1/users/alice/memories")
        assert refused.status_code == 401
        assert client.get("/v1/users/alice/memories", headers={"Authorization": f"Bearer {key}"}).status_code == 200


def test_the_data_directory_and_database_are_private(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "home"

    async def use() -> None:
        async with AsyncMemstack(make_config(home)) as ms:
            await ms.add("alice", "User keeps a diary")

    asyncio.run(use())
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    files = [p for p in home.iterdir() if p.name.startswith("memstack.db")]
    assert files and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), files


def test_deeply_nested_json_and_yaml_bodies_are_4xx(tmp_path: Path) -> None:
    app = create_app(make_config(tmp_path), settings=ServerSettings(auth="local"))
    deep_json = '{"a":' * 5000 + "1" + "}" * 5000
    deep_yaml = "name: deep\ncore:\n  identity: " + "[" * 5000 + "]" * 5000 + "\n"
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url) as client:
        for path in ("/v1/users/alice/memories", "/v1/agents/deep"):
            method = client.put if "agents" in path else client.post
            got = method(path, content=deep_json, headers={"Content-Type": "application/json"})
            assert 400 <= got.status_code < 500, (path, got.status_code, got.text[:200])
        got = client.put("/v1/agents/deep", content=deep_yaml, headers={"Content-Type": "application/yaml"})
        assert 400 <= got.status_code < 500, (got.status_code, got.text[:200])
        assert client.get("/healthz").status_code == 200


@pytest.mark.postgres
def test_a_database_failure_does_not_name_the_database(tmp_path: Path, postgres_server: object) -> None:
    from memstack_testing.postgres import EmbeddedPostgres

    assert isinstance(postgres_server, EmbeddedPostgres)
    name = postgres_server.new_database_name()
    url = postgres_server.create_database(name)
    config = Config.resolve(home=tmp_path, database_url=url)
    with (
        BackgroundServer(create_app(config, settings=ServerSettings(auth="local"))) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        assert client.get("/v1/users/alice/memories").status_code == 200
        postgres_server.drop_database(name)  # the database goes away under the running server
        got = client.get("/v1/users/alice/memories")
        assert got.status_code == 503, got.text
        body = got.text.lower()
        assert name.lower() not in body and "postgres" not in body and "/tmp" not in body and "5432" not in body
        assert "retry" in got.json()["error"]["message"]
