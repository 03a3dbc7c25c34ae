"""What both backends share for hidden items (:class:`~memstack.store.base.HiddenStore`): the checks of what a
forget hides, the rows, and how a session's state leaves hidden things out.

Table ``hidden_items`` (SQLite migration ``017_hidden_items``, PostgreSQL ``0018_hidden_items``): one row per item
and the memory that hides it (``tenant, user_id, memory_id, kind, session_id, turn, text, created_at``), indexed by
``(tenant, user_id, session_id, kind, turn)`` (the reads of a session and of the archive) and by
``(tenant, user_id, memory_id)`` (a restore). Items are hidden by what they are, not copied and not changed:

- an exchange by its session and turn number: both messages, its turn-log entry, its vectors' place in recall;
- a fact by its session and its exact text: base truth is rewritten by every turn of the session, and a fact the
  summarizer keeps is the same text; a changed fact is a new text, derived from what the model could see;
- a line by its session and its exact text: a line rewritten from what is still visible has other words.

A session's state is read whole and then filtered here (:func:`visible_state`): one session's turns and facts are
what ``open`` reads anyway, so this adds one indexed read of the session's hidden items, never a scan of a user's
data. A commit keeps the hidden facts of base truth (:func:`keep_hidden_facts`): the turn's summarizer never saw
them, so it could not keep them itself, and a restore must find them where they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from memstack.errors import InputError
from memstack.store._session_rows import check_session_id
from memstack.types import Fact, HiddenItem, HiddenKind, SessionState, check_text

__all__ = [
    "HIDDEN_COLUMNS",
    "MAX_HIDDEN",
    "check_hidden",
    "hidden_from_row",
    "hidden_rows",
    "keep_hidden_facts",
    "parse_turn_ids",
    "visible_state",
]

#: Columns of ``hidden_items`` that make a :class:`HiddenItem` (:func:`hidden_from_row`).
HIDDEN_COLUMNS = "memory_id, kind, session_id, turn, text"

#: Items one forget may hide (a memory said in thousands of exchanges is hidden in the newest of them).
MAX_HIDDEN = 5000


def check_hidden(memory_id: str, items: Sequence[HiddenItem]) -> list[HiddenItem]:
    """The items as one memory's (``memory_id`` set), each once; ``InputError`` for a malformed one."""
    if len(items) > MAX_HIDDEN:
        raise InputError(f"a forget hides at most {MAX_HIDDEN} items, got {len(items)}")
    out: dict[tuple[str, str, int, str], HiddenItem] = {}
    for item in items:
        kind = HiddenKind(item.kind)
        check_session_id(item.session_id)
        if kind is HiddenKind.TURN and item.turn < 1:
            raise InputError(f"a hidden exchange names its turn (1 or more), got {item.turn}")
        if kind is not HiddenKind.TURN:
            check_text(item.text, f"the hidden {kind.value}")
            if not item.text:
                raise InputError(f"a hidden {kind.value} names its text")
        text = "" if kind is HiddenKind.TURN else item.text
        clean = HiddenItem(kind, item.session_id, item.turn if kind is HiddenKind.TURN else 0, text, memory_id)
        out.setdefault(clean.key, clean)
    return list(out.values())


def hidden_rows(memory_id: str, items: Sequence[HiddenItem]) -> list[tuple[str, str, str, int, str]]:
    """``(memory_id, kind, session_id, turn, text)`` of each item to insert."""
    return [(memory_id, i.kind.value, i.session_id, i.turn, i.text) for i in check_hidden(memory_id, items)]


def hidden_from_row(row: Sequence[Any]) -> HiddenItem:
    memory_id, kind, session_id, turn, text = row
    return HiddenItem(HiddenKind(kind), session_id, int(turn), text, memory_id)


def parse_turn_ids(turn_ids: Iterable[str]) -> list[tuple[str, int]]:
    """``session_id:turn`` strings as pairs; ones that are not such ids are skipped (a memory's provenance is
    data, not an argument to refuse)."""
    out = []
    for ref in turn_ids:
        session_id, _, turn = ref.rpartition(":")
        if session_id and turn.isdigit() and int(turn) > 0:
            out.append((session_id, int(turn)))
    return out


def visible_state(state: SessionState, hidden: Iterable[HiddenItem]) -> SessionState:
    """``state`` without its hidden exchanges (raw window and turn log) and hidden facts."""
    hidden = list(hidden)
    turns = {i.turn for i in hidden if i.kind is HiddenKind.TURN}
    facts = {i.text for i in hidden if i.kind is HiddenKind.FACT}
    if not turns and not facts:
        return state
    return replace(
        state,
        base_truth=tuple(f for f in state.base_truth if f.text not in facts),
        turn_log=tuple(t for t in state.turn_log if t.turn not in turns),
        raw_window=tuple(m for m in state.raw_window if m.turn not in turns),
    )


def keep_hidden_facts(new: Sequence[Fact], stored: Sequence[Fact], hidden_texts: Iterable[str]) -> tuple[Fact, ...]:
    """The base truth a commit writes: ``new`` (what the turn made of the visible facts) and, after it, the stored
    facts that are hidden and not in ``new`` already."""
    texts = set(hidden_texts)
    if not texts:
        return tuple(new)
    have = {f.text for f in new}
    return (*new, *(f for f in stored if f.text in texts and f.text not in have))
