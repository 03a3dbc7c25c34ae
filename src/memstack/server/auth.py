"""Who is calling: ``Authorization: Bearer KEY`` → the key's tenant. Every route scopes its data to that tenant.

Accepted keys are cached in-process for ``ServerSettings.key_cache_s`` (one dict lookup per request instead of a
database read); unknown keys are never cached. In local mode a request without a key acts for tenant ``default``,
and so does one whose bearer key is not a key of this store: OpenAI's SDK (and many clients built on it) refuses to
start without a key, so a local-mode server takes any placeholder (``api_key="local"``) rather than answering it with
a 401 that only a real key could cure. A key that is known still acts for its own tenant; once the server requires
keys (``keys`` mode, or ``auto`` after a key exists) an unknown key is a 401 again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memstack.engine import Keys
from memstack.errors import Unauthorized
from memstack.server.settings import AuthMode
from memstack.store.base import hash_api_key
from memstack.types import ApiKey, UserRef

__all__ = ["Caller", "KeyCache"]

LOCAL_TENANT = "default"


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated caller: a tenant, and the key used (``None`` in local mode without a key)."""

    tenant: str
    key_id: str | None = None

    def user(self, user_id: str) -> UserRef:
        """User ids are namespaced per tenant: the same id under two keys of different tenants is two users."""
        return UserRef(user_id, self.tenant)


class KeyCache:
    """Authenticates bearer secrets against the engine's keys, remembering accepted keys for a short time."""

    def __init__(self, keys: Keys, *, ttl_s: float, mode: AuthMode) -> None:
        self._keys = keys
        self._ttl_s = ttl_s
        self._local = mode != "keys"
        self._auto = mode == "auto"
        self._next_check = 0.0
        self._accepted: dict[str, tuple[ApiKey, float]] = {}

    @property
    def local(self) -> bool:
        return self._local

    async def _still_local(self) -> bool:
        """Local mode goes on; in ``auto`` mode only until a key exists (looked for at most every ``ttl_s``, so a key
        created meanwhile, by this process or another, is required within the delay a revocation takes)."""
        if self._local and self._auto and time.monotonic() >= self._next_check:
            self._next_check = time.monotonic() + self._ttl_s
            if await self._keys.list():
                self._local = False
        return self._local

    async def caller(self, authorization: str | None) -> Caller:
        if not authorization:
            if await self._still_local():
                return Caller(LOCAL_TENANT)
            raise Unauthorized(
                "this request has no API key; send the header 'Authorization: Bearer KEY' "
                "(create a key with `memstack keys create --tenant NAME`)"
            )
        scheme, _, secret = authorization.strip().partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret:
            raise Unauthorized("the Authorization header must be 'Bearer KEY'")
        digest = hash_api_key(secret)
        now = time.monotonic()
        hit = self._accepted.get(digest)
        if hit is not None and hit[1] > now:
            return Caller(hit[0].tenant, hit[0].id)
        key = await self._keys.authenticate(secret)
        if key is None:
            self._accepted.pop(digest, None)
            if await self._still_local():
                return Caller(LOCAL_TENANT)  # a placeholder key from a client that insists on sending one
            raise Unauthorized("unknown or revoked API key; check the key, or create one with `memstack keys create`")
        if len(self._accepted) > 10_000:
            self._accepted.clear()
        self._accepted[digest] = (key, now + self._ttl_s)
        return Caller(key.tenant, key.id)

    def forget(self, key_id: str) -> None:
        """Drop a revoked key from the cache at once."""
        for digest, (key, _) in list(self._accepted.items()):
            if key.id == key_id:
                del self._accepted[digest]
