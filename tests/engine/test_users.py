"""``export`` and ``erase`` of the engine, async and blocking: the same document and report through both APIs, and
a chat turn's background work that is still running when the user is erased does not bring them back."""

from __future__ import annotations

import json
from pathlib import Path

from memstack import Memstack
from memstack.embed.batching import BatchingEmbedder
from memstack.engine import AsyncMemstack
from memstack.guard import SemanticGuard
from memstack.types import UserRef


def test_the_blocking_api_exports_and_erases(tmp_path: Path) -> None:
    with Memstack(home=tmp_path, embedder="hash:64") as ms:
        ms.add("alice", "Prefers green tea")
        ms.add("bob", "Plays the oboe")
        document = ms.export("alice")
        assert [m["content"] for m in document["memories"]] == ["Prefers green tea"]
        report = ms.erase("alice")
        assert report.removed["memories"] == 1 and report.removed["memory_history"] == 1
        assert ms.list("alice", include_deleted=True) == [] and len(ms.list("bob")) == 1
        assert ms.export("alice")["memories"] == []


async def test_erasing_during_a_turns_background_work_leaves_nothing(tmp_path: Path) -> None:
    alice = UserRef("alice", tenant="acme")
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
        first = await ms.chat(alice, "Remember that I keep bees on my roof.")
        await ms.chat(alice, "I moved to Porto last week.", session_id=first.session_id)
        # no wait_idle: phase 2 and memory detection of the turns may still be running
        report = await ms.erase(alice)
        assert report.total > 0
        await ms.wait_idle()
        document = await ms.export(alice)
        assert [document[k] for k in ("memories", "sessions", "contexts", "jobs")] == [[], [], [], []], json.dumps(
            document
        )[:2000]
        assert await ms.recall(alice, "bees", k=5) == []


async def test_erasing_drops_what_this_process_keeps_of_every_users_texts(tmp_path: Path) -> None:
    """The vectors of texts embedded moments ago and the guard's verdicts are kept under (digests of) the texts
    themselves, every user's together: an erasure drops them all, so nothing the user wrote stays in the process."""
    alice = UserRef("alice", tenant="acme")
    async with AsyncMemstack(home=tmp_path, embedder="local:minilm") as ms:
        await ms.chat(alice, "Remember that I keep bees on the roof of my flat in Ghent.")
        await ms.wait_idle()
        embedder, guard = ms.embedder, ms._turns.guard if ms._turns is not None else None
        assert isinstance(embedder, BatchingEmbedder) and isinstance(guard, SemanticGuard)
        assert len(embedder.recent) > 0 and guard.cached > 0
        await ms.erase(alice)
        assert len(embedder.recent) == 0 and guard.cached == 0
