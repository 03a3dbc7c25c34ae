"""What the capture pipeline tests share: real stores (SQLite, and PostgreSQL on the embedded server), the
LLM classifier over real HTTP against the scripted OpenAI-compatible server, scripted classifier replies, and an
embedder that counts its calls."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstack.capture.llm import LLMClassifier
from memstack.config import Config
from memstack.embed import Embedder
from memstack.prompts import get_prompt
from memstack.store import Store
from memstack.store import open_store as open_configured
from memstack.types import UserRef, Vector
from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer

AT = datetime(2024, 5, 9, 14, 0, tzinfo=UTC)  # a Thursday
MODEL = "classifier-mini"
ALICE = UserRef("alice")


def mem(content: str, category: str = "fact", confidence: float = 0.9, explicit: bool = False) -> dict[str, Any]:
    return {"content": content, "category": category, "confidence": confidence, "explicit": explicit}


def found(*memories: dict[str, Any], **options: Any) -> Reply:
    """The classifier's reply listing ``memories`` (none: nothing worth remembering)."""
    return Reply.json({"memories": list(memories)}, **options)


def classify_requests(server: ScriptedOpenAIServer) -> list[RecordedRequest]:
    """The classifier's requests, without the update judge's (the same model decides memory updates)."""
    judge = get_prompt("capture.update").template.splitlines()[0]
    return [r for r in server.chat_requests if judge not in (r.last_user_message or "")]


def llm_classifier(server: ScriptedOpenAIServer, **options: Any) -> LLMClassifier:
    return LLMClassifier(server.chat_model(MODEL), owns_model=True, **options)


BACKENDS = ("sqlite", pytest.param("postgres", marks=pytest.mark.postgres))

#: Runs a test once per backend (SQLite alone otherwise): for the tests where what the store does matters.
BOTH_BACKENDS = pytest.mark.parametrize("url", BACKENDS, indirect=True)


def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The database of this test: a file for ``sqlite``, a fresh database on the embedded server for ``postgres``."""
    if getattr(request, "param", "sqlite") == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'memstack.db'}"


async def open_store(url: str, embedder: Embedder) -> Store:
    return await open_configured(Config(database_url=url), dim=embedder.dim, embedder=embedder.name)


class CountingEmbedder:
    """The real embedder, counting the texts it embeds (a message with nothing to save must embed nothing)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.texts = 0
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> Vector:
        self.calls += 1
        self.texts += len(texts)
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        return None
