"""A user as a whole over HTTP (issue 17): ``GET /v1/users/{user_id}/export`` streams the export document and
``DELETE /v1/users/{user_id}`` erases the user; afterwards a running server answers for them as for a user it has
never seen, its caches included (the same search, list, session, context and usage calls that were answered from
them before), while another user of the tenant and the same user id in another tenant are untouched."""

from __future__ import annotations

import json

import httpx
import pytest

from memstack.users import EXPORT_FORMAT, EXPORT_VERSION

from .conftest import fresh_user


def _chat(client: httpx.Client, user: str, message: str, session_id: str | None = None) -> dict[str, object]:
    body: dict[str, object] = {"user_id": user, "message": message}
    if session_id is not None:
        body["session_id"] = session_id
    response = client.post("/v1/chat", json=body)
    assert response.status_code == 200, response.text
    out: dict[str, object] = response.json()
    return out


def _populate(client: httpx.Client, user: str) -> dict[str, object]:
    tea = client.post(f"/v1/users/{user}/memories", json={"content": "User drinks green tea every morning"}).json()
    lyon = client.post(f"/v1/users/{user}/memories", json={"content": "User lives in Lyon"}).json()
    client.patch(f"/v1/users/{user}/memories/{lyon['id']}", json={"content": "User lives in Paris"})
    client.delete(f"/v1/users/{user}/memories/{tea['id']}")
    first = _chat(client, user, "I live in Porto now and I keep bees.")
    _chat(client, user, "What should I see there?", session_id=str(first["session_id"]))
    # the searches fill the server's caches (the store's vectors, the memory texts, recall's archive index)
    assert client.post(f"/v1/users/{user}/memories/search", json={"query": "Paris", "k": 5}).status_code == 200
    return {"memory": lyon["id"], "session": first["session_id"], "context": first["context_id"]}


def _view(client: httpx.Client, user: str, ids: dict[str, object]) -> dict[str, object]:
    """What the API answers about a user."""
    search = client.post(f"/v1/users/{user}/memories/search", json={"query": "Paris", "k": 5}).json()
    return {
        "memories": client.get(f"/v1/users/{user}/memories", params={"include_deleted": True}).json()["memories"],
        "search": search["results"],
        "memory": client.get(f"/v1/users/{user}/memories/{ids['memory']}").status_code,
        "history": client.get(f"/v1/users/{user}/memories/{ids['memory']}/history").status_code,
        "session": client.get(f"/v1/sessions/{ids['session']}", params={"user_id": user}).status_code,
        "context": client.get(f"/v1/contexts/{ids['context']}", params={"user_id": user}).status_code,
        "contexts": client.get(f"/ui/api/users/{user}/contexts").json()["contexts"],
        "usage": client.get(f"/v1/users/{user}/usage").json()["active"],
    }


def test_export_then_erase_leaves_a_user_never_seen(
    acme: httpx.Client, globex: httpx.Client, request: pytest.FixtureRequest
) -> None:
    user, other = fresh_user(request), fresh_user(request) + "-other"
    ids = _populate(acme, user)
    other_ids = _populate(acme, other)
    elsewhere_ids = _populate(globex, user)  # the same id in another tenant: another user
    other_before = _view(acme, other, other_ids)
    elsewhere_before = _view(globex, user, elsewhere_ids)

    with acme.stream("GET", f"/v1/users/{user}/export") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/json")
        assert "attachment" in response.headers["content-disposition"]
        pieces = [chunk for chunk in response.iter_bytes()]
    document = json.loads(b"".join(pieces))
    assert (document["format"], document["version"], document["tenant"]) == (EXPORT_FORMAT, EXPORT_VERSION, "acme")
    assert {m["id"] for m in document["memories"]} >= {ids["memory"]}
    paris = next(m for m in document["memories"] if m["id"] == ids["memory"])
    # added as Lyon, edited to Paris, then superseded by the chat's news of the move to Porto
    assert [e["action"] for e in paris["history"]] == ["create", "update", "supersede"]
    assert any(m["is_active"] is False for m in document["memories"])  # the forgotten one
    [session] = [s for s in document["sessions"] if s["id"] == ids["session"]]
    assert [t["user_text"] for t in session["turns"]][:1] == ["I live in Porto now and I keep bees."]
    assert {c["context_id"] for c in document["contexts"]} >= {ids["context"]}
    assert "other" not in json.dumps(document["memories"])

    erased = acme.delete(f"/v1/users/{user}")
    assert erased.status_code == 200, erased.text
    report = erased.json()
    assert (report["tenant"], report["user_id"]) == ("acme", user)
    assert report["removed"]["memories"] == sum(m["stored"] for m in document["memories"]) >= 2
    assert report["removed"]["sessions"] == len(document["sessions"]) == 1
    assert report["removed"]["memory_history"] >= 4 and report["total"] == sum(report["removed"].values())

    never_seen = fresh_user(request) + "-never"
    assert _view(acme, user, ids) == _view(acme, never_seen, ids)
    assert _view(acme, user, ids)["memory"] == 404 and _view(acme, user, ids)["usage"] == 0
    assert _view(acme, other, other_ids) == other_before
    assert _view(globex, user, elsewhere_ids) == elsewhere_before
    empty = acme.get(f"/v1/users/{user}/export").json()
    assert [empty[k] for k in ("memories", "sessions", "contexts", "jobs")] == [[], [], [], []]
    assert acme.delete(f"/v1/users/{user}").json()["total"] == 0  # again: nothing left, not an error


def test_bad_user_ids_are_refused(acme: httpx.Client) -> None:
    assert acme.delete("/v1/users/a%00b").status_code == 400
    assert acme.get("/v1/users/a%00b/export").status_code == 400
    assert acme.delete("/v1/users/" + "x" * 201).status_code == 400


def test_a_tenants_users_are_listed(acme: httpx.Client, globex: httpx.Client, request: pytest.FixtureRequest) -> None:
    """``GET /v1/users``: the tenant's users a page at a time (``after`` the last id, ``next`` for the next page),
    never another tenant's."""
    base = fresh_user(request)
    users = [f"{base}-{i}" for i in range(3)]
    for user in users:
        assert acme.post(f"/v1/users/{user}/memories", json={"content": f"{user} keeps bees"}).status_code == 201
    _chat(acme, users[1], "Hello there")

    seen: list[dict[str, object]] = []
    page = acme.get("/v1/users", params={"limit": 2}).json()
    assert len(page["users"]) == 2 and page["next"] == page["users"][-1]["user_id"]
    while True:
        seen.extend(page["users"])
        if page["next"] is None:
            break
        page = acme.get("/v1/users", params={"limit": 2, "after": page["next"]}).json()
    ids = [str(u["user_id"]) for u in seen]
    assert ids == sorted(ids, key=lambda i: i.encode()) and len(set(ids)) == len(ids)
    mine = {u["user_id"]: u for u in seen if str(u["user_id"]).startswith(base)}
    assert list(mine) == users
    assert mine[users[1]]["sessions"] == 1 and mine[users[0]]["sessions"] == 0
    assert all(u["memories"] >= 1 and u["last_active"] for u in mine.values())
    assert not [u for u in globex.get("/v1/users", params={"limit": 1000}).json()["users"] if u["user_id"] in mine]
    assert acme.get("/v1/users", params={"limit": 0}).status_code == 400
