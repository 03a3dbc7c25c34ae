"""The mem0 drop-in (``memstack.compat.mem0``): mem0's calls and return shapes, on the embedded engine
(``Memory``) and on a real server through the client (``MemoryClient``); every test runs on both. The same calls
run against mem0 itself in ``scripts/mem0_compare.py`` (its output is in ``docs/adapters-mem0.md``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstack.compat.mem0 import AsyncMemory, Memory, MemoryClient
from memstack.config import Config
from memstack.errors import InputError, NotFound
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer

ITEM_KEYS = {"id", "memory", "hash", "metadata", "score", "created_at", "updated_at", "user_id"}
HISTORY_KEYS = {"id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted",
                "actor_id", "role"}  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app(
        Config.resolve(home=tmp_path_factory.mktemp("mem0-server"), embedder="hash:64"),
        settings=ServerSettings(auth="local"),
    )
    with BackgroundServer(app) as running:
        yield running.url


@pytest.fixture(params=["embedded", "client"])
def m(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory | MemoryClient]:
    if request.param == "embedded":
        made: Memory | MemoryClient = Memory(home=tmp_path, embedder="hash:64")
    else:
        made = MemoryClient(host=request.getfixturevalue("server"))
    with made:
        yield made


@pytest.fixture
def user(request: pytest.FixtureRequest) -> str:
    """A user id of this test alone (the server is shared by the module's tests)."""
    return re.sub(r"\W", "-", request.node.name)


def test_add_without_inference_stores_each_message_as_said(m: Memory | MemoryClient, user: str) -> None:
    messages = [
        {"role": "user", "content": "I love green tea"},
        {"role": "assistant", "content": "Noted, green tea it is", "name": "bot"},
        {"role": "system", "content": "not stored"},
    ]
    added = m.add(messages, user_id=user, metadata={"topic": "drinks", "user_id": "someone-else"}, infer=False)
    assert [(r["memory"], r["event"], r["role"], r["actor_id"]) for r in added["results"]] == [
        ("I love green tea", "ADD", "user", None),
        ("Noted, green tea it is", "ADD", "assistant", "bot"),
    ]
    got = m.get(added["results"][0]["id"])
    assert got is not None and set(got) == ITEM_KEYS | {"role"}
    assert got["memory"] == "I love green tea" and got["user_id"] == user  # the scope is set by user_id alone
    assert got["metadata"] == {"topic": "drinks"} and got["hash"] == "cc8be069bda4863a638d900f827235ef"  # md5
    again = m.add("I love green tea", user_id=user, infer=False)  # mem0 stores a repeat too
    assert again["results"][0]["id"] != added["results"][0]["id"]


def test_search_and_get_all_return_results_in_the_scope_given(m: Memory | MemoryClient, user: str) -> None:
    m.add("I love green tea", user_id=user, metadata={"topic": "drinks"}, infer=False)
    m.add("I live in Lisbon", user_id=user, agent_id="travel", infer=False)
    m.add("I love green tea", user_id=f"{user}-other", infer=False)
    found = m.search("green tea", user_id=user, limit=5)["results"]  # mem0 1.x's parameters
    assert found[0]["memory"] == "I love green tea" and all(r["user_id"] == user for r in found)
    assert isinstance(found[0]["score"], float)
    same = m.search("green tea", filters={"user_id": user}, top_k=5)["results"]  # mem0 2.x's
    assert [r["id"] for r in same] == [r["id"] for r in found]
    travel = m.search("Lisbon", filters={"user_id": user, "agent_id": "travel"})["results"]
    assert [(r["memory"], r["agent_id"]) for r in travel] == [("I live in Lisbon", "travel")]
    drinks = m.get_all(filters={"user_id": user, "topic": {"eq": "drinks"}})["results"]
    assert [r["memory"] for r in drinks] == ["I love green tea"] and "score" not in drinks[0]
    assert len(m.get_all(user_id=user, limit=1)["results"]) == 1
    assert m.search("tea", user_id=user, threshold=1.0)["results"] == []


def test_a_scope_without_a_user_is_kept_under_the_agent(m: Memory | MemoryClient, user: str) -> None:
    m.add("Answer in French", agent_id=f"{user}-agent", infer=False)
    mine = m.get_all(filters={"agent_id": f"{user}-agent"})["results"]
    assert [(r["memory"], r["agent_id"], "user_id" in r) for r in mine] == [
        ("Answer in French", f"{user}-agent", False)
    ]
    assert m.get(mine[0]["id"]) is not None


def test_update_merges_metadata_and_history_has_mem0s_rows(m: Memory | MemoryClient, user: str) -> None:
    first = m.add("I love green tea", user_id=user, metadata={"topic": "drinks"}, infer=False)["results"][0]["id"]
    assert m.update(first, "I love black tea") == {"message": "Memory updated successfully!"}
    m.update(first, metadata={"mood": "good", "user_id": "not-changed"})
    got = m.get(first)
    assert got is not None and got["memory"] == "I love black tea" and got["user_id"] == user
    assert got["metadata"] == {"topic": "drinks", "mood": "good"}
    history = m.history(first)
    assert all(set(row) == HISTORY_KEYS for row in history)
    assert [(r["event"], r["old_memory"], r["new_memory"]) for r in history[:2]] == [
        ("ADD", None, "I love green tea"),
        ("UPDATE", "I love green tea", "I love black tea"),
    ]
    assert {r["memory_id"] for r in history} == {first}


def test_delete_is_permanent_and_keeps_the_history(m: Memory | MemoryClient, user: str) -> None:
    kept = m.add("I am vegetarian", user_id=f"{user}-bob", infer=False)["results"][0]["id"]
    ids = [
        r["id"] for r in m.add([{"role": "user", "content": t} for t in "abc"], user_id=user, infer=False)["results"]
    ]
    assert m.delete(ids[0]) == {"message": "Memory deleted successfully!"}
    assert m.get(ids[0]) is None
    assert m.history(ids[0])[-1]["event"] == "DELETE" and m.history(ids[0])[-1]["is_deleted"] is True
    assert m.delete_all(user_id=user) == {"message": "Memories deleted successfully!"}
    assert m.get_all(filters={"user_id": user})["results"] == []
    assert m.get(kept) is not None  # another user's memories stay


def test_add_with_inference_runs_memstacks_capture(m: Memory | MemoryClient, user: str) -> None:
    said = [
        {"role": "user", "content": "I'm vegetarian and I live in Lisbon."},
        {"role": "assistant", "content": "Good to know!"},
    ]
    added = m.add(said, user_id=user, run_id="trip", metadata={"source": "chat"})["results"]
    assert added and all(r["event"] == "ADD" for r in added)
    stored = m.get_all(filters={"user_id": user, "run_id": "trip"})["results"]
    assert {r["id"] for r in stored} == {r["id"] for r in added}
    assert all(r["run_id"] == "trip" and r["metadata"] == {"source": "chat"} for r in stored)
    assert any("vegetarian" in r["memory"].lower() for r in stored)
    assert m.add(said, user_id=user, run_id="trip")["results"] == []  # held already: mem0 leaves NONE out too


def test_unknown_ids_and_unsupported_requests_say_what_to_do(m: Memory | MemoryClient, user: str) -> None:
    assert m.get("00000000-0000-0000-0000-000000000000") is None
    assert m.history("not-an-id") == []
    with pytest.raises(NotFound):
        m.delete("not-an-id")
    with pytest.raises(InputError, match="at least one of user_id"):
        m.search("tea")
    with pytest.raises(InputError, match="exact value"):
        m.search("tea", filters={"user_id": user, "topic": {"in": ["a", "b"]}})
    with pytest.raises(InputError, match="without whitespace"):
        m.add("x", user_id="two words", infer=False)
    with pytest.raises(InputError, match="delete_all"):
        m.reset()


def test_from_config_refuses_mem0s_provider_sections(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="vector_store"):
        Memory.from_config({"vector_store": {"provider": "qdrant", "config": {}}})
    with Memory.from_config({"home": str(tmp_path), "embedder": "hash:64"}) as m:
        assert m.add("I love tea", user_id="u", infer=False)["results"][0]["memory"] == "I love tea"


async def test_async_memory_has_the_same_methods(tmp_path: Path) -> None:
    async with AsyncMemory(home=tmp_path, embedder="hash:64") as m:
        added: dict[str, Any] = await m.add("I love tea", user_id="u", infer=False)
        assert (await m.search("tea", user_id="u"))["results"][0]["id"] == added["results"][0]["id"]
