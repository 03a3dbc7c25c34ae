"""The engine's namespaces, the door every interface goes through (``tests/test_engine_door.py``): sessions read back,
agents stored per tenant, contexts, API keys, a user's records and erasure fence, on SQLite and PostgreSQL, async
and blocking. Each call is scoped as the engine's other methods are: another user's or tenant's data is not found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstack import Memstack
from memstack.context import Agent, CoreSpec
from memstack.engine import AsyncMemstack
from memstack.errors import InputError, NotFound, UserErased
from memstack.store.fence import fenced
from memstack.types import ArchiveHit, FragmentStatus, SessionSummary, TurnStatus, UserRef

from .conftest import BACKENDS

CODE = "Here is my script:\n```python\ndef shout(text):\n    return text.upper()\n```\nCan you make it louder?"


def _engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncMemstack:
    backend = request.node.callspec.params["backend"]
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    return AsyncMemstack(home=tmp_path, embedder="hash:64", database_url=url)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_sessions_are_read_back_through_the_engine(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    alice = UserRef("alice", "acme")
    async with _engine(request, tmp_path) as ms:
        first = await ms.chat(alice, "I am planning a trip to Kyoto in October.")
        await ms.chat(alice, CODE, session_id=first.session_id)
        other = await ms.chat("alice", "Hello from the default tenant.")
        assert await ms.wait_idle()

        listed = await ms.sessions.list("alice", tenant="acme")
        assert [s.session_id for s in listed] == [first.session_id] and isinstance(listed[0], SessionSummary)
        assert listed[0].turn_count == 2 and listed[0].tenant == "acme"
        assert [s.session_id for s in await ms.sessions.list("alice")] == [other.session_id]
        assert await ms.sessions.list(alice, limit=1, offset=1) == []

        state = await ms.sessions.get(alice, first.session_id)
        assert state.turn_count == 2 and [t.turn for t in state.turn_log] == [1, 2]
        assert [(m.role, m.turn) for m in state.raw_window] == [("user", 1), ("user", 2)]  # offline: no reply kept
        assert [m.turn for m in (await ms.sessions.get(alice, first.session_id, window_turns=1)).raw_window] == [2]

        turns = await ms.sessions.turns(alice, first.session_id)
        assert [t.turn for t in turns] == [1, 2] and all(t.status is TurnStatus.SUMMARIZED for t in turns)
        assert [t.turn for t in await ms.sessions.turns(alice, first.session_id, limit=1, offset=1)] == [2]
        artifacts = await ms.sessions.artifacts(alice, first.session_id)
        assert [(a.turn, a.language) for a in artifacts if a.role == "user"] == [(2, "python")]
        assert await ms.sessions.artifacts(alice, first.session_id, turn=1) == []
        assert await ms.sessions.snapshots(alice, first.session_id) == []  # taken at consolidation only

        hits = await ms.sessions.search(alice, "Kyoto trip", limit=3)
        assert [h.turn_id for h in hits] == [f"{first.session_id}:1"] and isinstance(hits[0], ArchiveHit)
        assert await ms.sessions.search("alice", "Kyoto") == []  # the default tenant's alice said nothing of it

        for call in (
            ms.sessions.get("alice", first.session_id),  # another tenant's alice
            ms.sessions.get(UserRef("bob", "acme"), first.session_id),
            ms.sessions.get(alice, "ses_missing"),
        ):
            with pytest.raises(NotFound):
                await call
        with pytest.raises(InputError):
            await ms.sessions.get(alice, "bad\x00id")
        with pytest.raises(InputError, match="tenant"):
            await ms.sessions.list(alice, tenant="globex")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_contexts_are_found_by_id_or_as_a_users_latest(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    alice = UserRef("alice", "acme")
    async with _engine(request, tmp_path) as ms:
        one = await ms.chat(alice, "I keep bees on my roof.")
        two = await ms.chat(alice, "How are the bees?", session_id=one.session_id)
        elsewhere = await ms.chat(alice, "A new conversation.", new_session=True)
        await ms.chat(alice, "Nothing kept.", temporary=True)

        manifest = await ms.contexts.get(one.context_id, tenant="acme")
        assert manifest.context_id == one.context_id and manifest.count(FragmentStatus.KEPT) > 0
        assert await ms.contexts.get(one.context_id, user_id=alice) == manifest
        assert await ms.contexts.get(one.context_id, user_id="alice", tenant="acme") == manifest
        for call in (
            ms.contexts.get(one.context_id),  # tenant default
            ms.contexts.get(one.context_id, user_id=UserRef("bob", "acme")),
        ):
            with pytest.raises(NotFound):
                await call

        recent = await ms.contexts.recent(alice)
        assert [m.context_id for m in recent] == [elsewhere.context_id, two.context_id, one.context_id]
        in_session = await ms.contexts.recent(alice, session_id=one.session_id, limit=1)
        assert [m.context_id for m in in_session] == [two.context_id]
        assert await ms.contexts.recent("alice") == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_agents_are_validated_and_stored_per_tenant(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    tutor = {"core": {"identity": "You are a patient maths tutor."}, "characteristics": {"tone": "encouraging"}}
    async with _engine(request, tmp_path) as ms:
        builtin = await ms.agents.get("default")
        assert builtin.name == "default" and builtin.definition["core"]["identity"]
        shipped = await ms.agents.load("default")  # the built-in agent itself
        assert ms.agents.parse("default", builtin.definition).fingerprint == shipped.fingerprint  # a PUT takes it
        assert await ms.agents.list() == []

        record = await ms.agents.put("tutor", tutor, tenant="acme")
        assert (record.tenant, record.name, record.definition["name"]) == ("acme", "tutor", "tutor")
        assert [r.name for r in await ms.agents.list(tenant="acme")] == ["tutor"]
        assert await ms.agents.list() == []  # another tenant's
        assert (await ms.agents.get("tutor", tenant="acme")).definition == record.definition
        agent = await ms.agents.load("tutor", tenant="acme")
        assert agent.name == "tutor" and agent.core.identity == "You are a patient maths tutor."
        reply = await ms.chat(UserRef("alice", "acme"), "Help me with fractions", agent=agent)
        assert (await ms.contexts.get(reply.context_id, tenant="acme")).fingerprint == agent.fingerprint

        for bad, error in (
            ({"characteristics": {"tone": "dry"}}, "core"),  # no core
            ({**tutor, "name": "other"}, "make them match"),
            ({**tutor, "colour": "blue"}, "colour"),  # strict: unknown fields are refused
        ):
            with pytest.raises(InputError, match=error):
                await ms.agents.put("tutor", bad, tenant="acme")
        with pytest.raises(InputError, match="agent name"):
            await ms.agents.put("../etc", tutor)
        assert (await ms.agents.get("tutor", tenant="acme")).definition == record.definition  # left as it was

        await ms.agents.delete("tutor", tenant="acme")
        for call in (ms.agents.get("tutor", tenant="acme"), ms.agents.load("tutor", tenant="acme")):
            with pytest.raises(NotFound):
                await call
        with pytest.raises(NotFound):
            await ms.agents.delete("tutor", tenant="acme")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_keys_are_created_checked_and_revoked(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with _engine(request, tmp_path) as ms:
        key, secret = await ms.keys.create("acme", name="web backend")
        assert (key.tenant, key.name, key.active) == ("acme", "web backend", True) and secret.startswith(key.prefix)
        assert await ms.keys.authenticate(secret) == key
        assert await ms.keys.authenticate(secret + "x") is None
        assert [k.id for k in await ms.keys.list()] == [key.id] and await ms.keys.list("globex") == []
        revoked = await ms.keys.revoke(key.id)
        assert revoked.revoked_at is not None and await ms.keys.authenticate(secret) is None
        assert await ms.keys.list("acme") == [] and [k.id for k in await ms.keys.list(include_revoked=True)] == [key.id]
        with pytest.raises(NotFound):
            await ms.keys.revoke("key_missing")
        with pytest.raises(InputError):
            await ms.keys.create("")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_users_records_and_the_fence_of_work_for_them(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    alice = UserRef("alice", "acme")
    async with _engine(request, tmp_path) as ms:
        await ms.add(alice, "User keeps bees")
        reply = await ms.chat(alice, "The bees swarmed today.")
        assert await ms.wait_idle()
        kinds = [record.kind async for record in ms.users.records("alice", tenant="acme")]
        assert kinds.count("memory") >= 1 and kinds.count("session") == 1 and kinds.count("context") == 1
        assert kinds == sorted(kinds, key=["memory", "session", "context", "job", "dropped"].index)
        assert [r async for r in ms.users.records("alice")] == []  # the default tenant's alice

        fence = await ms.users.fence(alice)  # work for alice begins
        await ms.erase(alice)  # and alice is erased meanwhile
        with fenced(fence), pytest.raises(UserErased):
            await ms.ingest(alice, reply.session_id, [{"role": "user", "content": "More about the bees."}])
        assert [r async for r in ms.users.records(alice)] == []


async def test_nearest_is_search_for_a_query_already_embedded(tmp_path: Path) -> None:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
        tea = await ms.add("alice", "User prefers green tea", category="preference")
        await ms.add("alice", "User studies physics", category="fact")
        [vector] = await ms.embedder.embed(["green tea"])
        searched = await ms.search("alice", "green tea", limit=2)
        assert await ms.nearest("alice", vector, limit=2) == searched and searched[0].memory.id == tea.id
        assert [h.memory.id for h in await ms.nearest("alice", vector, category="fact")] != [tea.id]
        assert await ms.nearest("bob", vector) == []


def test_the_blocking_api_has_the_same_namespaces(tmp_path: Path) -> None:
    with Memstack(home=tmp_path, embedder="hash:64") as ms:
        reply = ms.chat("alice", "I am learning the cello.")
        assert ms.wait_idle()
        assert [s.session_id for s in ms.sessions.list("alice")] == [reply.session_id]
        assert ms.sessions.get("alice", reply.session_id).turn_count == 1
        assert [t.turn for t in ms.sessions.turns("alice", reply.session_id)] == [1]
        assert ms.sessions.search("alice", "cello")[0].turn_id == f"{reply.session_id}:1"
        assert ms.contexts.get(reply.context_id, user_id="alice").context_id == reply.context_id
        assert [m.context_id for m in ms.contexts.recent("alice")] == [reply.context_id]
        ms.agents.put("tutor", {"core": "You teach music."})
        assert [r.name for r in ms.agents.list()] == ["tutor"] and ms.agents.load("tutor").name == "tutor"
        current = ms.sessions.current("alice")
        assert current is not None and current.session_id == reply.session_id
        key, secret = ms.keys.create("acme")
        assert ms.keys.authenticate(secret) == key and ms.keys.revoke(key.id).revoked_at is not None


async def test_the_current_session_is_the_latest_of_that_agent_unless_it_ended(tmp_path: Path) -> None:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
        assert await ms.sessions.current("alice") is None
        tutor = ms.register_agent(Agent(name="tutor", core=CoreSpec("You teach music.")))
        plain = await ms.chat("alice", "I am learning the cello.")
        lesson = await ms.chat("alice", "Which scale first?", agent="tutor")
        assert lesson.session_id != plain.session_id  # a session belongs to one agent: the tutor's is its own
        assert (await ms.chat("alice", "And then?", agent=tutor)).session_id == lesson.session_id
        assert (await ms.chat("alice", "Thanks!")).session_id == plain.session_id  # the default agent's, continued
        current = await ms.sessions.current("alice", agent="tutor")
        assert current is not None and (current.session_id, current.turn_count) == (lesson.session_id, 2)
        assert (await ms.sessions.current("alice")).session_id == plain.session_id  # type: ignore[union-attr]
        await ms.end_session("alice", lesson.session_id)
        assert await ms.sessions.current("alice", agent="tutor") is None
        again = await ms.chat("alice", "New lesson please", agent="tutor")
        assert again.session_id not in (lesson.session_id, plain.session_id) and again.turn == 1
        assert await ms.sessions.current("bob") is None and await ms.sessions.current("alice", tenant="acme") is None
