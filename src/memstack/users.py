"""The user export document: everything memstack holds about one user, as one JSON object written in pieces.

Format ``memstack.user-export``, version 2 (a change that removes or renames a field raises the version)::

    {
      "format": "memstack.user-export", "version": 2,
      "tenant": "...", "user_id": "...", "exported_at": "2026-11-25T18:00:00+00:00",
      "vectors": "not exported: ...",
      "responses": "not exported: ...",
      "memories": [
        {"id", "agent_id", "content", "category", "source", "confidence", "is_active", "deleted_by",
         "created_at", "updated_at", "observed_at", "expires_at", "merged_into", "source_turn_ids", "metadata",
         "valid_from", "valid_to",                       # when it held in the user's life (null: unknown)
         "stored": true,
         "history": [{"action", "before", "after", "at", "actor", "note"}, ...],
         "hides": [{"kind", "session_id", "turn", "text"}, ...]},  # what its forget keeps from the model
        {"id", "stored": false, "history": [...], "hides": [...]}  # permanently deleted: history (and hides) remain
      ],
      "sessions": [
        {"id", "agent", "turn_count", "version", "facts", "last_consolidated_turn", "line", "line_turn",
         "created_at", "updated_at", "ended_at",
         "turns": [{"turn", "at", "route", "status", "user_text", "assistant_text", "user_summary",
                    "assistant_summary", "outcome", "flags", "attempts", "error", "user_keep", "assistant_keep"}],
         "messages": [{"turn", "role", "speaker", "text"}],     # the archived messages recall searches
         "artifacts": [{"turn", "idx", "kind", "role", "language", "label", "content", "created_at"}],
         "snapshots": [{"turn", "reason", "facts", "at"}]}
      ],
      "contexts": [{"context_id", "session_id", "created_at", "manifest"}],
      "jobs": [{"id", "kind", "key", "status", "attempts", "created_at", "updated_at", "payload", "result", "error"}],
      "dropped_captures": [{"count", "first_at", "last_at"}],    # automatic captures a full tier kept out (0 or 1)
      "sha256": "..."                                             # the integrity check, last (see below)
    }

Memories include active, forgotten and superseded ones (``is_active`` false, ``deleted_by``, ``merged_into``); the
past version a superseding news leaves (inactive, no ``deleted_by``, a ``valid_to``) is a memory of its own, so an
``as_of`` read finds it. ``valid_from``/``valid_to`` are new fields of version 1 (added, none renamed or removed).
``hides`` lists what a memory's forget keeps from the model besides it (:mod:`memstack.types.forget`: an exchange
of a session by its turn, a fact or a summary line by its text); the exchanges, facts and lines themselves are in
``sessions`` as they were said and written: hiding changes what the model sees, not the user's record.
Times are ISO 8601. Embedding vectors are not exported: they are derived from the text, which is, and are
meaningless outside the model that made them. Responses kept under an HTTP write's ``Idempotency-Key``
(``idempotency_keys``) are not exported either: each is a copy, kept at most a day so that a retried request gets the
same answer, of an answer built from what the document holds where it lives (memories, sessions, contexts); they
are erased with the user like everything else. A user the store has never seen exports with every list empty.

``sha256`` is the hex SHA-256 of the document's identity and records (:class:`Digest`: the line
``tenant\x1fuser_id``, then per record its section's name, a tab, the record's canonical JSON and a newline). The
canonical form (:func:`canonical`: keys sorted, a whole number written as an integer) is what survives a parse and
a re-serialization by any JSON library, so a document that went through a JavaScript client, or was re-indented,
still checks; a changed value does not. It comes last, so a document cut short lacks it, and an import
(:mod:`memstack.imports.document`) recomputes it from what it parsed and refuses a document whose records or
identity were changed after the export (a deliberate change must recompute it: the check is against accidents and
careless edits, not a signature).

Version 1 (before the import existed) had no ``sha256``, a store-internal ``seq`` on each message and no ``key`` on
jobs; the import reads it still: without the integrity check, ignoring ``seq``, a job's ``key`` taken as its id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any

from memstack.errors import StoreError
from memstack.types import RecordKind, UserRecord, UserRef, utcnow

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "READABLE_VERSIONS",
    "SECTIONS",
    "Digest",
    "canonical",
    "dumps",
    "export_document",
]

EXPORT_FORMAT = "memstack.user-export"
EXPORT_VERSION = 2
#: The versions an import reads (see the module docstring for what version 1 lacks).
READABLE_VERSIONS = (1, 2)

#: Record kind → the document's list that holds it, in the order they are written.
SECTIONS: dict[RecordKind, str] = {
    "memory": "memories",
    "session": "sessions",
    "context": "contexts",
    "job": "jobs",
    "dropped": "dropped_captures",
}

_VECTORS = "not exported: embedding vectors are derived from the exported text by the configured embedding model"
_RESPONSES = (
    "not exported: answers to HTTP writes sent with an Idempotency-Key are kept at most a day, so that a retry gets "
    "the same answer; each copies what this document holds where it lives (memories, sessions, contexts)"
)


def dumps(value: Any) -> str:
    """Compact JSON as the document is written (and as its digest reads a record)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)  # JSON has one number type: 1.0 and 1 are one value (JavaScript writes both as 1)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """A record's JSON in the form its digest reads: keys sorted, whole numbers as integers, compact."""
    return json.dumps(_plain(value), ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class Digest:
    """The document's ``sha256``, fed the records in the order they are written."""

    def __init__(self, tenant: str, user_id: str) -> None:
        self._hash = hashlib.sha256(f"{tenant}\x1f{user_id}\n".encode())

    def add(self, section: str, record: Any) -> None:
        """One record of ``section`` (its :func:`canonical` form)."""
        self._hash.update(f"{section}\t{canonical(record)}\n".encode())

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


async def export_document(user: UserRef, records: AsyncIterator[UserRecord]) -> AsyncIterator[str]:
    """The export of ``user`` as pieces of JSON text (a header, then one piece per record) that join to one
    document; ``records`` come section by section, as :meth:`memstack.store.base.UserData.export` yields them."""
    header = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "tenant": user.tenant,
        "user_id": user.user_id,
        "exported_at": utcnow().isoformat(),
        "vectors": _VECTORS,
        "responses": _RESPONSES,
    }
    digest = Digest(user.tenant, user.user_id)
    yield dumps(header)[:-1]
    order = list(SECTIONS)
    written = -1  # index in ``order`` of the section open now
    first = True
    async for item in records:
        at = order.index(item.kind)
        if at < written:
            raise StoreError(f"the store yielded export records out of order: {item.kind} after {order[written]}")
        while written < at:
            written += 1
            yield ("]" if written > 0 else "") + f',"{SECTIONS[order[written]]}":['
            first = True
        text = dumps(item.data)
        digest.add(SECTIONS[item.kind], item.data)
        yield ("" if first else ",") + text
        first = False
    while written < len(order) - 1:
        written += 1
        yield ("]" if written > 0 else "") + f',"{SECTIONS[order[written]]}":['
    yield f'],"sha256":"{digest.hexdigest()}"}}\n'
