"""How a delivery is signed, as Stripe signs its webhooks: ``Memstack-Signature: t=<unix seconds>,v1=<hex>``, the hex
being HMAC-SHA256, keyed with the endpoint's secret, of ``<t>.<the request body's bytes>``.

The timestamp is inside what is signed, so a receiver that refuses old timestamps (:func:`verify_signature`: five
minutes) cannot be sent a recorded delivery again later; each attempt is signed anew. A receiver compares in
constant time (``hmac.compare_digest``), and a header may carry several ``v1=`` values (none today; room for a
secret being rotated), any of which may match.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

__all__ = ["SIGNATURE_HEADER", "TOLERANCE_S", "new_secret", "sign", "verify_signature"]

SIGNATURE_HEADER = "Memstack-Signature"
#: How old a signature's timestamp :func:`verify_signature` accepts by default.
TOLERANCE_S = 300


def new_secret() -> str:
    """A new endpoint's signing secret (256 random bits)."""
    return f"whsec_{secrets.token_urlsafe(32)}"


def _digest(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The ``Memstack-Signature`` header's value for ``body`` sent at ``timestamp`` (now by default)."""
    t = int(time.time()) if timestamp is None else timestamp
    return f"t={t},v1={_digest(secret, t, body)}"


def verify_signature(
    secret: str, body: bytes, header: str, *, tolerance_s: float = TOLERANCE_S, now: float | None = None
) -> bool:
    """Whether ``header`` (the ``Memstack-Signature`` a receiver got) signs ``body`` (the raw bytes, before any JSON
    parsing) with ``secret``, at a timestamp at most ``tolerance_s`` seconds from ``now``."""
    parts: dict[str, list[str]] = {}
    for item in header.split(","):
        key, _, value = item.strip().partition("=")
        parts.setdefault(key, []).append(value)
    try:
        timestamp = int(parts["t"][0])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance_s:
        return False
    expected = _digest(secret, timestamp, body)
    return any(hmac.compare_digest(expected, given) for given in parts.get("v1", []))
