"""Settings of the HTTP server (the library's own settings are :class:`memstack.config.Config`)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Any, Literal

from memstack.errors import ConfigError

__all__ = ["ServerSettings", "is_loopback"]

AuthMode = Literal["keys", "local", "auto"]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and addresses in 127.0.0.0/8 or ``::1``: reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How the server authenticates and what it accepts.

    ``auth``: ``"keys"`` (every request needs ``Authorization: Bearer KEY``; the key names the tenant) or ``"local"``
    (requests without a key act for tenant ``default``; meant for a server bound to 127.0.0.1 only — ``memstack serve``
    refuses it on any other address), or ``"auto"`` (local until a key exists, then keys: a key created while the
    server runs is required within ``key_cache_s``). A key this store knows acts for its tenant in every mode; while
    the server is local, any other bearer key (a placeholder a client insists on sending) acts for ``default``.
    Outside ``keys`` mode only requests whose ``Host`` is a loopback address or ``localhost`` are answered (403
    otherwise: no DNS rebinding from a web page).
    ``key_cache_s``: how long an accepted key is trusted without asking the database again (a key revoked by another
    process stops working within this time; one revoked through this server's store at once).
    ``max_body_bytes``: larger request bodies get 413. ``max_message_chars``: longest chat message accepted (and
    longest message of an import). ``max_ingest_messages``: most messages one import request may carry (400 beyond:
    the import runs in the request, so a bigger conversation is imported in parts).
    ``query_cache``: search queries whose embeddings are kept (LRU); 0 disables the cache.
    ``gc_freeze_s``: every so many seconds, collect the young objects and move every live object out of the garbage
    collector's sight (``gc.freeze``), so that a collection never walks the long-lived caches: without it a full
    collection over a warm server's heap stalls every request in flight at once. ``None`` (the default for an app
    built by ``create_app``) leaves the process's collector alone; ``memstack serve`` uses 10.
    ``idempotency_ttl_s``: how long the answer to a write sent with an ``Idempotency-Key`` is kept for its retries
    (a day); ``idempotency_stale_s``: how long a first request may stay unanswered before the same request, retried,
    is run again (its process is taken for dead); expired answers are deleted every ``idempotency_sweep_s``
    (:mod:`memstack.server.idempotency`).
    ``metrics_token``: the bearer token ``GET /metrics`` requires (``$MEMSTACK_METRICS_TOKEN``); without one only a
    local server serves the metrics (:mod:`memstack.server.metrics`). ``metrics_tenants``: how many tenants get a
    label of their own in the metrics (the first seen; the rest are ``other``; 0: none, ``all``), so a service with
    many tenants keeps its scrapes small (``$MEMSTACK_METRICS_TENANTS``).
    """

    auth: AuthMode = "keys"
    key_cache_s: float = 10.0
    max_body_bytes: int = 1_000_000
    max_message_chars: int = 32_000
    max_ingest_messages: int = 5_000
    query_cache: int = 4096
    query_batch: int = 32  # short queries embed fastest per CPU-second in batches of 16-32
    gc_freeze_s: float | None = None
    idempotency_ttl_s: float = 86_400.0
    idempotency_stale_s: float = 600.0
    idempotency_sweep_s: float = 600.0
    metrics_token: str | None = None
    metrics_tenants: int = 20

    def __post_init__(self) -> None:
        if self.auth not in ("keys", "local", "auto"):
            raise ConfigError(f"auth must be 'keys', 'local' or 'auto', got {self.auth!r}")
        if self.gc_freeze_s is not None and self.gc_freeze_s <= 0:
            raise ConfigError(f"gc_freeze_s must be positive or None, got {self.gc_freeze_s}")
        if self.max_body_bytes < 1024 or self.max_message_chars < 1 or self.query_cache < 0 or self.query_batch < 1:
            raise ConfigError("max_body_bytes must be ≥ 1024, max_message_chars and query_batch ≥ 1, query_cache ≥ 0")
        if min(self.idempotency_ttl_s, self.idempotency_stale_s, self.idempotency_sweep_s) <= 0:
            raise ConfigError("idempotency_ttl_s, idempotency_stale_s and idempotency_sweep_s must be positive")
        if self.max_ingest_messages < 1:
            raise ConfigError(f"max_ingest_messages must be ≥ 1, got {self.max_ingest_messages}")
        if self.metrics_tenants < 0:
            raise ConfigError(f"metrics_tenants must be ≥ 0, got {self.metrics_tenants}")

    @classmethod
    def from_env(cls, **settings: Any) -> ServerSettings:
        """``settings``, with the metrics' from ``$MEMSTACK_METRICS_TOKEN`` and ``$MEMSTACK_METRICS_TENANTS``."""
        token = os.environ.get("MEMSTACK_METRICS_TOKEN", "").strip() or None
        tenants = os.environ.get("MEMSTACK_METRICS_TENANTS", "").strip()
        if tenants and not tenants.isdigit():
            raise ConfigError(f"$MEMSTACK_METRICS_TENANTS must be a whole number ≥ 0, got {tenants!r}")
        found: dict[str, Any] = {"metrics_token": token}
        if tenants:
            found["metrics_tenants"] = int(tenants)
        return cls(**{**found, **settings})
