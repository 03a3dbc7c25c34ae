"""What both backends' ``ArchiveVectors`` share: argument checks and one row per message of an exchange."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from memstack.errors import InputError
from memstack.store._session_rows import check_session_id
from memstack.types import TurnVectors, Vector

__all__ = ["check_speaker", "message_rows", "not_archived"]

T = TypeVar("T")


def check_speaker(speaker: str | None) -> str | None:
    if speaker is None:
        return None
    if not isinstance(speaker, str) or not speaker.strip() or len(speaker) > 200 or not speaker.isprintable():
        raise InputError(f"a speaker name must be 1-200 printable characters or None, got {speaker!r}")
    return speaker.strip()


def message_rows(
    vectors: Sequence[TurnVectors], vector: Callable[[Vector], T]
) -> list[tuple[str, int, int, str | None, T | None]]:
    """``(session_id, turn, side, speaker, stored vector)`` for both messages of each exchange (side 0: the user's,
    1: the reply), checked; ``vector`` converts a vector to what the backend stores (``None`` stays ``None``)."""
    rows: list[tuple[str, int, int, str | None, T | None]] = []
    for v in vectors:
        check_session_id(v.session_id)
        if isinstance(v.turn, bool) or not isinstance(v.turn, int) or v.turn < 1:
            raise InputError(f"turn numbers start at 1, got {v.turn!r}")
        for side, (vec, speaker) in enumerate(((v.user, v.user_speaker), (v.assistant, v.assistant_speaker))):
            rows.append((v.session_id, v.turn, side, check_speaker(speaker), None if vec is None else vector(vec)))
    return rows


def not_archived(session_id: str, turn: int) -> InputError:
    return InputError(
        f"turn {turn} of session {session_id!r} is not in this user's archive; vectors are written for archived "
        "exchanges only, after the turn is recorded"
    )
