"""Issue 24: calls of ``POST /v1/chat/completions`` sent at once, through two ``memstack serve`` processes on the same
data (one SQLite directory, or one PostgreSQL database). Copies of one call (the OpenAI SDK retries a call that
timed out, without an idempotency key) are one turn, every copy answered with it; calls with other messages from
one history continue its session once, and the others branch as a regenerated reply does; a call that waited for
its turn while its user was erased writes nothing. The chat model is a
scripted OpenAI-compatible server that holds its answer to a message with "slowly" until the test lets it go, so the
calls are all in flight together."""

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

from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer

from .processes import Server

REPLAYED = "Idempotent-Replayed"

pytestmark = pytest.mark.slow


@dataclass
class Rig:
    urls: tuple[str, str]
    model: ScriptedOpenAIServer
    gate: threading.Event

    def calls(self, text: str) -> int:
        return sum(1 for r in self.model.chat_requests if r.model == "chat" and text in (r.last_user_message or ""))

    def held(self, *texts: str) -> None:
        """Wait until the model was asked one of ``texts`` (the first call is in flight), then a moment for the
        other calls."""
        deadline = time.monotonic() + 60
        while not any(self.calls(text) for text in texts):
            assert time.monotonic() < deadline, f"the model was never asked {texts}"
            time.sleep(0.02)
        time.sleep(1.5)  # the other calls, sent at the same time, reach their servers and wait there


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def rig(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    url: str | None = None
    if request.param == "postgres":
        postgres = request.getfixturevalue("postgres_server")
        database = postgres.new_database_name()
        url = postgres.create_database(database)
    gate = threading.Event()

    async def answer(req: RecordedRequest) -> Reply:
        if "slowly" in (req.last_user_message or ""):
            while not gate.is_set():
                await asyncio.sleep(0.01)
        return Reply.text(f"You said: {req.last_user_message}")

    home = tmp_path_factory.mktemp("concurrent-completions")
    with ScriptedOpenAIServer() as model:
        model.handle(answer, model="chat")
        env = {"MEMSTACK_CHAT_MODEL": "custom:chat", "MEMSTACK_CUSTOM_BASE_URL": model.base_url}
        env["MEMSTACK_EMBEDDER"] = "hash:64"
        servers = [Server(home, url, env=env) for _ in range(2)]
        try:
            for server in servers:
                server.start()
            yield Rig((servers[0].url, servers[1].url), model, gate)
        finally:
            gate.set()
            for server in servers:
                server.stop()
    if url is not None:
        request.getfixturevalue("postgres_server").drop_database(database)


def _body(user: str, said: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    return {"model": "memstack", "user": user, "messages": [{"role": r, "content": t} for r, t in said], **extra}


def _post(url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=120)


def _opened(rig: Rig, user: str, line: str) -> tuple[list[tuple[str, str]], str]:
    """A conversation of one turn: the messages the client then holds, and its session."""
    first = _post(rig.urls[0], _body(user, [("user", line)]))
    assert first.status_code == 200, first.text
    reply = first.json()["choices"][0]["message"]["content"]
    return [("user", line), ("assistant", reply)], first.json()["memstack"]["session_id"]


def test_copies_of_a_call_sent_at_once_are_one_turn(rig: Rig) -> None:
    said, session = _opened(rig, "copies", "I keep bees.")
    call = _body("copies", [*said, ("user", "Tell me slowly about hives")])
    rig.gate.clear()
    with ThreadPoolExecutor(4) as pool:
        sent = [pool.submit(_post, rig.urls[i % 2], call) for i in range(4)]  # two copies through each process
        rig.held("slowly about hives")
        rig.gate.set()
        answers = [future.result(timeout=120) for future in sent]
    assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
    bodies = [a.json() for a in answers]
    assert {(b["memstack"]["session_id"], b["memstack"]["turn"]) for b in bodies} == {(session, 2)}
    assert len({b["id"] for b in bodies}) == 1  # one completion, the others its replays
    assert sorted(a.headers.get(REPLAYED, "") for a in answers) == ["", "true", "true", "true"]
    assert rig.calls("slowly about hives") == 1  # the model answered once

    again = _post(rig.urls[1], call)  # sent after the answer: a regenerated reply, a branch as before
    assert again.status_code == 200 and REPLAYED not in again.headers
    assert again.json()["memstack"]["session_id"] != session and again.json()["memstack"]["turn"] == 2


def test_streamed_copies_sent_at_once_are_one_turn(rig: Rig) -> None:
    said, session = _opened(rig, "streams", "I keep goats.")
    call = _body("streams", [*said, ("user", "Stream slowly about goats")], stream=True)
    rig.gate.clear()
    with ThreadPoolExecutor(2) as pool:
        sent = [pool.submit(_post, url, call) for url in rig.urls]
        rig.held("slowly about goats")
        rig.gate.set()
        first, second = (future.result(timeout=120) for future in sent)
    assert first.status_code == second.status_code == 200
    assert first.text == second.text and "[DONE]" in first.text and f'"session_id":"{session}"' in first.text
    assert rig.calls("slowly about goats") == 1


def test_calls_from_one_history_sent_at_once_continue_it_once(rig: Rig) -> None:
    said, session = _opened(rig, "forks", "I grow tomatoes.")
    soil = _body("forks", [*said, ("user", "Tell me slowly about soil")])
    water = _body("forks", [*said, ("user", "Tell me slowly about water")])
    rig.gate.clear()
    with ThreadPoolExecutor(2) as pool:
        sent = [pool.submit(_post, rig.urls[0], soil), pool.submit(_post, rig.urls[1], water)]
        rig.held("slowly about soil", "slowly about water")
        rig.gate.set()
        answers = [future.result(timeout=120) for future in sent]
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    where = [(a.json()["memstack"]["session_id"], a.json()["memstack"]["turn"]) for a in answers]
    assert sorted(s == session for s, _ in where) == [False, True]  # one continued the session, one branched
    assert [turn for _, turn in where] == [2, 2]  # each is the conversation's second turn
    assert rig.calls("slowly about soil") == rig.calls("slowly about water") == 1  # each answered, once


def test_a_call_waiting_for_its_turn_while_its_user_is_erased_writes_nothing(rig: Rig) -> None:
    """The erasure fence is pinned as a call arrives: a call that waited for its turn while the user was erased
    does not run afterwards as the call of a new user (it would import the history again)."""
    said, _ = _opened(rig, "gone", "I keep snails.")
    calls = [_body("gone", [*said, ("user", f"Tell me slowly about {what}")]) for what in ("shells", "slime")]
    rig.gate.clear()
    with ThreadPoolExecutor(2) as pool:
        sent = [pool.submit(_post, url, call) for url, call in zip(rig.urls, calls, strict=True)]
        rig.held("slowly about shells", "slowly about slime")  # one is with the model, the other waits its turn
        assert httpx.delete(f"{rig.urls[0]}/v1/users/gone", timeout=60).status_code == 200
        rig.gate.set()
        answers = [future.result(timeout=120) for future in sent]
    assert [a.status_code for a in answers] == [409, 409], [a.text for a in answers]
    assert {a.json()["error"]["type"] for a in answers} == {"UserErased"}
    time.sleep(1.0)  # what the turns left to run in the background, refused as well
    exported = httpx.get(f"{rig.urls[1]}/v1/users/gone/export", timeout=60).json()
    assert {name: value for name, value in exported.items() if isinstance(value, list) and value} == {}
