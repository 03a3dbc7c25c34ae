"""Dates that cannot overflow, over HTTP on SQLite and on PostgreSQL (issue 24, findings 3 and 4).

A date phrase off the calendar ("in 99999999 days") is kept as written and the message's other facts are stored,
through chat and through an import; a time sent from outside (recall's ``at``, a session's ``metadata.local_time``)
off the calendar memstack computes with is a 400 that names the field, never a 500.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack_testing.postgres import EmbeddedPostgres

MESSAGE = "I'm vegetarian and allergic to peanuts. My exam is in 99999999 days"


def _serve(config: Config) -> Iterator[httpx.Client]:
    async def key() -> str:
        async with AsyncMemstack(config) as ms:
            return (await ms.store.keys.create("acme"))[1]

    secret = asyncio.run(key())
    auth = {"Authorization": f"Bearer {secret}"}
    app = create_app(config, settings=ServerSettings(auth="keys"))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, headers=auth, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    yield from _serve(Config.resolve(home=tmp_path_factory.mktemp("dates"), embedder="hash:64"))


@pytest.fixture(scope="module")
def postgres_app(tmp_path_factory: pytest.TempPathFactory, postgres_server: EmbeddedPostgres) -> Iterator[httpx.Client]:
    url = postgres_server.create_database()
    home = tmp_path_factory.mktemp("dates-pg")
    yield from _serve(Config.resolve(home=home, database_url=url, embedder="hash:64"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def client(request: pytest.FixtureRequest) -> httpx.Client:
    result: httpx.Client = request.getfixturevalue("sqlite_server" if request.param == "sqlite" else "postgres_app")
    return result


def _memories(client: httpx.Client, user: str, *, wait_for: int = 0, timeout_s: float = 30.0) -> list[str]:
    """The user's memories, once there are at least ``wait_for`` (detection may finish after the reply)."""
    deadline = time.monotonic() + timeout_s
    while True:
        listed = client.get(f"/v1/users/{user}/memories")
        assert listed.status_code == 200, listed.text
        contents = [m["content"] for m in listed.json()["memories"]]
        if len(contents) >= wait_for or time.monotonic() > deadline:
            return contents
        time.sleep(0.1)


def _keeps_the_facts(contents: list[str]) -> None:
    said = " ".join(contents)
    assert "vegetarian" in said and "peanuts" in said, contents
    assert any("99999999 days" in c for c in contents), contents  # the phrase off the calendar, as written


def test_a_date_off_the_calendar_keeps_the_other_facts_of_a_chat_message(client: httpx.Client) -> None:
    reply = client.post("/v1/chat", json={"user_id": "vera", "message": MESSAGE})
    assert reply.status_code == 200, reply.text
    _keeps_the_facts(_memories(client, "vera", wait_for=2))


def test_a_date_off_the_calendar_keeps_the_other_facts_of_an_import(client: httpx.Client) -> None:
    messages = [
        {"role": "user", "content": MESSAGE, "at": "2026-11-20T09:00:00Z"},
        {"role": "assistant", "content": "Noted, and good luck with the exam."},
    ]
    imported = client.post("/v1/users/ivan/ingest", json={"session_id": "past", "messages": messages})
    assert imported.status_code == 200, imported.text
    _keeps_the_facts(_memories(client, "ivan"))
    late = [{**messages[0], "at": "9999-12-31T23:00:00-05:00"}, messages[1]]
    refused = client.post("/v1/users/ivan/ingest", json={"session_id": "later", "messages": late})
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["message"].startswith("message 0: 'at' must be a time between"), refused.text


def test_recall_at_a_time_off_the_calendar_is_a_400_naming_at(client: httpx.Client) -> None:
    for at in ("0001-01-03T00:00:00Z", "0099-12-31T23:59:59", "9999-12-30T12:00:00+00:00"):
        for query in ("what did I do last week?", "plans for next year?"):
            response = client.post("/v1/users/vera/recall", json={"query": query, "at": at})
            assert response.status_code == 400, (at, query, response.text)
            error = response.json()["error"]
            assert error["type"] == "InputError" and error["message"].startswith("at must be a time between"), error
    # inside the bounds, a question whose range would leave them is answered without the range
    for at, query in [("0100-01-03T00:00:00Z", "what did I do last week?"), ("9899-12-30T00:00:00Z", "next year?")]:
        response = client.post("/v1/users/vera/recall", json={"query": query, "at": at})
        assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "local_time", ["9999-12-31T23:00:00+00:00", "9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00", "0050-06-01"]
)
def test_a_local_time_off_the_calendar_is_a_400_naming_the_field(client: httpx.Client, local_time: str) -> None:
    metadata = {"local_time": local_time, "timezone": "Europe/Paris"}
    sent = [
        ("/v1/chat", {"user_id": "lena", "message": "what day is it?", "metadata": metadata}),
        ("/v1/chat", {"user_id": "lena", "message": "what day is it?", "metadata": metadata, "stream": True}),
        (
            "/v1/chat/completions",
            {"user": "lena", "messages": [{"role": "user", "content": "what day is it?"}], "metadata": metadata},
        ),
    ]
    for path, body in sent:
        response = client.post(path, json=body)
        assert response.status_code == 400, (path, response.text)
        error = response.json()["error"]
        assert error["type"] == "InputError", (path, error)
        assert error["message"].startswith("metadata.local_time must be a time between 0100-01-01 and 9899-12-31")
    assert client.get("/v1/users/lena/sessions").json()["sessions"] == []  # nothing was stored
