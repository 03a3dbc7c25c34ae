"""What a library user does in Python, a server user does over HTTP (issue 17): recall, ingest, a user's sessions,
ending a session, delegation. Against the real server of ``conftest`` (SQLite, local MiniLM, offline chat models),
with the library opened on the same store to check that the HTTP answers are the library's."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack.types import UserRef

from .conftest import Running, fresh_user, make_config

ASKED_AT = "2024-06-20T12:00:00+00:00"


def _conversation(start: datetime, exchanges: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, (said, reply) in enumerate(exchanges):
        at = (start + timedelta(minutes=2 * i)).isoformat()
        out += [{"role": "user", "content": said, "at": at}, {"role": "assistant", "content": reply}]
    return out


TRIP = [
    ("I'm allergic to peanuts.", "Noted, no peanuts."),
    ("We're planning a trip to Kyoto in October.", "Kyoto in October is lovely: the leaves turn."),
    ("My sister Ines is coming with us.", "Great, a trip with Ines."),
]


def _ingest(client: httpx.Client, user: str, session_id: str, **options: Any) -> httpx.Response:
    messages = options.pop("messages", None) or _conversation(datetime(2024, 5, 1, 9, tzinfo=UTC), TRIP)
    body = {"session_id": session_id, "messages": messages, **options}
    return client.post(f"/v1/users/{user}/ingest", json=body, timeout=120.0)


async def _library(running: Running, user: UserRef, query: str) -> tuple[list[dict[str, Any]], list[Any]]:
    async with AsyncMemstack(make_config(running.home), resume=False) as ms:
        at = datetime.fromisoformat(ASKED_AT)
        items = await ms.recall(user, query, k=8, at=at)
        sessions = await ms.store.archive.sessions(user, limit=50)
    return [i.to_dict() for i in items], sessions


def test_ingest_then_recall_and_list_sessions_answer_as_the_library(
    acme: httpx.Client, running: Running, request: pytest.FixtureRequest
) -> None:
    user = fresh_user(request)
    imported = _ingest(acme, user, "trip")
    assert imported.status_code == 200, imported.text
    body = imported.json()
    assert body["session_id"] == "trip" and body["turns"] == ["trip:1", "trip:2", "trip:3"]
    assert body["message_ids"][:2] == ["trip:1:user", "trip:1:assistant"] and len(body["message_ids"]) == 6
    assert any("peanut" in u["content"].lower() for u in body["memory_updates"] if u["action"] == "created")
    summary = body["summary"]
    assert summary["ended"] and summary["turn_count"] == 3 and summary["line"]
    assert summary["ended_at"].startswith("2024-05-01")  # the conversation's time, not the import's

    recalled = acme.post(f"/v1/users/{user}/recall", json={"query": "Who is coming to Kyoto?", "k": 8, "at": ASKED_AT})
    assert recalled.status_code == 200, recalled.text
    results = recalled.json()["results"]
    kinds = {r["kind"] for r in results}
    assert kinds == {"memory", "turn"}, results  # memories and past conversations together
    turn = next(r for r in results if r["kind"] == "turn")
    assert turn["session_id"] == "trip" and turn["id"].startswith("trip:") and turn["role"] in ("user", "assistant")
    assert turn["at"].startswith("2024-05-01")

    listed = acme.get(f"/v1/users/{user}/sessions")
    assert listed.status_code == 200, listed.text
    sessions = listed.json()["sessions"]
    assert [s["session_id"] for s in sessions] == ["trip"] and sessions[0] == summary

    library_items, library_sessions = asyncio.run(_library(running, UserRef(user, "acme"), "Who is coming to Kyoto?"))
    assert results == library_items
    assert [(s.session_id, s.turn_count, s.line) for s in library_sessions] == [("trip", 3, summary["line"])]

    only_turns = acme.post(
        f"/v1/users/{user}/recall", json={"query": "peanuts", "kinds": ["turn"], "exclude_session": "other"}
    )
    assert only_turns.status_code == 200 and {r["kind"] for r in only_turns.json()["results"]} == {"turn"}
    excluded = acme.post(
        f"/v1/users/{user}/recall", json={"query": "peanuts", "kinds": ["turn"], "exclude_session": "trip"}
    )
    assert excluded.json() == {"results": []}


def test_sessions_page_and_end(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    for n in range(3):
        start = datetime(2024, 5, 1 + n, 9, tzinfo=UTC)
        done = _ingest(acme, user, f"s{n}", end=False, capture=False, messages=_conversation(start, TRIP[:1]))
        assert done.status_code == 200, done.text
        assert done.json()["summary"] is None
    first = acme.get(f"/v1/users/{user}/sessions", params={"limit": 2}).json()["sessions"]
    rest = acme.get(f"/v1/users/{user}/sessions", params={"limit": 2, "offset": 2}).json()["sessions"]
    assert [s["session_id"] for s in first + rest] == ["s2", "s1", "s0"]  # most recently active first
    assert not any(s["ended"] for s in first + rest)

    ended = acme.post("/v1/sessions/s1/end", params={"user_id": user})
    assert ended.status_code == 200, ended.text
    body = ended.json()
    assert body["session_id"] == "s1" and body["ended"] is True
    assert body["summary"]["ended"] and body["summary"]["turn_count"] == 1 and body["summary"]["line"]
    again = acme.post("/v1/sessions/s1/end", params={"user_id": user})  # the library ends it again: same line
    assert again.status_code == 200 and again.json()["summary"]["line"] == body["summary"]["line"]
    states = {s["session_id"]: s["ended"] for s in acme.get(f"/v1/users/{user}/sessions").json()["sessions"]}
    assert states == {"s0": False, "s1": True, "s2": False}

    missing = acme.post("/v1/sessions/nope/end", params={"user_id": user})
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"
    assert acme.post("/v1/sessions/s1/end").status_code == 400  # user_id is required, as in GET /v1/sessions/{id}


def test_another_tenant_sees_and_ends_nothing(
    acme: httpx.Client, globex: httpx.Client, anonymous: httpx.Client, request: pytest.FixtureRequest
) -> None:
    user = fresh_user(request)
    assert _ingest(acme, user, "private", end=False).status_code == 200
    assert globex.get(f"/v1/users/{user}/sessions").json() == {"sessions": []}
    assert globex.post(f"/v1/users/{user}/recall", json={"query": "peanuts"}).json() == {"results": []}
    refused = globex.post("/v1/sessions/private/end", params={"user_id": user})
    assert refused.status_code == 404, refused.text
    assert acme.get(f"/v1/users/{user}/sessions").json()["sessions"][0]["ended"] is False  # untouched
    assert anonymous.get(f"/v1/users/{user}/sessions").status_code == 401
    assert anonymous.post(f"/v1/users/{user}/recall", json={"query": "x"}).status_code == 401
    assert anonymous.post("/v1/delegate", json={"user_id": user, "parent": "p", "task": "x"}).status_code == 401


def test_the_library_checks_answer_as_http_errors(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    recall = f"/v1/users/{user}/recall"
    blank = acme.post(recall, json={"query": "   "})
    assert blank.status_code == 400 and "query" in blank.json()["error"]["message"]
    assert acme.post(recall, json={"query": "x", "kinds": ["files"]}).status_code == 400
    assert acme.post(recall, json={"query": "x", "k": 0}).status_code == 400
    assert acme.post(recall, json={"query": "a\u0000b"}).status_code == 400

    def refused(status: int, words: str, **options: Any) -> None:
        answer = _ingest(acme, user, "bad", **options)
        assert answer.status_code == status, answer.text
        assert words in answer.json()["error"]["message"], answer.text

    refused(400, "role must be 'user' or 'assistant'", messages=[{"role": "robot", "content": "hi"}])
    refused(400, "user_speaker", messages=[{"speaker": "Ana", "content": "hi"}])
    refused(400, "ISO 8601", messages=[{"role": "user", "content": "hi", "at": "yesterday"}])
    refused(400, "tier", tier="platinum")
    refused(400, "at most 32000", messages=[{"role": "user", "content": "x" * 33_000}])
    refused(413, "larger than", messages=[{"role": "user", "content": "y" * 30_000}] * 3)
    assert _ingest(acme, user, "bad", messages=[{"role": "user", "content": "a\u0000"}]).status_code == 400
    empty = acme.post(f"/v1/users/{user}/ingest", json={"session_id": "bad", "messages": []})
    assert empty.status_code == 400
    assert acme.get(f"/v1/users/{user}/sessions").json() == {"sessions": []}  # nothing half done


def test_a_realistic_import_in_one_request(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    exchanges = [(f"Day {i}: I walked {i % 7 + 2} km along the river.", f"Nice, {i % 7 + 2} km.") for i in range(150)]
    messages = _conversation(datetime(2024, 1, 1, 8, tzinfo=UTC), exchanges)
    answer = _ingest(acme, user, "walks", messages=messages)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert len(body["turns"]) == 150 and len(body["message_ids"]) == 300 and body["summary"]["turn_count"] == 150


def test_an_import_larger_than_the_server_takes_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    settings = ServerSettings(auth="local", max_ingest_messages=4)
    app = create_app(make_config(tmp_path), settings=settings)
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        messages = _conversation(datetime(2024, 5, 1, 9, tzinfo=UTC), TRIP)  # 6 messages
        refused = _ingest(client, "ana", "trip", messages=messages)
        assert refused.status_code == 400, refused.text
        assert "at most 4 per request" in refused.json()["error"]["message"]
        assert client.get("/v1/users/ana/sessions").json() == {"sessions": []}
        first = _ingest(client, "ana", "trip", messages=messages[:4], end=False)  # in parts, same session
        rest = _ingest(client, "ana", "trip", messages=messages[4:])
        assert first.status_code == rest.status_code == 200, (first.text, rest.text)
        assert rest.json()["turns"] == ["trip:3"] and rest.json()["summary"]["turn_count"] == 3


def test_delegate_runs_the_child_agent(
    acme: httpx.Client, globex: httpx.Client, request: pytest.FixtureRequest
) -> None:
    user = fresh_user(request)
    task = {"instructions": "Suggest a dinner.", "payload": {"guests": 2}}
    done = acme.post("/v1/delegate", json={"user_id": user, "parent": "planner", "task": task})
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["reply"] and body["session_id"] and body["turn"] == 1 and body["offline"] is True
    assert body["memory_updates"] == []  # the task is data: nothing of it is captured as a memory of the user
    assert acme.get(f"/v1/contexts/{body['context_id']}", params={"user_id": user}).status_code == 200

    assert acme.put("/v1/agents/chef", json={"core": "You plan dinners."}).status_code == 200
    plain = acme.post("/v1/delegate", json={"user_id": user, "parent": "planner", "child": "chef", "task": "Pasta?"})
    assert plain.status_code == 200, plain.text
    assert (
        globex.post("/v1/delegate", json={"user_id": user, "parent": "p", "child": "chef", "task": "x"}).status_code
        == 404
    )
    empty = acme.post("/v1/delegate", json={"user_id": user, "parent": "planner", "task": {"instructions": " "}})
    assert empty.status_code == 400 and "instructions or a payload" in empty.json()["error"]["message"]
    extra = acme.post("/v1/delegate", json={"user_id": user, "parent": "p", "task": {"instructions": "x", "y": 1}})
    assert extra.status_code == 400


def test_the_openapi_document_has_every_library_operation() -> None:
    paths = create_app().openapi()["paths"]
    for path, method in [
        ("/v1/users/{user_id}/recall", "post"),
        ("/v1/users/{user_id}/ingest", "post"),
        ("/v1/users/{user_id}/sessions", "get"),
        ("/v1/sessions/{session_id}/end", "post"),
        ("/v1/delegate", "post"),
    ]:
        operation = paths[path][method]
        assert {"200", "400", "401", "404"} <= set(operation["responses"]) and "422" not in operation["responses"], path
        assert "$ref" in str(operation["responses"]["200"]["content"]["application/json"]["schema"]), path
