"""Text no store can keep (NUL, a lone surrogate) is a 400 InputError on every route and in every kind of field, on
SQLite and on PostgreSQL alike, and leaves what is stored as it was.

JSON carries a lone surrogate as an escape (``"\\ud800"``, what ``json.dumps`` writes); a URL carries it as the
percent-escaped bytes a client would produce (``%ED%A0%80``, which are not UTF-8).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack_testing.postgres import EmbeddedPostgres

BAD = {"nul": ("a\x00b", "%00", "NUL"), "surrogate": ("a\ud800b", "%ED%A0%80", "surrogate")}


@dataclass(frozen=True)
class Served:
    client: httpx.Client
    memory_id: str
    session_id: str
    context_id: str


def _serve(config: Config) -> Iterator[Served]:
    async def key() -> str:
        async with AsyncMemstack(config) as ms:
            return (await ms.store.keys.create("acme"))[1]

    secret = asyncio.run(key())
    with BackgroundServer(create_app(config, settings=ServerSettings(auth="keys"))) as server:
        client = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {secret}"}, timeout=60)
        memory = client.post("/v1/users/ana/memories", json={"content": "User keeps bees", "category": "fact"})
        turn = client.post("/v1/chat", json={"user_id": "ana", "message": "I keep bees in my garden."})
        agent = client.put("/v1/agents/keeper", json={"core": "You help beekeepers."})
        assert memory.status_code == 201 and turn.status_code == 200 and agent.status_code == 200, turn.text
        reply = turn.json()
        _phase2_done(client, reply["session_id"])
        yield Served(client, memory.json()["id"], reply["session_id"], reply["context_id"])
        client.close()


def _phase2_done(client: httpx.Client, session_id: str, timeout_s: float = 60.0) -> None:
    """Wait until the turn's summary is in the turn log: phase 2 runs after the reply, and a test that compares the
    stored state before and after must not see it land in between."""
    deadline = time.monotonic() + timeout_s
    while True:
        session = client.get(f"/v1/sessions/{session_id}", params={"user_id": "ana"}).json()
        if len(session["turn_log"]) == session["turn_count"]:
            return
        assert time.monotonic() < deadline, f"phase 2 did not finish in {timeout_s} s: {session}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(Config.resolve(home=tmp_path_factory.mktemp("unstorable"), embedder="hash:64"))


@pytest.fixture(scope="module")
def postgres_app(tmp_path_factory: pytest.TempPathFactory, postgres_server: EmbeddedPostgres) -> Iterator[Served]:
    url = postgres_server.create_database()
    home = tmp_path_factory.mktemp("unstorable-pg")
    yield from _serve(Config.resolve(home=home, database_url=url, embedder="hash:64"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(request: pytest.FixtureRequest) -> Served:
    fixture = "sqlite_server" if request.param == "sqlite" else "postgres_app"
    result: Served = request.getfixturevalue(fixture)
    return result


def _requests(bad: str, url: str, s: Served) -> list[tuple[str, str, str, Any]]:
    """(label, method, path, JSON body or raw YAML bytes or None): one field of each kind carries the bad text."""
    m, sid, cid = s.memory_id, s.session_id, s.context_id
    chat = {"user_id": "ana", "message": "hello"}
    hello = {"role": "user", "content": "hello"}
    said, system = {"role": "user", "content": bad}, {"role": "system", "content": bad}
    part = {"role": "user", "content": [{"type": "text", "text": bad}]}
    oai = {"model": "memstack", "user": "ana", "messages": [hello]}
    return [
        ("chat message", "POST", "/v1/chat", {**chat, "message": f"I like {bad} tea"}),
        ("chat message, streamed", "POST", "/v1/chat", {**chat, "message": f"I like {bad} tea", "stream": True}),
        ("chat user id", "POST", "/v1/chat", {**chat, "user_id": bad}),
        ("chat session id", "POST", "/v1/chat", {**chat, "session_id": bad}),
        ("chat agent name", "POST", "/v1/chat", {**chat, "agent": bad}),
        ("chat metadata value", "POST", "/v1/chat", {**chat, "metadata": {"location": bad}}),
        ("chat metadata key", "POST", "/v1/chat", {**chat, "metadata": {bad: "x"}}),
        ("chat nested metadata", "POST", "/v1/chat", {**chat, "metadata": {"flags": {"beta": [bad]}}}),
        ("chat unknown field", "POST", "/v1/chat", {**chat, "extra": bad}),
        ("completion message", "POST", "/v1/chat/completions", {**oai, "messages": [said]}),
        ("completion, streamed", "POST", "/v1/chat/completions", {**oai, "stream": True, "messages": [said]}),
        ("completion history", "POST", "/v1/chat/completions", {**oai, "messages": [system, hello]}),
        ("completion text part", "POST", "/v1/chat/completions", {**oai, "messages": [part]}),
        ("completion user", "POST", "/v1/chat/completions", {**oai, "user": bad}),
        ("completion model", "POST", "/v1/chat/completions", {**oai, "model": bad}),
        ("memory content", "POST", "/v1/users/ana/memories", {"content": f"User {bad} bees", "category": "fact"}),
        ("memory agent id", "POST", "/v1/users/ana/memories", {"content": "User hums", "agent_id": bad}),
        ("memory tier", "POST", "/v1/users/ana/memories", {"content": "User hums", "tier": bad}),
        ("user id in path", "POST", f"/v1/users/an{url}a/memories", {"content": "User hums"}),
        ("edited content", "PATCH", f"/v1/users/ana/memories/{m}", {"content": f"User {bad} wasps"}),
        ("memory id", "GET", f"/v1/users/ana/memories/m{url}", None),
        ("memory id, edit", "PATCH", f"/v1/users/ana/memories/m{url}", {"content": "User hums"}),
        ("memory id, forget", "DELETE", f"/v1/users/ana/memories/m{url}", None),
        ("memory id, delete", "DELETE", f"/v1/users/ana/memories/m{url}?permanent=true", None),
        ("memory id, restore", "POST", f"/v1/users/ana/memories/m{url}/restore", None),
        ("memory id, history", "GET", f"/v1/users/ana/memories/m{url}/history", None),
        ("list text filter", "GET", f"/v1/users/ana/memories?q=be{url}es", None),
        ("list user", "GET", f"/v1/users/a{url}/memories", None),
        ("search query", "POST", "/v1/users/ana/memories/search", {"query": f"bees {bad}", "k": 3}),
        ("search agent id", "POST", "/v1/users/ana/memories/search", {"query": "bees", "agent_id": bad}),
        ("search user", "POST", f"/v1/users/a{url}/memories/search", {"query": "bees"}),
        ("usage tier", "GET", f"/v1/users/ana/usage?tier=f{url}", None),
        ("session id", "GET", f"/v1/sessions/s{url}?user_id=ana", None),
        ("session user", "GET", f"/v1/sessions/{sid}?user_id=a{url}", None),
        ("context id", "GET", f"/v1/contexts/c{url}", None),
        ("context user", "GET", f"/v1/contexts/{cid}?user_id=a{url}", None),
        ("agent name", "GET", f"/v1/agents/a{url}", None),
        ("agent name, put", "PUT", f"/v1/agents/a{url}", {"core": "You help."}),
        ("agent name, delete", "DELETE", f"/v1/agents/a{url}", None),
        ("agent core", "PUT", "/v1/agents/keeper", {"core": f"You help {bad}."}),
        ("agent instructions", "PUT", "/v1/agents/keeper", {"core": {"identity": "You help.", "instructions": [bad]}}),
        ("agent characteristics", "PUT", "/v1/agents/keeper", {"core": "You help.", "characteristics": bad}),
        ("agent unknown field", "PUT", "/v1/agents/keeper", {"core": "You help.", "colour": bad}),
    ]


def _send(client: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    if body is None:
        return client.request(method, path)
    # json.dumps writes a lone surrogate as the escape \ud800, as a client would send it
    return client.request(method, path, content=json.dumps(body), headers={"content-type": "application/json"})


def _stored(client: httpx.Client, s: Served) -> dict[str, Any]:
    session = client.get(f"/v1/sessions/{s.session_id}", params={"user_id": "ana"}).json()
    return {
        "memories": client.get("/v1/users/ana/memories", params={"include_deleted": "true"}).json(),
        "session": (session["turn_count"], session["turn_log"], session["raw_window"]),
        "context": client.get(f"/v1/contexts/{s.context_id}").json(),
        "agent": client.get("/v1/agents/keeper").json()["definition"],
    }


@pytest.mark.parametrize("kind", sorted(BAD))
def test_every_field_refuses_unstorable_text_with_400(served: Served, kind: str) -> None:
    bad, url, word = BAD[kind]
    client = served.client
    before = _stored(client, served)
    wrong = []
    for label, method, path, body in _requests(bad, url, served):
        response = _send(client, method, path, body)
        is_json = response.headers.get("content-type", "").startswith("application/json")
        error = response.json().get("error", {}) if is_json else {}
        if response.status_code != 400 or error.get("type") != "InputError":
            wrong.append(f"{label}: {response.status_code} {response.text[:200]}")
        elif word not in error["message"] and "UTF-8" not in error["message"]:
            wrong.append(f"{label}: the message does not say what is wrong: {error['message']}")
    assert not wrong, "\n".join(wrong)
    assert _stored(client, served) == before  # nothing stored changed


def test_a_body_that_is_not_utf8_is_a_400_that_says_so(served: Served) -> None:
    """Latin-1 text (a byte that starts no UTF-8 sequence) in every kind of body field, and a UTF-16 body."""
    before = _stored(served.client, served)
    wrong = []
    for label, method, path, body in _requests("@@", "", served):
        raw = json.dumps(body).encode("utf-8").replace(b"@@", b"caf\xe9")
        if b"@@" in raw or b"\xe9" not in raw:  # the bad text travels in the URL
            continue
        response = served.client.request(method, path, content=raw, headers={"content-type": "application/json"})
        if response.status_code != 400 or "not UTF-8 text (byte 0xe9" not in response.text:
            wrong.append(f"{label}: {response.status_code} {response.text[:200]}")
    utf16 = json.dumps({"content": "User hums"}).encode("utf-16")
    response = served.client.post("/v1/users/ana/memories", content=utf16, headers={"content-type": "application/json"})
    if response.status_code != 400 or "encode the body as UTF-8" not in response.text:
        wrong.append(f"UTF-16 body: {response.status_code} {response.text[:200]}")
    assert not wrong, "\n".join(wrong)
    assert _stored(served.client, served) == before


def test_agent_yaml_refuses_unstorable_text(served: Served) -> None:
    yaml_headers = {"content-type": "application/yaml"}
    for body in (b'core: "You help \\0 beekeepers."\n', b'core: "You help \\uD800 beekeepers."\n'):
        response = served.client.put("/v1/agents/keeper", content=body, headers=yaml_headers)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["type"] == "InputError"
    assert served.client.get("/v1/agents/keeper").json()["definition"]["core"] == "You help beekeepers."


def test_text_that_only_looks_like_escapes_is_kept(served: Served) -> None:
    """A backslash followed by ``u0000`` is ordinary text, and a surrogate pair is one character."""
    for content in ("User writes \\u0000 in C strings", "User loves 🐝 bees"):
        raw = json.dumps({"content": content, "category": "fact"})  # the emoji travels as \ud83d\udc1d
        added = served.client.post("/v1/users/ana/memories", content=raw, headers={"content-type": "application/json"})
        assert added.status_code == 201, added.text
        assert added.json()["content"] == content
        assert served.client.delete(f"/v1/users/ana/memories/{added.json()['id']}?permanent=true").status_code == 200


def test_deeply_nested_json_is_a_4xx_not_a_5xx(served: Served) -> None:
    for inner in ('"\\u0000"', '"plain"'):
        body = "[" * 5000 + inner + "]" * 5000
        for path in ("/v1/chat", "/v1/users/ana/memories/search"):
            response = served.client.post(path, content=body, headers={"content-type": "application/json"})
            assert 400 <= response.status_code < 500, (path, inner, response.status_code, response.text[:300])
