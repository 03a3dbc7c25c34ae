"""The user export document: everything memstack holds about one user, as one JSON object written in pieces.

Format ``memstack.user-export``, version 1 (a change that removes or renames a field raises the version)::

    {
      "format": "memstack.user-export", "version": 1,
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
         "messages": [{"seq", "turn", "role", "speaker", "text"}],     # the archived messages recall searches
         "artifacts": [{"turn", "idx", "kind", "role", "language", "label", "content", "created_at"}],
         "snapshots": [{"turn", "reason", "facts", "at"}]}
      ],
      "contexts": [{"context_id", "session_id", "created_at", "manifest"}],
      "jobs": [{"id", "kind", "status", "attempts", "created_at", "updated_at", "payload", "result", "error"}],
      "dropped_captures": [{"count", "first_at", "last_at"}]     # automatic captures a full tier kept out (0 or 1)
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
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from memstack.errors import StoreError
from memstack.types import UserRecord, UserRef, utcnow

__all__ = ["EXPORT_FORMAT", "EXPORT_VERSION", "SECTIONS", "export_document"]

EXPORT_FORMAT = "memstack.user-export"
EXPORT_VERSION = 1

#: Record kind → the document's list that holds it, in the order they are written.
SECTIONS = {
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


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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
    yield _dumps(header)[:-1]
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
        yield ("" if first else ",") + _dumps(item.data)
        first = False
    while written < len(order) - 1:
        written += 1
        yield ("]" if written > 0 else "") + f',"{SECTIONS[order[written]]}":['
    yield "]}\n"
