"""Memory management over HTTP: every endpoint of /v1/users/{user_id}/memories and the usage line."""

from __future__ import annotations

import httpx
import pytest

from .conftest import fresh_user


def _add(client: httpx.Client, user: str, content: str, **extra: object) -> dict[str, object]:
    response = client.post(f"/v1/users/{user}/memories", json={"content": content, **extra})
    assert response.status_code == 201, response.text
    body: dict[str, object] = response.json()
    assert (body.pop("action"), body.pop("reason")) == ("created", "")
    return body


def test_add_get_list_and_filters(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    tea = _add(acme, user, "User drinks green tea every morning", category="preference")
    exam = _add(acme, user, "User has a biology exam on Friday", category="schedule")
    assert tea["category"] == "preference" and tea["source"] == "manual" and tea["is_active"] is True

    got = acme.get(f"/v1/users/{user}/memories/{tea['id']}")
    assert got.status_code == 200 and got.json() == tea

    listed = acme.get(f"/v1/users/{user}/memories").json()["memories"]
    assert [m["id"] for m in listed] == [exam["id"], tea["id"]]  # newest first
    only = acme.get(f"/v1/users/{user}/memories", params={"category": "schedule"}).json()["memories"]
    assert [m["id"] for m in only] == [exam["id"]]
    by_text = acme.get(f"/v1/users/{user}/memories", params={"q": "green tea"}).json()["memories"]
    assert [m["id"] for m in by_text] == [tea["id"]]
    paged = acme.get(f"/v1/users/{user}/memories", params={"limit": 1, "offset": 1}).json()["memories"]
    assert [m["id"] for m in paged] == [tea["id"]]


def test_edit_forget_restore_delete_and_history(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    memory = _add(acme, user, "User lives in Lyon")
    url = f"/v1/users/{user}/memories/{memory['id']}"

    edited = acme.patch(url, json={"content": "User lives in Paris", "category": "fact"})
    assert edited.status_code == 200
    assert edited.json()["content"] == "User lives in Paris" and edited.json()["category"] == "fact"

    forgotten = acme.delete(url)  # no ?permanent: a soft delete by the user, restorable
    assert forgotten.status_code == 200
    assert forgotten.json()["permanent"] is False
    assert forgotten.json()["memory"]["is_active"] is False and forgotten.json()["memory"]["deleted_by"] == "user"
    assert acme.get(f"/v1/users/{user}/memories").json()["memories"] == []
    with_deleted = acme.get(f"/v1/users/{user}/memories", params={"include_deleted": "true"}).json()["memories"]
    assert [m["id"] for m in with_deleted] == [memory["id"]]

    restored = acme.post(f"{url}/restore")
    assert restored.status_code == 200 and restored.json()["is_active"] is True

    gone = acme.delete(url, params={"permanent": "true"})
    assert gone.status_code == 200 and gone.json() == {"id": memory["id"], "permanent": True, "memory": None}
    missing = acme.get(url)
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"

    history = acme.get(f"{url}/history")
    assert history.status_code == 200
    actions = [e["action"] for e in history.json()["events"]]
    assert actions == ["create", "update", "forget", "restore", "delete"]
    assert history.json()["events"][1]["before"]["content"] == "User lives in Lyon"


def test_search_ranks_by_meaning(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    for content in ("User is allergic to peanuts", "User plays the cello", "User works as a nurse in Leeds"):
        _add(acme, user, content)
    response = acme.post(f"/v1/users/{user}/memories/search", json={"query": "what music instrument?", "limit": 2})
    assert response.status_code == 200
    results = response.json()["results"]
    assert len(results) == 2
    assert results[0]["memory"]["content"] == "User plays the cello"
    assert results[0]["score"] >= results[1]["score"]
    # The same query again is answered from the embedding cache: same ranking, same scores.
    again = acme.post(f"/v1/users/{user}/memories/search", json={"query": "what music instrument?", "limit": 2})
    assert again.json() == response.json()


def test_usage_and_the_tier_limit(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    assert acme.get(f"/v1/users/{user}/usage").json() == {
        "user_id": user,
        "tier": "free",
        "active": 0,
        "limit": 50,
        "remaining": 50,
        "display": "0 / 50",
        "dropped": 0,
        "last_dropped_at": None,
        "models": [],  # no model call yet: nothing by role, and no cost
        "cost_usd": 0,
    }
    _add(acme, user, "User likes jazz", tier="tiny")
    second = _add(acme, user, "User likes blues", tier="tiny")
    full = acme.post(f"/v1/users/{user}/memories", json={"content": "User likes soul", "tier": "tiny"})
    assert full.status_code == 409
    error = full.json()["error"]
    assert error["type"] == "LimitReached" and "Upgrade" in error["upgrade_prompt"]
    assert acme.get(f"/v1/users/{user}/usage", params={"tier": "tiny"}).json()["display"] == "2 / 2"
    # A forgotten memory frees a slot; restoring it while full is refused the same way.
    acme.delete(f"/v1/users/{user}/memories/{second['id']}")
    _add(acme, user, "User likes soul", tier="tiny")
    refused = acme.post(f"/v1/users/{user}/memories/{second['id']}/restore", params={"tier": "tiny"})
    assert refused.status_code == 409
    premium = acme.get(f"/v1/users/{user}/usage", params={"tier": "premium"}).json()
    assert premium["limit"] is None and premium["display"] == "2 / unlimited"
    unknown = acme.get(f"/v1/users/{user}/usage", params={"tier": "platinum"})
    assert unknown.status_code == 400 and "platinum" in unknown.json()["error"]["message"]


def test_a_memory_already_held_is_answered_duplicate(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    """200 with "action": "duplicate" and the memory already held, even with the tier full; force=true stores a
    second copy (201). The OpenAPI document lists both answers and the force field."""
    user = fresh_user(request)
    jazz = _add(acme, user, "User likes jazz", tier="tiny")
    _add(acme, user, "User likes blues", tier="tiny")
    again = acme.post(f"/v1/users/{user}/memories", json={"content": "user likes JAZZ.", "tier": "tiny"})
    assert again.status_code == 200, again.text
    body = again.json()
    assert (body.pop("action"), body.pop("reason")) == ("duplicate", "the same text") and body == jazz
    assert acme.get(f"/v1/users/{user}/usage", params={"tier": "tiny"}).json()["display"] == "2 / 2"
    forced = acme.post(f"/v1/users/{user}/memories", json={"content": "User likes jazz", "force": True})
    assert forced.status_code == 201 and forced.json()["action"] == "created" and forced.json()["id"] != jazz["id"]
    operation = acme.get("/openapi.json").json()["paths"]["/v1/users/{user_id}/memories"]["post"]
    assert {"200", "201"} <= set(operation["responses"])
    assert "duplicate" in operation["responses"]["200"]["description"]
    schemas = acme.get("/openapi.json").json()["components"]["schemas"]
    assert "force" in schemas["MemoryCreate"]["properties"] and "action" in schemas["MemoryAddedOut"]["properties"]


def test_limit_is_the_count_and_k_its_deprecated_old_name(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    for content in ("User is allergic to peanuts", "User plays the cello", "User works as a nurse in Leeds"):
        _add(acme, user, content)
    search = f"/v1/users/{user}/memories/search"
    by_limit = acme.post(search, json={"query": "music", "limit": 1})
    by_k = acme.post(search, json={"query": "music", "k": 1})  # the old name, still understood
    assert by_limit.status_code == by_k.status_code == 200 and by_k.json() == by_limit.json()
    assert len(by_k.json()["results"]) == 1
    both = acme.post(search, json={"query": "music", "limit": 2, "k": 1})
    assert both.status_code == 400 and "pass limit" in both.text
    recall = f"/v1/users/{user}/recall"
    assert len(acme.post(recall, json={"query": "cello", "k": 1}).json()["results"]) == 1
    assert len(acme.post(recall, json={"query": "cello", "limit": 2}).json()["results"]) == 2
    schema = acme.get("/openapi.json").json()["components"]["schemas"]["SearchIn"]["properties"]
    assert schema["k"]["deprecated"] is True and "limit" in schema


def test_metadata_over_http(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    user = fresh_user(request)
    notes = _add(acme, user, "User writes the release notes", metadata={"project": "apollo"})
    plain = _add(acme, user, "User drinks green tea")
    assert notes["metadata"] == {"project": "apollo"} and plain["metadata"] == {}
    listed = acme.get(f"/v1/users/{user}/memories", params={"metadata": '{"project": "apollo"}'})
    assert [m["id"] for m in listed.json()["memories"]] == [notes["id"]]
    for bad in ("apollo", "[1]", "{"):
        refused = acme.get(f"/v1/users/{user}/memories", params={"metadata": bad})
        assert refused.status_code == 400 and "JSON object" in refused.json()["error"]["message"]
    search = f"/v1/users/{user}/memories/search"
    found = acme.post(search, json={"query": "release notes", "metadata": {"project": "gemini"}}).json()["results"]
    assert found == []
    assert len(acme.post(search, json={"query": "green tea", "min_score": -1}).json()["results"]) == 2
    assert acme.post(search, json={"query": "green tea", "min_score": 1}).json()["results"] == []
    assert acme.post(search, json={"query": "green tea", "min_score": 1.5}).status_code == 400
    patched = acme.patch(f"/v1/users/{user}/memories/{notes['id']}", json={"metadata": {"project": "gemini"}})
    assert patched.status_code == 200 and patched.json()["metadata"] == {"project": "gemini"}
    too_big = acme.post(f"/v1/users/{user}/memories", json={"content": "User x", "metadata": {"a": "x" * 5000}})
    assert too_big.status_code == 400 and "limit is 4000" in too_big.json()["error"]["message"]


def test_delete_is_idempotent(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    """A second DELETE answers as the first (it was a 400 for a forgotten memory) and writes nothing more; a second
    permanent delete too; an id the user never had stays a 404."""
    user = fresh_user(request)
    made = acme.post(f"/v1/users/{user}/memories", json={"content": "User collects stamps"}).json()
    url = f"/v1/users/{user}/memories/{made['id']}"
    first, again = acme.delete(url), acme.delete(url)
    assert first.status_code == again.status_code == 200, again.text
    assert again.json() == first.json() and again.json()["memory"]["is_active"] is False
    assert [e["action"] for e in acme.get(f"{url}/history").json()["events"]] == ["create", "forget"]

    gone, gone_again = acme.delete(url, params={"permanent": "true"}), acme.delete(url, params={"permanent": "true"})
    assert gone.status_code == gone_again.status_code == 200, gone_again.text
    assert gone_again.json() == gone.json() == {"id": made["id"], "permanent": True, "memory": None}
    assert [e["action"] for e in acme.get(f"{url}/history").json()["events"]] == ["create", "forget", "delete"]
    forget_after = acme.delete(url)  # forgetting what is deleted for good: there is nothing to forget
    assert forget_after.status_code == 404
    never = acme.delete(f"/v1/users/{user}/memories/mem_never_there", params={"permanent": "true"})
    assert never.status_code == 404 and never.json()["error"]["type"] == "NotFound"


def test_validity_and_as_of_over_http(acme: httpx.Client, request: pytest.FixtureRequest) -> None:
    """valid_from/valid_to in and out; as_of as a query parameter (list) and in the body (search, recall): a date or
    a time without a zone is UTC; a time out of range or not a time is a 4xx naming as_of; a backwards interval 400."""
    user = fresh_user(request)
    paris = _add(acme, user, "User lives in Paris", valid_from="2015-01-01", valid_to="2022-03-01T00:00:00Z")
    berlin = _add(acme, user, "User lives in Berlin", valid_from="2022-03-01T00:00:00+00:00")
    assert (paris["is_active"], paris["valid_to"], berlin["valid_to"]) == (False, "2022-03-01T00:00:00+00:00", None)
    memories = f"/v1/users/{user}/memories"
    assert [m["id"] for m in acme.get(memories).json()["memories"]] == [berlin["id"]]
    for as_of in ("2019-06-01", "2019-06-01T12:00:00", "2019-06-01T14:00:00+02:00"):
        listed = acme.get(memories, params={"as_of": as_of}).json()["memories"]
        assert [m["id"] for m in listed] == [paris["id"]], as_of
    hits = acme.post(f"{memories}/search", json={"query": "where does the user live", "as_of": "2019-06-01"})
    assert [h["memory"]["id"] for h in hits.json()["results"]] == [paris["id"]]
    recalled = acme.post(f"/v1/users/{user}/recall", json={"query": "user lives", "as_of": "2019-06-01"})
    assert [i["id"] for i in recalled.json()["results"] if i["kind"] == "memory"] == [paris["id"]]
    far = acme.get(memories, params={"as_of": "9999-06-01"})
    assert far.status_code == 400 and "as_of must be a time between" in far.json()["error"]["message"]
    garbage = acme.get(memories, params={"as_of": "last tuesday"})
    assert 400 <= garbage.status_code < 500 and "as_of" in garbage.text
    backwards = acme.post(memories, json={"content": "User lives in Rome", "valid_from": "2024-01-01",
                                          "valid_to": "2023-01-01"})  # fmt: skip
    assert backwards.status_code == 400 and "valid_to" in backwards.json()["error"]["message"]
