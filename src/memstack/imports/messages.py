"""Plain JSONL messages, ``{"user_id", "text", "timestamp"}`` a line, as the conversations ``AsyncMemstack.ingest``
imports (``AsyncMemstack.users.import_messages``).

A line may also name its ``role`` (``user``, the default, or ``assistant``) and its ``session_id``; without one a
user's messages of one day (UTC) are one session, ``import-YYYY-MM-DD``. ``timestamp`` is ISO 8601 (taken as UTC
without a time zone) or Unix seconds; it is the message's time everywhere memstack dates it (the archive, the turn
log, the memories capture writes from it). Blank lines are skipped.

The input is read a line at a time, never whole (:func:`read_lines`), so a file of any size is read in bounded
memory: the engine checks every line first (a bad line refuses the whole import, naming its line, before
anything is written), then imports the messages in chunks of :data:`CHUNK` lines, a user's session at a time, each
user message (with the replies after it) one exchange of its own, archived at its own time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memstack.errors import ImportRefused, InputError
from memstack.types import check_id, check_text

__all__ = ["CHUNK", "MAX_LINE_CHARS", "LineMessage", "chunks", "read_lines"]

#: Lines imported together (grouped by user and session, each group one ``ingest``).
CHUNK = 2000
#: The longest line read (a message is at most 32,000 characters; the rest is its fields).
MAX_LINE_CHARS = 40_000


@dataclass(frozen=True, slots=True)
class LineMessage:
    """One line: whose message, in which session, said by whom, what and when."""

    user_id: str
    session_id: str
    role: str
    text: str
    at: datetime

    def message(self) -> dict[str, Any]:
        """As ``ingest`` takes it."""
        return {"role": self.role, "content": self.text, "at": self.at}


def _refuse(line: int, message: str) -> ImportRefused:
    return ImportRefused(f"line {line}: {message}; fix the line (or remove it) and import again: nothing was imported")


def _time(value: Any, line: int) -> datetime:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            raise _refuse(line, f"timestamp {value!r} is out of range") from None
    if isinstance(value, str):
        try:
            at = datetime.fromisoformat(value)
        except ValueError:
            raise _refuse(line, f"timestamp {value!r} is not ISO 8601 (2024-05-01T09:30:00Z) or Unix seconds") from None
        return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    raise _refuse(line, "it has no timestamp (ISO 8601, such as 2024-05-01T09:30:00Z, or Unix seconds)")


def _message(data: Any, line: int) -> LineMessage:
    if not isinstance(data, Mapping):
        raise _refuse(line, 'it is not a JSON object such as {"user_id": "ana", "text": "...", "timestamp": "..."}')
    try:
        user_id = check_id(data.get("user_id"), "user_id")
        value = data.get("text")
        if not isinstance(value, str) or not value.strip():
            raise InputError("it has no 'text'")
        text = check_text(value, "text")
        session = data.get("session_id")
        if session is not None:
            check_id(session, "session_id")
    except InputError as exc:
        raise _refuse(line, str(exc)) from None
    role = data.get("role", "user")
    if role not in ("user", "assistant"):
        raise _refuse(line, f"role {role!r} is neither 'user' nor 'assistant'")
    at = _time(data.get("timestamp"), line)
    sid = session if isinstance(session, str) else f"import-{at.astimezone(UTC).date().isoformat()}"
    return LineMessage(user_id, sid, role, text, at)


def read_lines(lines: Iterable[str | bytes]) -> Iterator[LineMessage]:
    """Each message of ``lines`` (JSONL, one message a line), read one line at a time; ``ImportRefused`` naming
    the first line that cannot be read."""
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE_CHARS:
            raise _refuse(number, f"it is longer than {MAX_LINE_CHARS} characters")
        try:
            text = raw.decode() if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            raise _refuse(number, "it is not UTF-8") from None
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except ValueError:
            raise _refuse(number, "it is not JSON (one object a line)") from None
        yield _message(data, number)


def chunks(messages: Iterable[LineMessage], size: int = CHUNK) -> Iterator[dict[tuple[str, str], list[LineMessage]]]:
    """``messages`` ``size`` at a time, grouped by (user, session) in the order each group first appears."""
    group: dict[tuple[str, str], list[LineMessage]] = {}
    count = 0
    for message in messages:
        group.setdefault((message.user_id, message.session_id), []).append(message)
        count += 1
        if count == size:
            yield group
            group, count = {}, 0
    if group:
        yield group
