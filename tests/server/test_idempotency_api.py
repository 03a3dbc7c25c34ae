"""``Idempotency-Key`` on the HTTP writes (issue 13), over real HTTP on both backends: a retry with the same key and
request gets the first answer (``Idempotent-Replayed: true``) and the work is done once; the same key with another
request is a 400; a retry while the first is in flight a 409 with ``Retry-After``; answers that ask for a retry are
not kept; a temporary chat is never kept; the kept answers go with the user's erasure and stay out of the export.
The chat model is a scripted OpenAI-compatible server that answers a message containing "slowly" only once the test
opens its gate."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from memstack.config import Config, TierLimits
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer
from memstack_testing.postgres import EmbeddedPostgres

REPLAYED = "Idempotent-Replayed"


@dataclass
class Rig:
    url: str
    model: ScriptedOpenAIServer
    engine: AsyncMemstack
    gate: threading.Event

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60.0)

    def chat_calls(self, text: str) -> int:
        return sum(1 for r in self.model.chat_requests if r.model == "chat" and text in (r.last_user_message or ""))


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def rig(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    database: str | None = None
    url: str | None = None
    if request.param == "postgres":
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        database = server.new_database_name()
        url = server.create_database(database)
    gate = threading.Event()

    async def answer(req: RecordedRequest) -> Reply:
        if "slowly" in (req.last_user_message or ""):
            while not gate.is_set():
                await asyncio.sleep(0.01)
        return Reply.text(f"You said: {req.last_user_message}")

    with ScriptedOpenAIServer() as model, pytest.MonkeyPatch.context() as env:
        model.handle(answer, model="chat")
        env.setenv("MEMSTACK_CUSTOM_BASE_URL", model.base_url)
        config = Config.resolve(
            home=tmp_path_factory.mktemp("idempotency"), database_url=url, chat_model="custom:chat",
            embedder="hash:64", badge_wait_s=5.0, tiers=TierLimits({"free": 50, "tiny": 1}, default_tier="free"),
        )  # fmt: skip
        engine = AsyncMemstack(config)
        app = create_app(engine, settings=ServerSettings(auth="local", idempotency_stale_s=600))
        with BackgroundServer(app) as running:
            yield Rig(running.url, model, engine, gate)
    if database is not None:
        request.getfixturevalue("postgres_server").drop_database(database)


def _post(http: httpx.Client, path: str, key: str | bytes | None, **kwargs: Any) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return http.post(path, headers=headers, **kwargs)


def test_a_retried_add_stores_one_memory(rig: Rig) -> None:
    with rig.client() as http:
        path = "/v1/users/ana/memories"
        first = _post(http, path, "add-1", json={"content": "Ana keeps bees", "category": "fact"})
        assert first.status_code == 201 and REPLAYED not in first.headers
        # the same request again, with other spacing and key order: the same answer, replayed
        raw = b'{ "category" : "fact", "content": "Ana keeps bees" }'
        again = http.post(path, content=raw, headers={"Idempotency-Key": "add-1", "Content-Type": "application/json"})
        assert again.status_code == 201 and again.headers[REPLAYED] == "true" and again.json() == first.json()
        assert again.headers["content-type"].startswith("application/json")
        assert [m["id"] for m in http.get(path).json()["memories"]] == [first.json()["id"]]
        other = _post(http, path, "add-1", json={"content": "Ana keeps wasps", "category": "fact"})
        assert other.status_code == 400 and "different request" in other.json()["error"]["message"]
        elsewhere = _post(
            http, "/v1/users/bo/memories", "add-1", json={"content": "Ana keeps bees", "category": "fact"}
        )
        assert elsewhere.status_code == 400  # another user's path is another request
        bad = _post(http, path, "ключ".encode(), json={"content": "x"})
        assert bad.status_code == 400 and "printable ASCII" in bad.json()["error"]["message"]
        assert _post(http, path, "k" * 256, json={"content": "x"}).status_code == 400


def test_every_write_route_is_done_once(rig: Rig) -> None:
    with rig.client() as http:
        user = "/v1/users/cleo"
        memory = _post(http, f"{user}/memories", None, json={"content": "Cleo plays the oboe"}).json()
        one = f"{user}/memories/{memory['id']}"
        for method, path, kwargs in [
            ("PATCH", one, {"json": {"content": "Cleo plays the oboe and the flute"}}),
            ("DELETE", one, {}),  # forget
            ("POST", f"{one}/restore", {}),
            ("DELETE", one, {"params": {"permanent": "true"}}),  # a retry would otherwise be a 404
        ]:
            key = f"{method}-{path}-{kwargs}"
            first = http.request(method, path, headers={"Idempotency-Key": key}, **kwargs)
            assert first.status_code == 200, first.text
            again = http.request(method, path, headers={"Idempotency-Key": key}, **kwargs)
            assert (again.status_code, again.json(), again.headers[REPLAYED]) == (200, first.json(), "true")
        history = http.get(f"{one}/history").json()["events"]
        assert [e["action"] for e in history] == ["create", "update", "forget", "restore", "delete"]

        talk = [{"role": "user", "content": "I moved to Porto."}, {"role": "assistant", "content": "Nice!"}]
        body = {"session_id": "import", "messages": talk}
        first = _post(http, f"{user}/ingest", "ingest-1", json=body)
        again = _post(http, f"{user}/ingest", "ingest-1", json=body)
        assert again.headers[REPLAYED] == "true" and again.json() == first.json()

        calls = rig.chat_calls("once only")
        chat = {"user_id": "cleo", "message": "Say this once only"}
        first = _post(http, "/v1/chat", "chat-1", json=chat)
        again = _post(http, "/v1/chat", "chat-1", json=chat)
        assert first.status_code == 200 and again.json() == first.json() and again.headers[REPLAYED] == "true"
        assert rig.chat_calls("once only") == calls + 1  # the model answered once
        session = first.json()["session_id"]
        end = f"/v1/sessions/{session}/end"
        ended = http.post(end, params={"user_id": "cleo"}, headers={"Idempotency-Key": "end-1"})
        replay = http.post(end, params={"user_id": "cleo"}, headers={"Idempotency-Key": "end-1"})
        assert replay.json() == ended.json() and replay.headers[REPLAYED] == "true"

        completion = {"model": "memstack", "user": "cleo", "messages": [{"role": "user", "content": "Completion once"}]}
        first = _post(http, "/v1/chat/completions", "cc-1", json=completion)
        again = _post(http, "/v1/chat/completions", "cc-1", json=completion)
        assert again.json() == first.json() and again.headers[REPLAYED] == "true"
        assert rig.chat_calls("Completion once") == 1


def test_a_repeated_query_parameter_in_another_order_is_another_request(rig: Rig) -> None:
    """Issue 24: a route reads the last value of a repeated parameter, so ``permanent=true&permanent=false`` is a
    forget and the reverse a permanent delete: under one key, the second is refused, not answered as the first."""
    with rig.client() as http:
        memory = _post(http, "/v1/users/ivy/memories", None, json={"content": "Ivy paints murals"}).json()
        one = f"/v1/users/ivy/memories/{memory['id']}"
        soft = http.delete(f"{one}?permanent=true&permanent=false", headers={"Idempotency-Key": "qs-1"})
        assert soft.status_code == 200 and soft.json()["permanent"] is False
        hard = http.delete(f"{one}?permanent=false&permanent=true", headers={"Idempotency-Key": "qs-1"})
        assert hard.status_code == 400 and REPLAYED not in hard.headers
        assert hard.json()["error"]["type"] == "InputError" and "different request" in hard.json()["error"]["message"]
        again = http.delete(f"{one}?permanent=true&permanent=false", headers={"Idempotency-Key": "qs-1"})
        assert again.headers[REPLAYED] == "true" and again.json() == soft.json()  # the same request still replays
        kept = http.get(one).json()
        assert kept["content"] == "Ivy paints murals" and kept["is_active"] is False  # forgotten, not deleted


def test_a_streamed_turn_is_kept_whole_and_replayed(rig: Rig) -> None:
    with rig.client() as http:
        chat = {"user_id": "dan", "message": "Stream me once", "stream": True}
        first = _post(http, "/v1/chat", "stream-1", json=chat)
        again = _post(http, "/v1/chat", "stream-1", json=chat)
        assert first.status_code == 200 and "event: done" in first.text
        assert again.text == first.text and again.headers["content-type"].startswith("text/event-stream")
        assert rig.chat_calls("Stream me once") == 1


def test_a_retry_while_the_first_is_in_flight_is_a_409(rig: Rig) -> None:
    rig.gate.clear()
    chat = {"user_id": "eve", "message": "Answer slowly please"}
    with rig.client() as http, ThreadPoolExecutor(1) as pool:
        first = pool.submit(_post, http, "/v1/chat", "slow-1", json=chat)
        deadline = time.monotonic() + 30
        while rig.chat_calls("slowly") == 0 and time.monotonic() < deadline:  # the first reached the model
            time.sleep(0.01)
        busy = _post(http, "/v1/chat", "slow-1", json=chat)
        assert busy.status_code == 409 and busy.headers["Retry-After"] == "1"
        assert busy.json()["error"]["type"] == "RequestInFlight"
        rig.gate.set()
        answered = first.result(timeout=60)
        assert answered.status_code == 200
        replay = _post(http, "/v1/chat", "slow-1", json=chat)
        assert replay.json() == answered.json() and rig.chat_calls("slowly") == 1


def test_which_answers_are_kept(rig: Rig) -> None:
    with rig.client() as http:
        missing = "/v1/users/fay/memories/mem_unknown/restore"
        first = http.post(missing, headers={"Idempotency-Key": "nf-1"})
        again = http.post(missing, headers={"Idempotency-Key": "nf-1"})
        assert first.status_code == again.status_code == 404 and again.headers[REPLAYED] == "true"  # kept
        tiny = {"content": "Fay sings", "tier": "tiny"}
        assert _post(http, "/v1/users/fay/memories", None, json={"content": "Fay dances", "tier": "tiny"}).is_success
        full = _post(http, "/v1/users/fay/memories", "full-1", json=tiny)
        assert full.status_code == 409  # a full tier: not kept, the retry runs again
        retry = _post(http, "/v1/users/fay/memories", "full-1", json=tiny)
        assert retry.status_code == 409 and REPLAYED not in retry.headers
        # a temporary turn is never kept: nothing about it may be stored
        temporary = {"user_id": "fay", "message": "Temporary hello", "temporary": True}
        _post(http, "/v1/chat", "temp-1", json=temporary)
        again = _post(http, "/v1/chat", "temp-1", json=temporary)
        assert REPLAYED not in again.headers and rig.chat_calls("Temporary hello") == 2


def test_kept_answers_go_with_the_user(rig: Rig) -> None:
    with rig.client() as http:
        _post(http, "/v1/users/gus/memories", "gus-1", json={"content": "Gus rows at dawn"})
        exported = http.get("/v1/users/gus/export").json()
        assert "responses" in exported and "gus-1" not in str(exported)  # not exported, and the export says why
        erased = http.delete("/v1/users/gus").json()
        assert erased["removed"]["idempotency_keys"] == 1
        again = _post(http, "/v1/users/gus/memories", "gus-1", json={"content": "Gus rows at dawn"})
        assert again.status_code == 201 and REPLAYED not in again.headers  # the user is new again: runs anew


def test_the_openapi_document_names_the_header_on_every_write(rig: Rig) -> None:
    with rig.client() as http:
        paths = http.get("/openapi.json").json()["paths"]
    writes = [
        ("/v1/users/{user_id}/memories", "post"),
        ("/v1/users/{user_id}/memories/{memory_id}", "patch"),
        ("/v1/users/{user_id}/memories/{memory_id}", "delete"),
        ("/v1/users/{user_id}/memories/{memory_id}/restore", "post"),
        ("/v1/users/{user_id}/ingest", "post"),
        ("/v1/sessions/{session_id}/end", "post"),
        ("/v1/chat", "post"),
        ("/v1/delegate", "post"),
        ("/v1/chat/completions", "post"),
    ]
    for path, method in writes:
        operation = paths[path][method]
        header = [p for p in operation["parameters"] if p["in"] == "header" and p["name"] == "Idempotency-Key"]
        assert header and "retry" in header[0]["description"], (path, method)
        assert "409" in operation["responses"], (path, method)
