"""A rig for whole chat turns: a real SQLite store in a temp home and one scripted OpenAI-compatible server (real
HTTP) playing the chat model (``chat``), the LLM memory classifier (``classifier``) and the summarizer
(``summarizer``). Each model answers from a handler that records when requests arrive and finish."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memstack import AsyncMemstack
from memstack.capture.llm import LLMClassifier
from memstack.models import OpenAIChatModel
from memstack.session import ModelSummarizer
from memstack.turn.models import Models, Tuning
from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer

ReplyFn = Callable[[RecordedRequest], Awaitable[Any]]

SUMMARY = {
    "user_summary": "User said something",
    "assistant_summary": "Assistant answered",
    "base_truth_diff": {"add": [], "update": [], "remove": []},
    "hard_exceptions": [],
    "flags": [],
}


def memories(*items: tuple[str, str, float]) -> dict[str, Any]:
    """A classifier answer: (content, category, confidence) triples."""
    return {
        "memories": [{"content": c, "category": cat, "confidence": conf, "explicit": False} for c, cat, conf in items]
    }


@dataclass
class Rig:
    server: ScriptedOpenAIServer
    home: Path
    database_url: str | None = None  # PostgreSQL; None: SQLite in ``home``
    log: list[tuple[str, str, float]] = field(default_factory=list)  # (model, "in" | "out", monotonic time)
    classify: ReplyFn | None = None
    summarize: ReplyFn | None = None
    answer: ReplyFn | None = None
    _models: list[OpenAIChatModel] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server.handle(self._wrap("classifier", lambda r: self.classify), model="classifier")
        self.server.handle(self._wrap("summarizer", lambda r: self.summarize), model="summarizer")
        self.server.handle(self._wrap("chat", lambda r: self.answer), model="chat")

    def _wrap(self, name: str, pick: Callable[[RecordedRequest], ReplyFn | None]) -> Callable[..., Any]:
        async def handler(request: RecordedRequest) -> Any:
            self.log.append((name, "in", time.monotonic()))
            fn = pick(request)
            if fn is not None:
                reply = await fn(request)
            elif name == "classifier":
                reply = {"memories": []}
            elif name == "summarizer":
                reply = SUMMARY
            else:
                reply = Reply.text("Sure, happy to help.")
            self.log.append((name, "out", time.monotonic()))
            return reply

        return handler

    def times(self, name: str, edge: str) -> list[float]:
        return [t for n, e, t in self.log if n == name and e == edge]

    def model(self, name: str) -> OpenAIChatModel:
        model = self.server.chat_model(name)
        self._models.append(model)
        return model

    def models(self, *, chat: bool = True) -> Models:
        return Models(
            chat=self.model("chat") if chat else None,
            classifier=LLMClassifier(self.model("classifier")),
            summarizer=ModelSummarizer(self.model("summarizer")),
        )

    @asynccontextmanager
    async def engine(
        self, *, chat: bool = True, tuning: Tuning | None = None, resume: bool = True, **settings: Any
    ) -> AsyncIterator[AsyncMemstack]:
        settings.setdefault("embedder", "hash:64")
        settings.setdefault("badge_wait_s", 5.0)
        settings.setdefault("database_url", self.database_url)
        try:
            models = self.models(chat=chat)
            async with AsyncMemstack(home=self.home, models=models, tuning=tuning, resume=resume, **settings) as ms:
                yield ms
        finally:  # in the test's own event loop, where the clients' connections live
            owned, self._models = self._models, []
            for model in owned:
                await model.aclose()

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.server.chat_requests if r.model == "chat"]

    def classifier_requests(self) -> list[RecordedRequest]:
        return [r for r in self.server.chat_requests if r.model == "classifier"]

    def rows(self, table: str, where: str = "true") -> int:
        """Rows of a table of the store's database, read with the plain driver (sqlite3 or psycopg)."""
        sql = f"SELECT count(*) FROM {table} WHERE {where}"
        if self.database_url is None:
            with sqlite3.connect(self.home / "memstack.db") as conn:
                return int(conn.execute(sql).fetchone()[0])
        import psycopg

        with psycopg.connect(self.database_url) as pg:
            row = pg.execute(sql.encode()).fetchone()
            return int(row[0]) if row else 0


@pytest.fixture
async def rig(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Rig]:
    """SQLite by default; ``@pytest.mark.parametrize("rig", BACKENDS, indirect=True)`` runs a test on both."""
    backend = getattr(request, "param", "sqlite")
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    async with ScriptedOpenAIServer() as server:
        yield Rig(server, tmp_path, url)


BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait for a condition made true by work running elsewhere (another thread or process)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.01)
