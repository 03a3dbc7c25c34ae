"""Identifiers, time and the scope of every call (tenant and user): the base the other domain types build on."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from memstack.errors import InputError

__all__ = ["MAX_CONTENT_CHARS", "UserRef", "Vector", "new_id", "new_ids", "utcnow"]


Vector = npt.NDArray[np.float32]


#: Longest memory content accepted; longer text is a document, not a memory.
MAX_CONTENT_CHARS = 2000


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
            value = getattr(self, name)
            if not value or len(value) > 200 or not value.isprintable():
                raise InputError(f"{name} must be 1-200 printable characters, got {value!r}")
