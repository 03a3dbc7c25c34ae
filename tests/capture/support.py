"""Shared helpers of the capture pipeline tests: a real SQLite store, the LLM classifier over real HTTP against the
scripted OpenAI-compatible server, and scripted classifier replies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstack.capture.llm import LLMClassifier
from memstack.embed import Embedder
from memstack.store.sqlite import SQLiteStore
from memstack.testing.openai_server import Reply, ScriptedOpenAIServer
from memstack.types import UserRef

AT = datetime(2024, 5, 9, 14, 0, tzinfo=UTC)  # a Thursday
MODEL = "classifier-mini"
ALICE = UserRef("alice")


def mem(content: str, category: str = "fact", confidence: float = 0.9, explicit: bool = False) -> dict[str, Any]:
    return {"content": content, "category": category, "confidence": confidence, "explicit": explicit}


def found(*memories: dict[str, Any], **options: Any) -> Reply:
    """The classifier's reply listing ``memories`` (none: nothing worth remembering)."""
    return Reply.json({"memories": list(memories)}, **options)


def llm_classifier(server: ScriptedOpenAIServer, **options: Any) -> LLMClassifier:
    return LLMClassifier(server.chat_model(MODEL), owns_model=True, **options)


async def open_store(path: Path, embedder: Embedder) -> SQLiteStore:
    return await SQLiteStore.open(path / "memstack.db", dim=embedder.dim, embedder=embedder.name, busy_timeout_s=5.0)
