"""``memstack eval memories``: does memory retrieval (layer 6) find the memories a question is about?

LoCoMo's ``observation`` entries are short third-person facts about each speaker, each citing the turn it came
from: exactly what the capture pipeline stores. Per conversation they are stored as one user's memories in a fresh
SQLite store (through ``add_many``, embedded with the configured model); each question with evidence is then asked
through :class:`~memstack.capture.scoring.MemoryScorer` (the store's ``nearest`` + ``search_text``), and a memory
counts as relevant when the turn it cites is among the question's evidence turns.

Modes: ``dense`` (lexical weight 0), ``lexical`` (BM25 alone), and ``hybrid`` at several lexical weights; hit@k =
any relevant memory in the top k, recall@k = fraction of the relevant memories found. All memories share one
category, so category weights do not change the ranking here.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memstack.capture.scoring import LEXICAL_WEIGHT, MemoryScorer, ScoringSettings
from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.evals.locomo_data import read_locomo
from memstack.types import Category, NewMemory, ScoredMemory, Source, UserRef

__all__ = ["MemoryQuestion", "ObservationSet", "load_observations", "run_memories"]

KS = (5, 10)
#: Lexical weights tried besides dense (0) and lexical alone.
SWEEP = (0.1, 0.2, 0.3, 0.5, 1.0)


@dataclass(frozen=True, slots=True)
class MemoryQuestion:
    text: str
    relevant: frozenset[int]  # indexes into the conversation's facts


@dataclass(frozen=True, slots=True)
class ObservationSet:
    conversation: str
    facts: tuple[str, ...]
    questions: tuple[MemoryQuestion, ...]


def load_observations(path: Path) -> list[ObservationSet]:
    """Facts and questions of every conversation of a LoCoMo file; questions without a cited fact are skipped."""
    out = []
    for conv in read_locomo(path):
        facts = tuple(o.text for o in conv.observations)
        cites: dict[str, set[int]] = {}
        for i, observation in enumerate(conv.observations):
            for dia in observation.evidence:
                cites.setdefault(dia, set()).add(i)
        questions = []
        for q in conv.questions:
            relevant = frozenset(i for e in q.evidence for i in cites.get(e, ()))
            if relevant:
                questions.append(MemoryQuestion(q.text, relevant))
        out.append(ObservationSet(conv.id, facts, tuple(questions)))
    return out


class _Tally:
    def __init__(self) -> None:
        self.n = 0
        self.sums = {f"{m}@{k}": 0.0 for m in ("hit", "recall") for k in KS}

    def add(self, ranked: Sequence[int], relevant: frozenset[int]) -> None:
        self.n += 1
        for k in KS:
            found = relevant.intersection(ranked[:k])
            self.sums[f"hit@{k}"] += 1.0 if found else 0.0
            self.sums[f"recall@{k}"] += len(found) / len(relevant)

    def summary(self) -> dict[str, float]:
        return {key: round(value / max(1, self.n), 4) for key, value in self.sums.items()}


def _modes() -> dict[str, float]:
    modes = {"dense": 0.0}
    modes.update({f"hybrid@{w:g}": w for w in SWEEP})
    return modes


async def run_memories(
    sets: Sequence[ObservationSet], embedder: Embedder, *, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Evaluate every mode; the result is the command's JSON contract."""
    from memstack.store.sqlite import SQLiteStore

    if not any(s.questions for s in sets):
        raise InputError("no question cites a turn that an observation came from; is this a LoCoMo file?")
    modes = _modes()
    tallies = {name: _Tally() for name in (*modes, "lexical")}
    latencies: list[float] = []
    memories = 0
    with tempfile.TemporaryDirectory(prefix="memstack-eval-") as tmp:
        store = await SQLiteStore.open(Path(tmp) / "memstack.db", dim=embedder.dim, embedder=embedder.name)
        try:
            for obs in sets:
                user = UserRef(obs.conversation)
                vectors = await embedder.embed(list(obs.facts))
                new = [NewMemory(f, Category.GENERAL, Source.AUTO) for f in obs.facts]
                stored = await store.memories.add_many(user, new, vectors)
                memories += len(stored)
                position = {m.id: i for i, m in enumerate(stored)}
                scorers = {
                    name: MemoryScorer(store, replace(ScoringSettings(), lexical_weight=w)) for name, w in modes.items()
                }
                query_vectors = await embedder.embed([q.text for q in obs.questions])
                for question, vector in zip(obs.questions, query_vectors, strict=True):
                    for name, scorer in scorers.items():
                        started = time.perf_counter()
                        hits = await scorer.recall(user, question.text, vector, k=max(KS))
                        if name == f"hybrid@{LEXICAL_WEIGHT:g}":
                            latencies.append((time.perf_counter() - started) * 1000)
                        tallies[name].add(_ranked(hits, position), question.relevant)
                    lexical = await store.index.search_text(user, question.text, max(KS))
                    tallies["lexical"].add(_ranked(lexical, position), question.relevant)
                    if progress is not None:
                        progress(1)
        finally:
            await store.close()
    latencies.sort()
    return {
        "questions": tallies["dense"].n,
        "memories": memories,
        "lexical_weight": LEXICAL_WEIGHT,
        "dense": tallies["dense"].summary(),
        "lexical": tallies["lexical"].summary(),
        "hybrid": tallies[f"hybrid@{LEXICAL_WEIGHT:g}"].summary(),
        "sweep": {name: tallies[name].summary() for name in modes if name.startswith("hybrid@")},
        "p50_ms": round(latencies[len(latencies) // 2], 3),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 3),
    }


def _ranked(hits: Sequence[ScoredMemory], position: dict[str, int]) -> list[int]:
    return [position[h.memory.id] for h in hits if h.memory.id in position]
