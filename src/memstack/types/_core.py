"""Identifiers, time and the scope of every call (tenant and user): the base the other domain types build on."""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from memstack.errors import InputError

__all__ = [
    "MAX_CONTENT_CHARS",
    "UserRef",
    "Vector",
    "check_data",
    "check_id",
    "check_limit",
    "check_min_score",
    "check_text",
    "new_id",
    "new_ids",
    "unstorable",
    "utcnow",
]


Vector = npt.NDArray[np.float32]


#: Longest memory content accepted; longer text is a document, not a memory.
MAX_CONTENT_CHARS = 2000


#: What no store keeps exactly: NUL (PostgreSQL's text and JSON refuse it) and UTF-16 surrogates, which are halves
#: of a pair, not characters (JSON can carry a lone one as ``"\\ud800"``; UTF-8 cannot encode it at all).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(value: str) -> str | None:
    """Why no store can keep ``value`` exactly (``"contains a NUL character …"``), or ``None`` when they all can."""
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    at = found.start()
    if value[at] == "\x00":
        return (
            f"contains a NUL character (\\x00, U+0000) at position {at}; it cannot be stored. Remove it "
            "(binary data belongs in a file or base64 text, not in a message)"
        )
    if 0xDC80 <= ord(value[at]) <= 0xDCFF:  # how Python keeps a byte that did not decode (argv, files, stdin)
        return (
            f"is not UTF-8 text: byte 0x{ord(value[at]) - 0xDC00:02x} at position {at} did not decode (it arrived "
            f"as U+{ord(value[at]):04X}), so it cannot be stored. Convert the text to UTF-8 first (e.g. iconv -t utf-8)"
        )
    return (
        f"contains a lone surrogate (U+{ord(value[at]):04X}) at position {at}: half of a UTF-16 pair, not a "
        "character, so it cannot be stored. Send text as UTF-8; a JSON escape of a character outside the basic "
        "plane needs both halves (\\ud83d\\ude00)"
    )


def check_text(value: str, what: str) -> str:
    """``value`` unchanged if every store can keep it exactly; otherwise ``InputError`` naming ``what`` and the
    character. Both backends give the same answer, since callers check before any work starts."""
    if isinstance(value, bytes | bytearray):
        raise InputError(f"{what} is bytes; pass text (str): decode it first, e.g. value.decode('utf-8')")
    why = unstorable(value) if isinstance(value, str) else None
    if why is not None:
        raise InputError(f"{what} {why}")
    return value


def check_data(value: object, what: str) -> None:
    """:func:`check_text` on every string in JSON-like data (mappings' keys and values, lists, tuples), however
    deeply nested (iterative: no recursion limit to hit)."""
    stack: list[tuple[object, str]] = [(value, what)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            check_text(item, where)
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                if isinstance(key, str):
                    check_text(key, f"a key of {where}")
                    stack.append((inner, f"{where}.{key}" if len(where) < 200 else where))
                else:
                    stack.append((inner, where))
        elif isinstance(item, list | tuple):
            stack.extend((inner, where) for inner in item)


def check_id(value: object, what: str) -> str:
    """An id or name passed in (a memory, session, context or agent): 1-200 printable characters."""
    if not isinstance(value, str) or not value:
        raise InputError(f"{what} must be 1-200 printable characters, got {value!r}")
    check_text(value, what)
    if len(value) > 200 or not value.isprintable():
        raise InputError(f"{what} must be 1-200 printable characters, got {value!r}")
    return value


def check_limit(limit: object, what: str = "limit") -> int:
    """How many results a call returns (``limit``): a whole number of at least 1."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InputError(f"{what} must be a whole number of at least 1 (how many results), got {limit!r}")
    return limit


def check_min_score(min_score: object, *, low: float, high: float | None) -> float | None:
    """A score threshold (``min_score``): ``None`` (no threshold) or a finite number from ``low`` to ``high`` (no
    bound: ``None``), the range the call's scores have."""
    if min_score is None:
        return None
    value = math.nan if isinstance(min_score, bool) or not isinstance(min_score, int | float) else float(min_score)
    if not (math.isfinite(value) and value >= low and (high is None or value <= high)):
        span = f"of at least {low:g}" if high is None else f"from {low:g} to {high:g}"
        raise InputError(f"min_score must be a number {span} (the range of this call's scores), got {min_score!r}")
    return value


def utcnow() -> datetime:
    return datetime.now(UTC)


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id(prefix: str) -> str:
    """A sortable unique id: ``prefix_`` + 48-bit millisecond time + 80 random bits, base32."""
    n = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        n, r = divmod(n, 32)
        chars.append(_CROCKFORD[r])
    return f"{prefix}_{''.join(reversed(chars))}"


def new_ids(prefix: str, n: int) -> list[str]:
    """``n`` ids of :func:`new_id`'s format at once (bulk inserts): 10 time characters, 16 random ones."""
    if n <= 0:
        return []
    stamp = new_id(prefix)[: len(prefix) + 11]  # prefix, "_", the 48-bit millisecond time
    bits = np.unpackbits(np.frombuffer(os.urandom(10 * n), dtype=np.uint8).reshape(n, 10), axis=1)
    digits = bits.reshape(n, 16, 5) @ np.array([16, 8, 4, 2, 1], dtype=np.uint8)
    alphabet = np.frombuffer(_CROCKFORD.encode(), dtype=np.uint8)
    chars = alphabet[digits].tobytes().decode()
    return [stamp + chars[16 * i : 16 * (i + 1)] for i in range(n)]


@dataclass(frozen=True, slots=True)
class UserRef:
    """Whose data: every store call is scoped by tenant and user inside the query."""

    user_id: str
    tenant: str = "default"

    def __post_init__(self) -> None:
        for name in ("user_id", "tenant"):
            check_id(getattr(self, name), name)
