"""``memstack eval supersedes``: what real conversations make the update judge supersede, each case to review.

`memstack eval updates` asks whether labelled news supersedes its memory; this asks the other question a deployment
cares about: over ordinary conversation, where almost nothing is news that ends a memory, how often does the judge
replace something it should have kept? Every user turn of each LoCoMo conversation (the ``speaker_a`` side) is sent
in order through :meth:`~memstack.engine.AsyncMemstack.chat`, one chat session per LoCoMo session, at the session's
date (the offline responder answers; the configured classifier and judge decide what is stored), on a fresh user per
conversation in a scratch SQLite store. Then every ``supersede`` / ``update`` entry of every memory's history is
listed: the old text, the new one, and the judge's note. LoCoMo labels no updates, so the figure is a count to read,
not an accuracy: most superseded memories in a conversation about a life that barely changes are mistakes.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memstack.config import Config
from memstack.evals.locomo_data import Conversation
from memstack.types import HistoryAction, Memory

__all__ = ["Superseded", "scan_conversations", "write_report"]

_REPLACED = (HistoryAction.SUPERSEDE, HistoryAction.UPDATE)


@dataclass(frozen=True, slots=True)
class Superseded:
    """One memory a turn replaced: before, after, and why (the history note)."""

    conversation: str
    before: str
    after: str
    note: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


async def scan_conversations(
    conversations: Sequence[Conversation],
    *,
    embedder: str = "local:minilm",
    classifier: str | None = None,
    update_model: str | None = None,
    progress: Callable[[], None] | None = None,
) -> tuple[dict[str, Any], list[Superseded]]:
    """Chat every user turn of ``conversations`` in order; the summary line and every memory replaced."""
    from memstack.engine import AsyncMemstack

    spec = None if classifier in (None, "offline") else classifier
    found: list[Superseded] = []
    turns = memories = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memstack-eval-supersedes-") as home:
        config = Config(home=Path(home), embedder=embedder, classifier_model=spec, update_model=update_model)
        async with AsyncMemstack(config, resume=False) as ms:
            for conversation in conversations:
                user = f"locomo-{conversation.id}"
                for number, session in enumerate(conversation.sessions):
                    for turn in session:
                        if turn.speaker != conversation.user_speaker:
                            continue
                        meta = {"local_time": turn.at.isoformat()}
                        await ms.chat(user, turn.content, session_id=f"{user}-{number}", metadata=meta)
                        turns += 1
                        if progress is not None:
                            progress()
                await ms.wait_idle()
                held = await _all_memories(ms, user)
                memories += len(held)
                for memory in held:
                    for entry in await ms.history(user, memory.id):
                        if entry.action in _REPLACED and entry.before and entry.after:
                            before, after = str(entry.before["content"]), str(entry.after["content"])
                            found.append(Superseded(conversation.id, before, after, entry.note))
        setting = config.update_judge
    judge = setting if setting.startswith("offline") else f"llm:{setting}"
    summary = {
        "conversations": len(conversations),
        "turns": turns,
        "memories": memories,
        "superseded": len(found),
        "superseded_per_1000_turns": round(1000 * len(found) / turns, 2) if turns else 0.0,
        "seconds": round(time.perf_counter() - started, 1),
        "judge": judge,
    }
    return summary, found


async def _all_memories(ms: Any, user: str) -> list[Memory]:
    out: list[Memory] = []
    while page := await ms.list(user, include_deleted=True, limit=500, offset=len(out)):
        out.extend(page)
    return out


def write_report(path: Path, found: Sequence[Superseded]) -> None:
    """Each memory replaced as one JSON line (``--report``)."""
    path.write_text("".join(json.dumps(f.to_dict(), ensure_ascii=False) + "\n" for f in found), encoding="utf-8")
