"""Importing users: memstack's own export document (:meth:`AsyncMemstack.import_user`), mem0's memories and plain
JSONL messages (``engine.users.import_mem0`` / ``import_messages``). The readers are :mod:`memstack.imports`; this
is what the engine does with what they read.

An export document is imported in one store transaction per user (:meth:`memstack.store.base.UserData.load`),
under the user's erasure fence, after:

1. the document is read and checked (:func:`memstack.imports.read_document`: version, shape, ``sha256``);
2. its tenant is the one imported into (``tenant`` when given, else the document's): a document of another tenant
   is refused (``ImportConflict``), so a caller of one tenant can neither write into another nor take its ids;
3. the user's stored export is compared with the document: the same records → nothing is written and the report
   says ``unchanged`` (an import run twice); different → refused (``ImportConflict``: erase the user first to
   replace them; merging two histories of one memory has no answer that keeps both);
4. the stored memories' contents are embedded (vectors are not exported);

then the transaction writes every section, and afterwards the archived messages are embedded again and stored
(what recall searches; derived from the turns the transaction wrote, and written by the same path a chat turn's
are, so each backend's search statistics follow). Should that last step fail, the startup backfill embeds the
turns left without vectors, as for a chat turn interrupted there.

mem0's memories are made into the memory records of such a document and written by the same transaction, one per
user, except that a user who holds data already is not refused: memories already stored under mem0's ids are
skipped (so importing a file twice adds nothing) and the others added. JSONL messages go through
:meth:`AsyncMemstack.ingest` (capture with the configured classifier, each message at its own time; idempotent by
ingest's own rule), after every line was checked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstack.engine._scope import tenant_of
from memstack.errors import ImportConflict, ImportRefused, InputError
from memstack.imports.document import MAX_IMPORT_BYTES, UserDocument, read_document
from memstack.imports.mem0 import mem0_memories
from memstack.imports.messages import CHUNK, LineMessage, chunks, read_lines
from memstack.observe import Account, accounting
from memstack.recall.vectors import ExchangeText
from memstack.store.fence import fenced, pin
from memstack.types import ImportReport, UserRef, Vector
from memstack.users import SECTIONS

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["Lines", "import_document", "import_mem0", "import_messages", "jsonl_lines"]

#: Memory contents embedded per call.
_EMBED_BATCH = 256


def _sections(memories: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {section: memories if section == "memories" else [] for section in SECTIONS.values()}


async def _vectors(ms: AsyncMemstack, memories: Sequence[Mapping[str, Any]]) -> dict[str, Vector]:
    stored = [m for m in memories if m.get("stored")]
    vectors: dict[str, Vector] = {}
    for start in range(0, len(stored), _EMBED_BATCH):
        part = stored[start : start + _EMBED_BATCH]
        matrix = await ms.embedder.embed([str(m.get("content", "")) for m in part])
        vectors.update((str(m["id"]), matrix[i]) for i, m in enumerate(part))
    return vectors


def _exchanges(document: Mapping[str, list[dict[str, Any]]]) -> list[ExchangeText]:
    """The archived messages of the document, as the exchanges they were embedded from."""
    out = []
    for session in document["sessions"]:
        turns = {int(t["turn"]): t for t in session["turns"] if isinstance(t.get("turn"), int)}
        speakers: dict[int, dict[str, str | None]] = {}
        for message in session["messages"]:
            if isinstance(message, Mapping) and isinstance(message.get("turn"), int):
                speakers.setdefault(message["turn"], {})[str(message.get("role"))] = message.get("speaker")
        for number, who in speakers.items():
            turn = turns.get(number)
            if turn is not None:
                texts = str(turn.get("user_text", "")), str(turn.get("assistant_text", ""))
                out.append(ExchangeText(session["id"], number, *texts, who.get("user"), who.get("assistant")))
    return out


async def _stored(ms: AsyncMemstack, user: UserRef) -> list[tuple[str, Mapping[str, Any]]]:
    return [(SECTIONS[r.kind], r.data) async for r in ms.store.users.export(user)]


async def import_document(
    ms: AsyncMemstack, source: str | bytes | Mapping[str, Any], *, tenant: str | None, max_bytes: int = MAX_IMPORT_BYTES
) -> ImportReport:
    document = read_document(source, max_bytes=max_bytes)
    if tenant is not None and tenant != document.tenant:
        raise ImportConflict(
            f"the document is user {document.user_id!r} of tenant {document.tenant!r}, not of tenant {tenant!r}: an "
            "import writes a user into the tenant it was exported from; nothing was imported"
        )
    user = UserRef(document.user_id, tenant=document.tenant)
    with fenced(await pin(ms.store.users, user)):
        stored = await _stored(ms, user)
        if stored:
            if stored == [(SECTIONS[r.kind], r.data) for r in document.records()]:
                return ImportReport(user.tenant, user.user_id, unchanged=True)
            raise ImportConflict(
                f"user {user.user_id!r} of tenant {user.tenant!r} already holds data that differs from the document: "
                "erase the user first (`memstack users delete`) to replace it with the document; nothing was imported"
            )
        return await _load(ms, user, document)


async def _load(ms: AsyncMemstack, user: UserRef, document: UserDocument) -> ImportReport:
    with accounting(Account(ms.telemetry, user.tenant, user.user_id)):  # its embedding calls are the user's
        return await _write(ms, user, document)


async def _write(ms: AsyncMemstack, user: UserRef, document: UserDocument) -> ImportReport:
    sections = dict(document.sections)
    vectors = await _vectors(ms, sections["memories"])
    added = await ms.store.users.load(user, sections, vectors)
    exchanges = _exchanges(sections)
    if exchanges:
        added["archive_vectors"] = await ms._chat().ingestor.vectorizer.embed(user, exchanges)
    return ImportReport(user.tenant, user.user_id, added)


async def import_mem0(ms: AsyncMemstack, data: Any, *, user_id: str | None, tenant: str | None) -> list[ImportReport]:
    reports = []
    for owner, memories in mem0_memories(data, user_id=user_id).items():
        user = UserRef(owner, tenant=tenant_of(tenant))
        with fenced(await pin(ms.store.users, user)), accounting(Account(ms.telemetry, user.tenant, user.user_id)):
            vectors = await _vectors(ms, memories)
            added = await ms.store.users.load(user, _sections(memories), vectors, merge=True)
        skipped = len(memories) - added.get("memories", 0)
        reports.append(ImportReport(user.tenant, user.user_id, added, skipped == len(memories), skipped))
    return reports


#: Opens the lines of a JSONL input, again on each call.
Lines = Callable[[], Iterator[str | bytes]]


def jsonl_lines(source: Path | str | Iterable[str | bytes | Mapping[str, Any]]) -> Lines:
    """``source`` (a file, read a line at a time; JSONL text; or lines, or messages as dicts) as :data:`Lines`."""
    if isinstance(source, Path):
        path = source

        def read() -> Iterator[str]:
            try:
                handle = path.open(encoding="utf-8", newline="")
            except OSError as exc:
                raise InputError(f"cannot read the messages file {str(path)!r}: {exc.strerror or exc}") from None
            with handle:
                yield from handle

        return read
    items = source.splitlines() if isinstance(source, str) else list(source)
    lines = [item if isinstance(item, str | bytes) else json.dumps(item) for item in items]
    return lambda: iter(lines)


def _exchanges_of(messages: list[LineMessage]) -> list[list[LineMessage]]:
    """Each user message with the replies after it: one ingest call each, so every user message is archived (and
    its memories dated) at its own time, where one call would join a run of them into one exchange at the first's."""
    out: list[list[LineMessage]] = []
    for message in messages:
        if message.role == "user" or not out:
            out.append([message])
        else:
            out[-1].append(message)
    return out


async def import_messages(
    ms: AsyncMemstack, lines: Lines, *, tenant: str | None, capture: bool = True, chunk: int = CHUNK
) -> list[ImportReport]:
    try:
        for _ in read_lines(lines()):  # every line checked before anything is written
            pass
    except UnicodeDecodeError:
        raise ImportRefused("the messages are not UTF-8; nothing was imported") from None
    totals: dict[str, dict[str, int]] = {}
    for group in chunks(read_lines(lines()), chunk):
        for (owner, session), messages in group.items():
            user = UserRef(owner, tenant=tenant_of(tenant))
            counts = totals.setdefault(owner, {"messages": 0, "turns": 0, "memory_updates": 0})
            exchanges = _exchanges_of(sorted(messages, key=lambda m: m.at))
            for i, exchange in enumerate(exchanges):
                last = i == len(exchanges) - 1
                result = await ms.ingest(user, session, [m.message() for m in exchange], capture=capture, end=last)
                counts["messages"] += len(exchange)
                counts["turns"] += len(result.turns)
                counts["memory_updates"] += len(result.memory_updates)
    return [ImportReport(tenant_of(tenant), owner, counts) for owner, counts in totals.items()]
