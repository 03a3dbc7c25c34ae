"""Importing a past conversation: ``AsyncMemstack.ingest``.

Each exchange goes through what a chat turn does after the model has answered, without calling a chat model:

1. messages are paired into exchanges: the user's message(s), then the reply(ies) that follow (consecutive
   messages of one side are joined; an opening reply with no message before it is an exchange with a blank user
   side);
2. per exchange, in order, under the session lock: phase 2 of the session service (archive the raw exchange,
   summarize it, apply the base-truth diff, commit the turn-log entry), timed at the exchange's own time, while
   memory capture runs on the user's message as in a chat turn (the configured classifier, offline by default;
   dedup; tier limit), with the previous messages as the classifier's context and the user's speaker name;
3. every imported message is embedded, in batches, and its vector stored (what recall searches);
4. optionally the session is ended, which writes its cross-session line (layer 7), dated at its last message.

An import is idempotent: what the session has archived already is not imported again. Before anything is written,
the import's exchanges are matched against the session's archived turns, by time (of the exchange's first message)
and text of each side, so importing the same conversation twice leaves the archive, the turn log, the memories and
the line as the first import left them, and importing a longer version of it (or its parts again, in any order)
appends only the messages not yet there. An archived turn that holds the beginning of an exchange (the previous
import stopped after the user's message, or within the replies) counts for those messages, and the rest of the
exchange is imported as a new turn. Imported exchanges that are not archived yet are appended after the session's
last turn, in the import's order. Two imports of one session at the same moment are not checked against each other
(over HTTP, an ``Idempotency-Key`` makes a retried request safe).

The session service used here runs on the imported times (a clock that reads the exchange being imported), so the
session's dates, its turn log and its line are those of the conversation, not of the import.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memstack.capture.base import ClassifyContext
from memstack.capture.pipeline import CapturePipeline
from memstack.dates import check_time
from memstack.errors import InputError
from memstack.recall.vectors import ExchangeText, TurnVectorizer
from memstack.session.base import Summarizer
from memstack.session.diff import FactGuard
from memstack.session.service import SessionService
from memstack.session.settings import SessionSettings
from memstack.store.base import Store
from memstack.types import ArchivedTurn, IngestResult, MemoryUpdate, SessionSummary, UserRef, check_text, utcnow

__all__ = ["IngestMessage", "Ingestor", "parse_messages"]

#: Messages of the conversation the memory classifier sees before the one it classifies (as in a chat turn).
_RECENT = 4
_MAX_MESSAGES = 100_000
_TURN_PAGE = 500


@dataclass(frozen=True, slots=True)
class IngestMessage:
    """One message to import: ``role`` user or assistant, its text, when it was said, and who said it (optional)."""

    role: str
    content: str
    at: datetime
    speaker: str | None = None


@dataclass(slots=True)
class _Exchange:
    user: list[str]
    assistant: list[str]
    at: datetime
    user_speaker: str | None = None
    assistant_speaker: str | None = None
    user_messages: tuple[int, ...] = ()
    assistant_messages: tuple[int, ...] = ()
    archived: int | None = None  # the session's turn that holds it already (nothing to import)

    def key(self) -> tuple[datetime, str, str]:
        return (self.at, "\n".join(self.user), "\n".join(self.assistant))


def _time(value: Any, index: int, previous: datetime | None) -> datetime:
    if value is None:
        return previous or utcnow()
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InputError(f"message {index}: 'at' must be an ISO 8601 time, got {value!r}") from None
    if not isinstance(value, datetime):
        raise InputError(f"message {index}: 'at' must be a datetime or an ISO 8601 string, got {type(value).__name__}")
    check_time(value, f"message {index}: 'at'")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def parse_messages(
    messages: Iterable[Mapping[str, Any] | IngestMessage], user_speaker: str | None
) -> list[IngestMessage]:
    """Checked messages: each a mapping with ``content``, ``role`` (user | assistant) or ``speaker`` (a name; the
    one equal to ``user_speaker`` is the user, every other one the assistant side), and ``at`` (a datetime or ISO
    8601 string; naive times are UTC; missing: the previous message's time)."""
    out: list[IngestMessage] = []
    previous: datetime | None = None
    for i, raw in enumerate(messages):
        if len(out) >= _MAX_MESSAGES:
            raise InputError(f"more than {_MAX_MESSAGES} messages in one import; import the conversation in parts")
        if isinstance(raw, IngestMessage):
            raw = {"role": raw.role, "content": raw.content, "at": raw.at, "speaker": raw.speaker}
        if not isinstance(raw, Mapping):
            raise InputError(f"message {i} must be an object with 'content' and 'role' or 'speaker'")
        content = raw.get("content")
        if not isinstance(content, str):
            raise InputError(f"message {i} needs 'content' as text")
        check_text(content, f"message {i}'s content")
        speaker = raw.get("speaker")
        if speaker is not None and (not isinstance(speaker, str) or not speaker.strip()):
            raise InputError(f"message {i}: 'speaker' must be a name, got {speaker!r}")
        if speaker is not None:
            check_text(speaker, f"message {i}'s speaker")
        role = raw.get("role")
        if role is None:
            if speaker is None:
                raise InputError(f"message {i} needs 'role' (user or assistant) or 'speaker'")
            if user_speaker is None:
                raise InputError("the messages name speakers: pass user_speaker=NAME to say which one is the user")
            role = "user" if speaker.strip() == user_speaker.strip() else "assistant"
        if role not in ("user", "assistant"):
            raise InputError(f"message {i}: role must be 'user' or 'assistant', got {role!r}")
        previous = _time(raw.get("at"), i, previous)
        out.append(IngestMessage(role, content, previous, speaker.strip() if speaker else None))
    if not out:
        raise InputError("nothing to import: pass at least one message")
    return out


def _exchanges(messages: Sequence[IngestMessage]) -> list[_Exchange]:
    out: list[_Exchange] = []
    for i, m in enumerate(messages):
        current = out[-1] if out else None
        if current is None or (m.role == "user" and current.assistant):
            current = _Exchange([], [], m.at)
            out.append(current)
        if m.role == "user":
            current.user.append(m.content)
            current.user_speaker = current.user_speaker or m.speaker
            current.user_messages += (i,)
        else:
            current.assistant.append(m.content)
            current.assistant_speaker = current.assistant_speaker or m.speaker
            current.assistant_messages += (i,)
    return out


def _part(messages: Sequence[IngestMessage], indexes: Sequence[int], at: datetime | None = None) -> _Exchange:
    """The exchange made of some of the import's messages (``indexes``, in order)."""
    ex = _Exchange([], [], at or messages[indexes[0]].at)
    for i in indexes:
        m = messages[i]
        if m.role == "user":
            ex.user.append(m.content)
            ex.user_speaker = ex.user_speaker or m.speaker
            ex.user_messages += (i,)
        else:
            ex.assistant.append(m.content)
            ex.assistant_speaker = ex.assistant_speaker or m.speaker
            ex.assistant_messages += (i,)
    return ex


def _split(ex: _Exchange, turn: ArchivedTurn, messages: Sequence[IngestMessage]) -> tuple[_Exchange, _Exchange] | None:
    """``ex`` as the part ``turn`` archived already and the rest, when ``turn`` holds a beginning of it (an import
    that stopped after the user's message or within the replies); else ``None``."""
    if turn.at != ex.at:
        return None
    head: int | None = None
    if turn.user == "\n".join(ex.user):  # the user's side is there; some of the replies may be
        head = next((j for j in range(len(ex.assistant)) if turn.assistant == "\n".join(ex.assistant[:j])), None)
        head = None if head is None else len(ex.user_messages) + head
    elif not turn.assistant.strip():  # only the first of the user's messages are there
        head = next((j for j in range(1, len(ex.user)) if turn.user == "\n".join(ex.user[:j])), None)
    if head is None:
        return None
    order = (*ex.user_messages, *ex.assistant_messages)
    done = _part(messages, order[:head], ex.at)
    done.archived = turn.turn
    return done, _part(messages, order[head:])


def _align(exchanges: Sequence[_Exchange], turns: Sequence[ArchivedTurn], messages: Sequence[IngestMessage]) -> list[
    _Exchange
]:  # fmt: skip
    """The import's exchanges in order, each marked with the archived turn that holds it (``archived``) or not (to
    import): see the module docstring."""
    by_key: dict[tuple[datetime, str, str], deque[ArchivedTurn]] = {}
    by_at: dict[datetime, list[ArchivedTurn]] = {}
    for turn in turns:
        by_key.setdefault((turn.at, turn.user, turn.assistant), deque()).append(turn)
        by_at.setdefault(turn.at, []).append(turn)
    used: set[int] = set()
    todo = deque(exchanges)
    out: list[_Exchange] = []
    while todo:
        ex = todo.popleft()
        same = by_key.get(ex.key(), deque())
        while same and same[0].turn in used:
            same.popleft()
        if same:
            ex.archived = same.popleft().turn
            used.add(ex.archived)
            out.append(ex)
            continue
        for turn in by_at.get(ex.at, ()):
            if turn.turn not in used and (parts := _split(ex, turn, messages)) is not None:
                used.add(turn.turn)
                out.append(parts[0])
                todo.appendleft(parts[1])
                break
        else:
            out.append(ex)
    return out


class _Clock:
    """The imported exchange's time, for the session service's time stamps."""

    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return self.now


class Ingestor:
    """Imports conversations into one store: session memory, memory capture, archive vectors."""

    def __init__(
        self,
        store: Store,
        pipeline: CapturePipeline,
        summarizer: Summarizer,
        vectorizer: TurnVectorizer,
        *,
        settings: SessionSettings | None = None,
        guard: FactGuard | None = None,
    ) -> None:
        self.store = store
        self.guard = guard
        self.pipeline = pipeline
        self.summarizer = summarizer
        self.vectorizer = vectorizer
        self.settings = settings or SessionSettings()

    async def ingest(
        self,
        user: UserRef,
        session_id: str,
        messages: Iterable[Mapping[str, Any] | IngestMessage],
        *,
        user_speaker: str | None = None,
        agent: str | None = None,
        capture: bool = True,
        tier: str | None = None,
        end: bool = True,
    ) -> IngestResult:
        parsed = parse_messages(messages, user_speaker)
        if capture:
            self.pipeline.tiers.limit_for(tier)  # an unknown tier fails before anything is written
        archived = await self._archived(user, session_id)
        plan = _align(_exchanges(parsed), archived, parsed)
        clock = _Clock()
        sessions = SessionService(self.store, self.summarizer, self.settings, clock=clock, guard=self.guard)
        turn_ids: list[str] = []
        message_ids: list[str] = [""] * len(parsed)
        updates: list[MemoryUpdate] = []
        texts: list[ExchangeText] = []
        recent: list[tuple[str, str]] = []
        with self.vectorizer.importing(user, session_id):  # the startup backfill leaves these turns to us
            try:
                for ex in plan:
                    user_text, reply = "\n".join(ex.user), "\n".join(ex.assistant)
                    if ex.archived is not None:
                        turn = ex.archived
                    else:
                        turn, found = await self._import(
                            sessions, clock, user, session_id, ex, recent, agent=agent, capture=capture, tier=tier
                        )
                        updates.extend(found)
                        speakers = (ex.user_speaker, ex.assistant_speaker)
                        texts.append(ExchangeText(session_id, turn, user_text, reply, *speakers))
                    if not turn_ids or turn_ids[-1] != f"{session_id}:{turn}":
                        turn_ids.append(f"{session_id}:{turn}")
                    for i in ex.user_messages:
                        message_ids[i] = f"{session_id}:{turn}:user"
                    for i in ex.assistant_messages:
                        message_ids[i] = f"{session_id}:{turn}:assistant"
                    recent += [(r, t) for r, t in (("user", user_text), ("assistant", reply)) if t.strip()]
                await self.vectorizer.embed(user, texts)
                summary = await self._end(sessions, clock, user, session_id, archived, new=bool(texts)) if end else None
            finally:
                await sessions.drain()
        return IngestResult(session_id, tuple(turn_ids), tuple(message_ids), tuple(updates), summary)

    async def _archived(self, user: UserRef, session_id: str) -> list[ArchivedTurn]:
        """Every turn the session has archived, in turn order (none for a session not seen yet)."""
        turns: list[ArchivedTurn] = []
        while page := await self.store.archive.turns(user, session_id=session_id, limit=_TURN_PAGE, offset=len(turns)):
            turns += page
            if len(page) < _TURN_PAGE:
                break
        return turns

    async def _import(
        self,
        sessions: SessionService,
        clock: _Clock,
        user: UserRef,
        session_id: str,
        ex: _Exchange,
        recent: Sequence[tuple[str, str]],
        *,
        agent: str | None,
        capture: bool,
        tier: str | None,
    ) -> tuple[int, tuple[MemoryUpdate, ...]]:
        """Archive and summarize one exchange as the session's next turn, memory capture running on its user side
        meanwhile; its turn number and what capture did."""
        user_text, reply = "\n".join(ex.user), "\n".join(ex.assistant)
        clock.now = ex.at
        handle = await sessions.begin_turn(user, session_id, agent=agent)
        detection = None
        if capture and user_text.strip():
            context = ClassifyContext(recent=tuple(recent[-_RECENT:]), user_name=ex.user_speaker)
            detection = self.pipeline.start(
                user, user_text, at=ex.at, tier=tier, session_id=session_id, turn=handle.turn, context=context
            )
        found: tuple[MemoryUpdate, ...] = ()
        try:
            await sessions.finish_turn(handle, user_text, reply, at=ex.at)
        finally:
            if detection is not None:
                found = tuple((await detection).updates)
        return handle.turn, found

    async def _end(
        self,
        sessions: SessionService,
        clock: _Clock,
        user: UserRef,
        session_id: str,
        archived: Sequence[ArchivedTurn],
        *,
        new: bool,
    ) -> SessionSummary | None:
        """End the session (its line dated at its last message), unless the import added nothing to a session that
        is ended with an up-to-date line already: then its summary as it is."""
        if not new:
            known = await self.store.archive.sessions(user, session_id=session_id)
            if known and known[0].ended_at is not None and known[0].line_turn >= known[0].turn_count:
                return known[0]
            if archived:
                clock.now = max(t.at for t in archived)
        return await sessions.end_session(user, session_id)
