"""``POST /v1/users/import`` (issue 27): a user's export document, exported, erased and imported back, exports the
same; importing it again changes nothing; a document of another tenant, one changed after the export and a body
over the server's limit (declared or streamed) are refused with nothing stored; mem0's memories and plain messages
come in through the same route (``?from=mem0``, ``?from=jsonl``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import fresh_user

DATA = Path(__file__).parents[1] / "imports" / "data"


def _export(client: httpx.Client, user: str) -> dict[str, object]:
    response = client.get(f"/v1/users/{user}/export")
    assert response.status_code == 200, response.text
    document: dict[str, object] = response.json()
    return document


def _same(document: dict[str, object], other: dict[str, object]) -> bool:
    return {**other, "exported_at": document["exported_at"]} == document


def test_export_erase_import_gives_the_same_document(
    acme: httpx.Client, globex: httpx.Client, request: pytest.FixtureRequest
) -> None:
    user = fresh_user(request)
    lyon = acme.post(f"/v1/users/{user}/memories", json={"content": "User lives in Lyon"}).json()
    acme.patch(f"/v1/users/{user}/memories/{lyon['id']}", json={"content": "User lives in Paris"})
    assert acme.post("/v1/chat", json={"user_id": user, "message": "I keep bees on my roof."}).status_code == 200
    text = acme.get(f"/v1/users/{user}/export").content
    document = json.loads(text)

    # another tenant cannot import it (its ids, its user): 409, and nothing is written there
    refused = globex.post("/v1/users/import", content=text, headers={"Content-Type": "application/json"})
    assert refused.status_code == 409 and refused.json()["error"]["type"] == "ImportConflict"
    assert _export(globex, user)["memories"] == []

    assert acme.delete(f"/v1/users/{user}").status_code == 200
    answer = acme.post("/v1/users/import", content=text, headers={"Content-Type": "application/json"})
    assert answer.status_code == 200, answer.text
    (report,) = answer.json()["users"]
    assert report["user_id"] == user and report["added"]["memories"] == 1 and not report["unchanged"]
    assert _same(document, _export(acme, user))
    history = acme.get(f"/v1/users/{user}/memories/{lyon['id']}/history").json()
    assert [e["action"] for e in history["events"]] == ["create", "update"]

    again = acme.post("/v1/users/import", content=text, headers={"Content-Type": "application/json"})
    assert again.status_code == 200 and again.json()["users"][0]["unchanged"] is True

    # changed after the export: 400, the stored user as it was
    changed = {**document, "user_id": user + "-copy"}
    tampered = acme.post("/v1/users/import", json=changed)
    assert tampered.status_code == 400 and "sha256" in tampered.json()["error"]["message"]
    assert _export(acme, user + "-copy")["memories"] == []


def test_a_body_over_the_limit_is_refused_before_it_is_read(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    """The server's body limit (64 kB here) holds for an import too, declared or streamed: a client sending far
    more (100 MB of JSONL, say) is answered 413 once the limit is passed, without the server reading the rest."""
    user = fresh_user(request)
    line = json.dumps({"user_id": user, "text": "I like tea.", "timestamp": "2024-01-01T00:00:00Z"})
    body = {"messages": [json.loads(line)] * 2000}  # ~170 kB
    declared = acme.post("/v1/users/import", params={"from": "jsonl"}, json=body)
    assert declared.status_code == 413

    def chunks() -> Iterator[bytes]:
        yield b'{"messages": ['
        for _ in range(100_000_000 // 1000):  # 100 MB, if it were all read
            yield (line + ",").encode() * 10

    streamed = acme.post(
        "/v1/users/import", params={"from": "jsonl"}, content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert acme.get(f"/v1/users/{user}/export").json()["sessions"] == []


def test_mem0_and_plain_messages(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    data = json.loads((DATA / "mem0-get-all.json").read_text())
    for item in data["results"]:
        item.pop("user_id")
    answer = acme.post("/v1/users/import", params={"from": "mem0", "user_id": user}, json=data)
    assert answer.status_code == 200, answer.text
    assert answer.json()["users"][0]["added"]["memories"] == 3
    listed = acme.get(f"/v1/users/{user}/memories").json()["memories"]
    assert {m["id"] for m in listed} == {item["id"] for item in data["results"]}

    messages = [{"user_id": user, "text": "My sister Lena lives in Ghent.", "timestamp": "2024-02-10T08:30:00Z"}]
    answer = acme.post("/v1/users/import", params={"from": "jsonl"}, json={"messages": messages})
    assert answer.status_code == 200, answer.text
    assert answer.json()["users"][0]["added"]["messages"] == 1
    bad = acme.post("/v1/users/import", params={"from": "jsonl"}, json={"messages": [{"user_id": user}]})
    assert bad.status_code == 400 and "line 1" in bad.json()["error"]["message"]
