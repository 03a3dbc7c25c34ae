"""Bad input gets a 4xx with a JSON error body saying what to send instead; never a 5xx."""

from __future__ import annotations

import httpx
import pytest

from .conftest import Running


def _error(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error: dict[str, str] = response.json()["error"]
    assert error["type"] and error["message"]
    return error


def test_malformed_json_is_400(acme: httpx.Client) -> None:
    for path in ("/v1/users/alice/memories", "/v1/users/alice/memories/search"):
        response = acme.post(path, content=b'{"content": "User likes', headers={"content-type": "application/json"})
        assert "not valid JSON" in _error(response, 400)["message"]
    agent = acme.put("/v1/agents/x", content=b"{nope", headers={"content-type": "application/json"})
    assert "not valid JSON" in _error(agent, 400)["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": "User likes tea", "category": "hobbies"}, "category"),  # unknown category
        ({"content": 42}, "content"),  # wrong type
        ({"content": ""}, "content"),  # empty
        ({"content": "x" * 2001}, "content"),  # longer than a memory may be
        ({"content": "User likes tea", "colour": "red"}, "colour"),  # unknown field
        ({}, "content"),  # missing
        ([1, 2], "body"),  # not an object
    ],
)
def test_invalid_memories_are_400_naming_the_field(acme: httpx.Client, body: object, field: str) -> None:
    error = _error(acme.post("/v1/users/alice/memories", json=body), 400)
    assert field in error["message"]


@pytest.mark.parametrize(
    "body",
    [{"query": ""}, {"query": "tea", "k": 0}, {"query": "tea", "k": 10_000}, {"query": "tea", "k": "ten"}, {"k": 3}],
)
def test_invalid_searches_are_400(acme: httpx.Client, body: object) -> None:
    _error(acme.post("/v1/users/alice/memories/search", json=body), 400)


def test_blank_query_and_empty_patch_are_400(acme: httpx.Client) -> None:
    assert "empty" in _error(acme.post("/v1/users/alice/memories/search", json={"query": "   "}), 400)["message"]
    memory = acme.post("/v1/users/alice/memories", json={"content": "User collects stamps"}).json()
    assert (
        "nothing to change" in _error(acme.patch(f"/v1/users/alice/memories/{memory['id']}", json={}), 400)["message"]
    )


def test_bad_query_parameters(acme: httpx.Client) -> None:
    _error(acme.get("/v1/users/alice/memories", params={"category": "hobbies"}), 400)
    _error(acme.get("/v1/users/alice/memories", params={"limit": "-1"}), 400)
    _error(acme.get("/v1/users/alice/memories", params={"include_deleted": "perhaps"}), 400)
    _error(acme.get("/v1/users/alice/memories", params={"q": ""}), 400)


def test_odd_user_ids(acme: httpx.Client) -> None:
    _error(acme.get("/v1/users/" + "u" * 201 + "/memories"), 400)
    _error(acme.get("/v1/users/bell%07/memories"), 400)  # not printable
    ok = acme.get("/v1/users/%C3%A9lo%C3%AFse%20O'Neil/memories")  # any printable text is a valid id
    assert ok.status_code == 200


def test_oversized_bodies_are_413(running: Running, acme: httpx.Client) -> None:
    big = b'{"content": "' + b"x" * 70_000 + b'"}'  # the test server accepts 64 KB
    _error(acme.post("/v1/users/alice/memories", content=big, headers={"content-type": "application/json"}), 413)

    def chunks():  # type: ignore[no-untyped-def]
        yield b'{"content": "'
        for _ in range(80):
            yield b"x" * 1000
        yield b'"}'

    streamed = acme.post("/v1/users/alice/memories", content=chunks(), headers={"content-type": "application/json"})
    _error(streamed, 413)


def test_unknown_routes_and_methods_are_json(acme: httpx.Client) -> None:
    assert _error(acme.get("/v1/nothing-here"), 404)["type"] == "NotFound"
    assert _error(acme.put("/v1/users/alice/memories"), 405)["type"] == "MethodNotAllowed"


def test_agent_definitions_are_validated(acme: httpx.Client) -> None:
    assert "core" in _error(acme.put("/v1/agents/empty", json={"name": "empty"}), 400)["message"]
    assert "core.identity" in _error(acme.put("/v1/agents/bad", json={"core": {"identity": ["a"]}}), 400)["message"]
    assert "match" in _error(acme.put("/v1/agents/one", json={"name": "two", "core": "x"}), 400)["message"]
    assert _error(acme.put("/v1/agents/x", json={"core": "You help.", "budget_tokens": -5}), 400)
    assert _error(acme.put("/v1/agents/x", json={"core": "You help.", "surprise": True}), 400)
    assert _error(acme.put("/v1/agents/x", json=["core"]), 400)
    _error(acme.put("/v1/agents/bad%20name", json={"core": "You help."}), 400)
    bomb = "a: &a [x, x]\nb: &b [*a, *a]\ncore: *b\n"
    yaml_bomb = acme.put("/v1/agents/x", content=bomb.encode(), headers={"content-type": "application/yaml"})
    assert "alias" in _error(yaml_bomb, 400)["message"]
    assert _error(acme.get("/v1/agents/nobody"), 404)["type"] == "NotFound"


def test_agents_round_trip_as_json_and_yaml(acme: httpx.Client) -> None:
    yaml_text = """
core:
  identity: You are a patient maths tutor.
  hard_constraints: [Never give the final answer before the student tries.]
characteristics: {tone: encouraging}
budget_tokens: 8000
"""
    put = acme.put("/v1/agents/tutor", content=yaml_text.encode(), headers={"content-type": "application/yaml"})
    assert put.status_code == 200, put.text
    stored = acme.get("/v1/agents/tutor").json()
    assert stored["definition"]["core"]["identity"] == "You are a patient maths tutor."
    assert stored["fingerprint"] == put.json()["fingerprint"] and len(stored["fingerprint"]) == 64
    changed = acme.put("/v1/agents/tutor", json={**stored["definition"], "characteristics": {"tone": "dry"}}).json()
    assert changed["fingerprint"] != stored["fingerprint"] and changed["created_at"] == stored["created_at"]
    builtin = acme.get("/v1/agents/default").json()
    assert builtin["name"] == "default" and builtin["definition"]["core"]["identity"]
    assert acme.delete("/v1/agents/tutor").status_code == 204
    assert acme.get("/v1/agents/tutor").status_code == 404
