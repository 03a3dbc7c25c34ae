"""A scripted summarizer: a fake of the model behind the Summarizer protocol, for policy tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from memstack.session import TurnDraft
from memstack.types import Exchange, Fact, Route, TurnSummary


@dataclass
class Call:
    exchange: Exchange
    base_truth: tuple[Fact, ...]
    route: Route


@dataclass
class ScriptedSummarizer:
    """Replays ``script``: each item is a TurnDraft to return, an exception to raise, or a float to sleep first."""

    script: list[TurnDraft | BaseException | float]
    consolidated: list[Fact] | BaseException | None = None
    line: str = "A session line"
    name: str = "scripted:test"
    offline: bool = False
    calls: list[Call] = field(default_factory=list)

    async def summarize_turn(self, exchange: Exchange, base_truth: Sequence[Fact], route: Route) -> TurnDraft:
        self.calls.append(Call(exchange, tuple(base_truth), route))
        item = self.script.pop(0)
        while isinstance(item, float):
            await asyncio.sleep(item)
            item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    async def consolidate(self, base_truth: Sequence[Fact]) -> list[Fact]:
        if isinstance(self.consolidated, BaseException):
            raise self.consolidated
        return list(base_truth) if self.consolidated is None else list(self.consolidated)

    async def summarize_session(self, turn_log: Sequence[TurnSummary], base_truth: Sequence[Fact]) -> str:
        return self.line


#: For tests of the service's own logic: the store behaviour under them is the contract suite's job on every backend,
#: so they run on SQLite only and keep the PostgreSQL runs to what depends on the backend (locks, processes).
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
