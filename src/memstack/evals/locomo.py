"""``memstack eval locomo``: does retrieval find the turns a LoCoMo question is about?

For each conversation every session is ingested in order (one passage per speaker turn, timed at the session's
date, the session as its thread; a shared photo is kept as its caption), then every question with evidence is
asked at a time just after the last session. The ids (``D<session>:<turn>``) of the top-k passages are compared
with the gold evidence: hit@k = any evidence turn in the top k, recall@k = fraction of evidence turns found.

Also reported: ``tokens_per_query``, the tokens of the retrieved context as it would be sent (the top-10 turns
with the turn before each, merged into windows under their session date), ``full_context_tokens`` (the whole
conversation rendered the same way, per conversation), and p50/p95 recall latency (query embedding + ranking).

The data is LoCoMo (CC BY-NC 4.0): pass its path with ``--data``, never ship it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.retrieval import HybridRetriever, Passage, RetrievalSettings
from memstack.tokens import TokenCounter

__all__ = [
    "Conversation",
    "LocomoQuestion",
    "LocomoTurn",
    "load_locomo",
    "normalize_evidence",
    "run_locomo",
]

KS = (5, 10)
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    id: str  # D<session>:<turn>
    speaker: str
    text: str
    session: int
    at: datetime
    caption: str | None = None

    def render(self) -> str:
        photo = f" [shares a photo: {self.caption}]" if self.caption else ""
        return f"{self.speaker}: {self.text}{photo}"


@dataclass(frozen=True, slots=True)
class LocomoQuestion:
    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    turns: tuple[LocomoTurn, ...]
    questions: tuple[LocomoQuestion, ...]

    @property
    def asked_at(self) -> datetime:
        """Questions are asked the day after the last session."""
        return max(t.at for t in self.turns) + timedelta(days=1)


def normalize_evidence(raw: object) -> list[str]:
    """``"D8:6; D9:17"`` → ``["D8:6", "D9:17"]``, ``"D:11:26"`` → ``["D11:26"]``, ``"D30:05"`` → ``["D30:5"]``;
    anything without a session and a turn number is dropped."""
    return [f"D{int(s)}:{int(t)}" for s, t in _EVIDENCE.findall(str(raw))]


def _session_time(text: str) -> datetime:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    raise InputError(f"unreadable LoCoMo session date {text!r}; expected e.g. '1:56 pm on 8 May, 2023'")


def load_locomo(path: Path) -> list[Conversation]:
    """Read a LoCoMo JSON file (a list of samples with ``conversation`` and ``qa``)."""
    try:
        samples = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no LoCoMo file at {path}; pass the path of locomo10.json or a subset with --data") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not JSON ({exc}); pass a LoCoMo file with --data") from None
    if not isinstance(samples, list):
        raise InputError(f"{path} holds {type(samples).__name__}; a LoCoMo file is a list of conversations")
    conversations = []
    for number, sample in enumerate(samples, start=1):
        try:
            conversations.append(_conversation(sample, number))
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"conversation {number} of {path} lacks {exc}; is this a LoCoMo file?") from None
    return conversations


def _conversation(sample: dict[str, Any], number: int) -> Conversation:
    conv = sample["conversation"]
    turns: list[LocomoTurn] = []
    session = 1
    while f"session_{session}" in conv:
        at = _session_time(conv[f"session_{session}_date_time"])
        for position, turn in enumerate(conv[f"session_{session}"], start=1):
            ids = normalize_evidence(turn.get("dia_id", ""))
            turn_id = ids[0] if ids else f"D{session}:{position}"
            caption = turn.get("blip_caption") or None
            turns.append(LocomoTurn(turn_id, turn["speaker"], turn["text"], session, at, caption))
        session += 1
    known = {t.id for t in turns}
    questions = []
    for qa in sample["qa"]:
        evidence = tuple(dict.fromkeys(e for raw in qa.get("evidence", []) for e in normalize_evidence(raw)))
        if evidence and any(e in known for e in evidence):
            questions.append(LocomoQuestion(str(qa["question"]), evidence, int(qa["category"])))
    return Conversation(str(sample.get("sample_id", f"conv-{number}")), tuple(turns), tuple(questions))


def render_windows(windows: Sequence[Sequence[Passage]], turns: dict[str, LocomoTurn]) -> str:
    """The retrieved turns as the memory layer shows them: a dated header per window, one line per turn."""
    blocks = []
    for window in windows:
        first = turns[window[0].id]
        lines = [f"[{first.at:%d %B %Y}, session {first.session}]"]
        lines += [p.text for p in window]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


@dataclass
class _Tally:
    questions: int = 0
    sums: dict[str, float] | None = None

    def add(self, found: dict[str, float]) -> None:
        self.questions += 1
        self.sums = self.sums or dict.fromkeys(found, 0.0)
        for key, value in found.items():
            self.sums[key] += value

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"questions": self.questions}
        for key, value in (self.sums or {}).items():
            out[key] = round(value / self.questions, 3)
        return out


def _score(top: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    gold = set(evidence)
    got = {k: gold.intersection(top[:k]) for k in KS}
    found = {f"hit@{k}": 1.0 if got[k] else 0.0 for k in KS}
    found.update({f"recall@{k}": len(got[k]) / len(gold) for k in KS})
    return found


async def run_locomo(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    *,
    settings: RetrievalSettings | None = None,
    model: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Evaluate; returns the overall result (the JSON contract) and one result per conversation."""
    counter = TokenCounter(model)
    overall, categories = _Tally(), dict[int, _Tally]()
    latencies: list[float] = []
    context_tokens: list[int] = []
    full_tokens: list[int] = []
    per_conversation: list[dict[str, Any]] = []
    for conv in conversations:
        retriever = HybridRetriever(settings)
        passages = [Passage(t.id, t.render(), t.at, f"session-{t.session}") for t in conv.turns]
        retriever.add(passages, await embedder.embed([p.text for p in passages]))
        by_id = {t.id: t for t in conv.turns}
        full = render_windows(_all_windows(retriever), by_id)
        full_tokens.append(counter.count(full))
        tally = _Tally()
        for question in conv.questions:
            started = time.perf_counter()
            vector = (await embedder.embed([question.text]))[0]
            hits = retriever.search(question.text, vector, k=max(KS), now=conv.asked_at)
            latencies.append((time.perf_counter() - started) * 1000)
            found = _score([h.passage.id for h in hits], question.evidence)
            for t in (overall, tally, categories.setdefault(question.category, _Tally())):
                t.add(found)
            context_tokens.append(counter.count(render_windows(retriever.windows(hits), by_id)))
            if progress is not None:
                progress(1)
        per_conversation.append({"conversation": conv.id, **tally.summary()})
    if not latencies:
        raise InputError("no question with evidence in the data; is this a LoCoMo file with qa[].evidence?")
    result = overall.summary()
    result["per_category"] = {str(c): categories[c].summary() for c in sorted(categories)}
    result["tokens_per_query"] = round(float(np.mean(context_tokens)), 1)
    result["full_context_tokens"] = round(float(np.mean(full_tokens)), 1)
    result["p50_ms"] = round(float(np.percentile(latencies, 50)), 2)
    result["p95_ms"] = round(float(np.percentile(latencies, 95)), 2)
    return result, per_conversation


def _all_windows(retriever: HybridRetriever) -> list[list[Passage]]:
    windows: dict[str | None, list[Passage]] = {}
    for passage in retriever.passages:
        windows.setdefault(passage.thread, []).append(passage)
    return list(windows.values())
