"""A turn embeds each text once: the memories it recalls come with their stored vectors (those the index held, on
SQLite; one read of them, on PostgreSQL), so the semantic guard reading them embeds none again (issue: a user's first
turn spent ~50 ms of its ~70 ms embedding the memories it had just found by their vectors)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.guard.semantic import SemanticGuard
from memstack.types import NewMemory, UserRef, Vector

from .conftest import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_guard_reads_recalled_memories_without_embedding_them(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"
    config = Config(home=tmp_path, embedder="local:minilm", database_url=url)
    async with AsyncMemstack(config) as ms:
        assert isinstance(ms._chat().guard, SemanticGuard)  # the default guard of local:minilm
        user = UserRef("ana")
        texts = [f"User keeps bees in hive number {i} and sells the honey on Saturdays" for i in range(30)]
        await ms.store.memories.add_many(user, [NewMemory(t) for t in texts], await ms.embedder.embed(texts))
        ms.embedder.forget_recent()  # stored long ago: nothing of them is in this process
        inner = ms.embedder.inner  # type: ignore[attr-defined]
        embedded: list[str] = []
        embed_sync = inner.embed_sync

        def counted(batch: Sequence[str]) -> Vector:
            embedded.extend(batch)
            out: Vector = embed_sync(batch)
            return out

        monkeypatch.setattr(inner, "embed_sync", counted)
        result = await ms.chat(user, "Which hives do I keep bees in, and when do I sell honey?")
        assert result.manifest is not None
        used = [e for e in result.manifest.entries if e.source.startswith("memory:mem")]
        assert len(used) >= 5  # the turn recalled and the guard read several memories
        assert not {t.lower() for t in texts} & {t.lower() for t in embedded}  # none embedded again
