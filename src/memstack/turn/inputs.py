"""Checking what a chat call was given, before any work starts: message, session metadata, delegated task.

Text no store can keep (NUL, lone surrogates: :func:`memstack.types.check_text`) is refused here, so a turn never
starts with it: it would reply and then fail to archive the exchange."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from memstack.context import DelegatedTask, SessionMeta, build_session
from memstack.dates import out_of_range
from memstack.errors import InputError
from memstack.types import check_data, check_text

__all__ = ["MAX_MESSAGE_CHARS", "TurnLimits", "check_message", "delegated_task", "session_meta"]

#: Longest user message a turn accepts by default; longer text is a document to upload, not a chat message.
MAX_MESSAGE_CHARS = 32_000
_MAX_PAYLOAD_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class TurnLimits:
    max_message_chars: int = MAX_MESSAGE_CHARS
    max_payload_chars: int = _MAX_PAYLOAD_CHARS


def check_message(message: str, limits: TurnLimits) -> str:
    check_text(message, "the message")
    if not isinstance(message, str) or not message.strip():
        raise InputError("the message is empty; send the user's message as text")
    if len(message) > limits.max_message_chars:
        raise InputError(
            f"the message is {len(message)} characters; a chat message may have at most {limits.max_message_chars}. "
            "Send long documents in parts or summarize them first"
        )
    return message


def session_meta(
    metadata: Mapping[str, Any] | SessionMeta | None, *, tenant: str, now: datetime | None = None
) -> SessionMeta:
    """Layer 3 for this request. Client values go through :func:`memstack.context.build_session` (bad optional
    fields fall back and are noted in the manifest), except a time zone that names no zone or a local time off the
    calendar memstack computes with: those are the caller's mistakes and raise ``InputError``, because every date
    the model computes would silently be wrong. The tenant line is the authenticated ``tenant`` (none for the
    ``default`` tenant), whatever the metadata says: a client cannot name itself another tenant or an
    administrator."""
    own = None if tenant == "default" else tenant
    if isinstance(metadata, SessionMeta):
        return metadata if metadata.tenant == own else replace(metadata, tenant=own)
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InputError(f"metadata must be an object of session fields, got {type(metadata).__name__}")
    check_data(metadata, "metadata")  # never stored, but shown in the stored context manifest
    raw: dict[str, Any] = dict(metadata or {})
    meta = build_session(raw, now=now, tenant=own)
    if "timezone_invalid" in meta.notes:
        raise InputError(
            f"unknown time zone {raw.get('timezone')!r}; send an IANA name such as 'Europe/Paris' or 'UTC', "
            "or leave it out"
        )
    if "local_time_out_of_range" in meta.notes:
        raise out_of_range("metadata.local_time", repr(raw.get("local_time")))
    return meta


def delegated_task(value: DelegatedTask | Mapping[str, Any] | str | None, limits: TurnLimits) -> DelegatedTask | None:
    """A task spec from a parent agent: a :class:`DelegatedTask`, an object with ``instructions``, ``payload``,
    ``output_schema`` (and ``parent``), or plain instructions."""
    if value is None or isinstance(value, DelegatedTask):
        task = value
    elif isinstance(value, str):
        task = DelegatedTask(value.strip())
    elif isinstance(value, Mapping):
        unknown = set(value) - {"instructions", "payload", "output_schema", "parent"}
        if unknown:
            raise InputError(
                f"unknown delegated-task field(s) {sorted(unknown)}; use instructions, payload, output_schema, parent"
            )
        instructions = value.get("instructions", "")
        if not isinstance(instructions, str):
            raise InputError("delegated task instructions must be text")
        parent = value.get("parent")
        task = DelegatedTask(
            instructions.strip(), value.get("payload"), value.get("output_schema"), str(parent) if parent else None
        )
    else:
        raise InputError(f"a delegated task must be an object or text, got {type(value).__name__}")
    if task is None:
        return None
    check_data((task.instructions, task.payload, task.output_schema, task.parent), "the delegated task")
    if not task.instructions and task.payload is None:
        raise InputError("a delegated task needs instructions or a payload")
    size = sum(len(x if isinstance(x, str) else json.dumps(x, default=str)) for x in (task.payload, task.output_schema))
    if size + len(task.instructions) > limits.max_payload_chars:
        raise InputError(
            f"the delegated task is {size + len(task.instructions)} characters; at most {limits.max_payload_chars} "
            "fit in a context. Hand over a smaller payload"
        )
    return task
