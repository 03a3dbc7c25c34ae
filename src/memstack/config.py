"""Library configuration: constructor arguments first, environment second, defaults last.

Nothing here runs at import time; ``Config.resolve()`` reads the environment when it is called.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from memstack.errors import ConfigError, InputError, redact

__all__ = [
    "SEED_TIER_LIMITS",
    "UNLIMITED",
    "Config",
    "Home",
    "TierLimits",
    "default_home",
    "describe_store",
    "find_home",
]

#: The tiers of the memory seed, for apps that sell them: ``MEMSTACK_TIER_LIMITS=free=50,lite=100,pro=500,
#: premium=unlimited`` (or ``TierLimits.seed()``). Not the default: a self-hosted install keeps every memory.
SEED_TIER_LIMITS: Mapping[str, int | None] = MappingProxyType({"free": 50, "lite": 100, "pro": 500, "premium": None})
#: What usage calls the tier of a user when no tiers are configured and the caller names none.
UNLIMITED = "unlimited"


@dataclass(frozen=True, slots=True)
class TierLimits:
    """Active-memory limit per subscription tier; ``None`` means unlimited.

    No tiers (``TierLimits()``, the default) means no limit for anyone: a self-hosted install never refuses to
    remember. A tier name a caller passes (``metadata.tier``, ``tier=``) is then accepted whatever it is, since it
    selects nothing (the model still sees it in the session layer). With tiers configured, an unknown name is an
    ``InputError`` and omitting it selects ``default_tier``."""

    limits: Mapping[str, int | None] = field(default_factory=dict)
    default_tier: str = "free"

    def __post_init__(self) -> None:
        if self.limits and self.default_tier not in self.limits:
            raise ConfigError(f"the default tier {self.default_tier!r} is not among the tiers {sorted(self.limits)}")

    @classmethod
    def seed(cls, default_tier: str = "free") -> TierLimits:
        """The seed's tiers: free 50, lite 100, pro 500, premium unlimited."""
        return cls(dict(SEED_TIER_LIMITS), default_tier)

    @property
    def configured(self) -> bool:
        """Whether any tier is configured (else nothing is limited)."""
        return bool(self.limits)

    def name_for(self, tier: str | None) -> str:
        """The tier a caller's value selects: its name in lower case, else the default tier (``unlimited`` when no
        tiers are configured)."""
        if tier:
            return tier.lower()
        return self.default_tier if self.limits else UNLIMITED

    def limit_for(self, tier: str | None) -> int | None:
        if not self.limits:
            return None
        name = self.name_for(tier)
        if name not in self.limits:
            raise InputError(f"unknown tier {tier!r}; configured tiers: {', '.join(self.limits)}")
        return self.limits[name]

    @classmethod
    def parse(cls, spec: str, default_tier: str = "free") -> TierLimits:
        """Parse ``"free=50,lite=100,pro=500,premium=unlimited"``."""
        limits: dict[str, int | None] = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            name, _, value = part.partition("=")
            value = value.strip().lower()
            if not name or not value:
                raise ConfigError(f"bad tier limit {part!r}; write it as name=NUMBER or name=unlimited")
            if value in {"unlimited", "none", "inf"}:
                limits[name.strip().lower()] = None
            elif value.isdigit():
                limits[name.strip().lower()] = int(value)
            else:
                raise ConfigError(f"bad tier limit {part!r}; the limit must be a whole number or 'unlimited'")
        return cls(limits=limits, default_tier=default_tier)


def setting(key: str) -> str:
    """How an error names a setting: the ``Config`` field and the variable that sets it, ``pool_size
    ($MEMSTACK_POOL_SIZE)``."""
    return f"{key} (${ENV_PREFIX}{key.upper()})"


ENV_PREFIX = "MEMSTACK_"


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else None


#: The data directory a project may keep beside its code: used when it exists in the current directory.
LOCAL_HOME = Path(".memstack")


def default_home() -> Path:
    """The data directory when none is named: ``./.memstack`` if the current directory has one (a store made there
    keeps working), else the per-user one, ``$XDG_DATA_HOME/memstack`` (``~/.local/share/memstack``).

    Why not always ``./.memstack``: a command run from another directory then opened a new, empty store without a
    word ("alice has no memories"), and the library wrote one into every directory a script ran from. The per-user
    directory is the same from anywhere; a project that wants its own store names it (``--home``,
    ``$MEMSTACK_HOME``) or creates ``.memstack`` where it runs."""
    if LOCAL_HOME.is_dir():
        return LOCAL_HOME
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"  # XDG: relative ignored
    return base / "memstack"


@dataclass(frozen=True, slots=True)
class Home:
    """A data directory and how it was chosen (what the CLI prints beside every result it reads or writes)."""

    path: Path
    source: str  # "--home", "$MEMSTACK_HOME", "./.memstack", "per-user default"

    def describe(self) -> str:
        """``/abs/path (how it was chosen)``, e.g. ``/home/ana/.local/share/memstack (per-user default)``."""
        return f"{self.path.absolute()} ({self.source})"


def find_home(home: Path | str | None = None) -> Home:
    """The data directory :meth:`Config.resolve` uses for ``home``, with its reason: the argument, else
    ``$MEMSTACK_HOME``, else :func:`default_home`."""
    if home is not None:
        return Home(Path(home), "--home")
    if (env := _env("MEMSTACK_HOME")) is not None:
        return Home(Path(env), "$MEMSTACK_HOME")
    found = default_home()
    return Home(found, "./.memstack of this directory" if found == LOCAL_HOME else "per-user default")


@dataclass(frozen=True, slots=True)
class Config:
    """Everything an engine needs to know before it opens its store and models.

    ``home``: data directory (``$MEMSTACK_HOME``), holds ``memstack.db``; by default ``./.memstack`` when the
    current directory has one, else the per-user ``$XDG_DATA_HOME/memstack`` (``~/.local/share/memstack``; see
    :func:`default_home`).
    ``database_url``: ``postgresql://…`` selects PostgreSQL (``$MEMSTACK_DATABASE_URL``);
    ``None`` or ``sqlite:///path`` selects the embedded SQLite store.
    Model strings look like ``openai:gpt-4o-mini``; ``None`` means the offline implementation.
    ``update_model``: who judges whether news supersedes a memory (``$MEMSTACK_UPDATE_MODEL``): ``offline`` or a
    model string, chosen independently of the classifier; unset, it follows ``classifier_model``
    (:attr:`update_judge`).
    ``pool_size``: PostgreSQL connections of one process (``$MEMSTACK_POOL_SIZE``); turns hold none while the model
    answers, so a few carry thousands of concurrent turns. ``session_lease_s``: how long a session stays held by a
    turn of a process that stopped renewing it (``$MEMSTACK_SESSION_LEASE_S``; a crashed process on another machine
    blocks its sessions that long, one on this machine not at all). ``database_pooler``: ``transaction`` when
    ``database_url`` goes through a transaction-pooling pooler such as PgBouncer (``$MEMSTACK_DATABASE_POOLER``;
    default ``none``): no prepared statements, settings applied per transaction; ``database_direct_url``
    (``$MEMSTACK_DATABASE_DIRECT_URL``) then reaches PostgreSQL itself, for the work that needs a session of its
    own (building a very large user's HNSW index, ``memstack reembed``). ``database_read_url``
    (``$MEMSTACK_DATABASE_READ_URL``): a read replica that answers searches; they may lag writes by its replication
    delay.
    ``vector_cache_mb``: SQLite, the LRU cache of users' memory vectors (``$MEMSTACK_VECTOR_CACHE_MB``).
    ``tiers``: memory limits per subscription tier (``$MEMSTACK_TIER_LIMITS``, ``$MEMSTACK_DEFAULT_TIER``); none by
    default, so nothing is ever refused for a limit unless an app configures tiers (:class:`TierLimits`).
    ``recall_cache_messages``: SQLite, archived messages recall keeps indexed in memory, all users together, about
    6 KB each (``$MEMSTACK_RECALL_CACHE_MESSAGES``; users are evicted least recently used and read again when asked;
    PostgreSQL ranks the archive itself).
    ``model_prices``: prices of models, on top of the built-in table, for the cost estimates of usage and metrics
    (``$MEMSTACK_MODEL_PRICES``: ``MODEL=INPUT/OUTPUT,…`` in US dollars per million tokens; see
    :mod:`memstack.observe.prices`).
    ``webhooks_allow_private``: whether a webhook URL may reach a private, loopback or link-local address
    (``$MEMSTACK_WEBHOOKS_ALLOW_PRIVATE``, ``true``/``false``); unset, allowed only in a local deployment (the
    embedded library, a server not in ``keys`` mode). ``webhook_timeout_s``: the longest one delivery attempt may
    take, connection to last byte (``$MEMSTACK_WEBHOOK_TIMEOUT_S``). ``webhook_max_attempts`` and
    ``webhook_max_age_s``: a delivery is marked failed after that many attempts or once it was written that long ago
    (``$MEMSTACK_WEBHOOK_MAX_ATTEMPTS``, ``$MEMSTACK_WEBHOOK_MAX_AGE_S``). ``webhook_backoff_s``: the wait before
    the second attempt, doubled after each failure (with jitter, at most an hour; ``$MEMSTACK_WEBHOOK_BACKOFF_S``).
    ``webhook_poll_s``: how often an idle delivery worker looks for due deliveries (``$MEMSTACK_WEBHOOK_POLL_S``).
    See ``docs/webhooks.md``.
    """

    home: Path = field(default_factory=default_home)
    database_url: str | None = None
    embedder: str = "local:minilm"
    chat_model: str | None = None
    classifier_model: str | None = None
    summarizer_model: str | None = None
    update_model: str | None = None
    tiers: TierLimits = field(default_factory=TierLimits)
    vector_cache_mb: int = 512
    recall_cache_messages: int = 50_000
    badge_wait_s: float = 3.0
    pool_size: int = 10
    session_lease_s: float = 15.0
    database_pooler: str = "none"
    database_direct_url: str | None = None
    database_read_url: str | None = None
    model_prices: str | None = None
    webhooks_allow_private: bool | None = None
    webhook_timeout_s: float = 10.0
    webhook_max_attempts: int = 10
    webhook_backoff_s: float = 5.0
    webhook_max_age_s: float = 86_400.0
    webhook_poll_s: float = 1.0

    def __post_init__(self) -> None:
        if self.database_pooler not in ("none", "transaction"):
            raise ConfigError(
                f"{setting('database_pooler')} must be 'none' or 'transaction' (PgBouncer's pool_mode = "
                f"transaction), got {self.database_pooler!r}"
            )
        for key, low in _LOWEST.items():
            value = getattr(self, key)
            if not value >= low or (key in _POSITIVE and not value > 0):
                least = "more than 0" if key in _POSITIVE else f"at least {low}"
                raise ConfigError(f"{setting(key)} must be {least}, got {value}")

    @classmethod
    def resolve(cls, **overrides: Any) -> Config:
        """Build a config from explicit arguments, falling back to ``MEMSTACK_*`` variables."""
        env: dict[str, Any] = {"home": find_home().path}
        for key in (
            "database_url",
            "embedder",
            "chat_model",
            "classifier_model",
            "summarizer_model",
            "update_model",
            "database_pooler",
            "database_direct_url",
            "database_read_url",
            "model_prices",
        ):
            if (value := _env(f"MEMSTACK_{key.upper()}")) is not None:
                env[key] = value
        env.update(_tiers_from_env())
        if (flag := _env("MEMSTACK_WEBHOOKS_ALLOW_PRIVATE")) is not None:
            env["webhooks_allow_private"] = _flag("webhooks_allow_private", flag)
        for key, conv in _NUMBERS:
            if (raw := _env(f"MEMSTACK_{key.upper()}")) is not None:
                try:
                    env[key] = conv(raw)
                except ValueError:
                    kind = "a whole number" if conv is int else "a number"
                    raise ConfigError(f"{setting(key)} must be {kind}, got {raw!r}") from None
        explicit = {k: v for k, v in overrides.items() if v is not None}
        unknown = set(explicit) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown setting(s) {sorted(unknown)}; see memstack.Config")
        if "home" in explicit:
            explicit["home"] = Path(explicit["home"])
        return replace(cls(), **{**env, **explicit})

    @property
    def update_judge(self) -> str:
        """The update judge's setting as used: ``update_model``, else a model ``classifier_model`` names, else
        ``offline``."""
        if self.update_model:
            return self.update_model
        classifier = self.classifier_model
        return classifier if classifier and not classifier.startswith("offline") else "offline"

    @property
    def backend(self) -> str:
        url = self.database_url
        if url is None or url.startswith("sqlite:"):
            return "sqlite"
        if url.startswith(("postgresql://", "postgres://")):
            return "postgres"
        raise ConfigError(
            f"unsupported database URL {url!r} in {setting('database_url')}; use postgresql://user:pass@host/db "
            "or sqlite:///path/memstack.db"
        )

    @property
    def sqlite_path(self) -> Path:
        url = self.database_url
        if url and url.startswith("sqlite:///"):
            return Path(url.removeprefix("sqlite:///"))
        return self.home / "memstack.db"


_NUMBERS: tuple[tuple[str, type[int] | type[float]], ...] = (
    ("vector_cache_mb", int),
    ("recall_cache_messages", int),
    ("badge_wait_s", float),
    ("pool_size", int),
    ("session_lease_s", float),
    ("webhook_timeout_s", float),
    ("webhook_max_attempts", int),
    ("webhook_backoff_s", float),
    ("webhook_max_age_s", float),
    ("webhook_poll_s", float),
)
_LOWEST = {
    "vector_cache_mb": 0,
    "recall_cache_messages": 0,
    "badge_wait_s": 0,
    "pool_size": 1,
    "session_lease_s": 0,
    "webhook_timeout_s": 0,
    "webhook_max_attempts": 1,
    "webhook_backoff_s": 0,
    "webhook_max_age_s": 0,
    "webhook_poll_s": 0,
}
_POSITIVE = frozenset(
    {"session_lease_s", "webhook_timeout_s", "webhook_backoff_s", "webhook_max_age_s", "webhook_poll_s"}
)


def _flag(key: str, raw: str) -> bool:
    """A yes/no setting's variable: ``true``/``false`` (also ``1``/``0``, ``yes``/``no``)."""
    value = raw.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise ConfigError(f"{setting(key)} must be true or false, got {raw!r}")


def _tiers_from_env() -> dict[str, TierLimits]:
    """``MEMSTACK_TIER_LIMITS`` and ``MEMSTACK_DEFAULT_TIER`` (either alone, or both), errors naming the variable.
    Neither set: no tiers, no limit. ``MEMSTACK_DEFAULT_TIER`` alone picks among the seed's tiers."""
    spec, default = _env("MEMSTACK_TIER_LIMITS"), _env("MEMSTACK_DEFAULT_TIER")
    if spec is None and default is None:
        return {}
    tier = (default or "free").lower()
    try:
        return {"tiers": TierLimits.parse(spec, tier) if spec else TierLimits.seed(tier)}
    except ConfigError as exc:
        given = (("MEMSTACK_TIER_LIMITS", spec), ("MEMSTACK_DEFAULT_TIER", default))
        names = " and ".join(f"${name}" for name, value in given if value)
        hint = "" if default else " (set $MEMSTACK_DEFAULT_TIER to one of them)"
        raise ConfigError(f"{names}: {exc}{hint}") from None


def describe_store(config: Config, home: Home | None = None) -> str:
    """Where ``config``'s store is, for a person: the SQLite file's directory and how it was chosen (``home``, as
    :func:`find_home` found it), or the PostgreSQL URL without its password."""
    if config.backend == "postgres":
        assert config.database_url is not None
        return f"PostgreSQL {redact(config.database_url)} (${ENV_PREFIX}DATABASE_URL)"
    if config.database_url:
        return f"{config.sqlite_path.absolute()} (${ENV_PREFIX}DATABASE_URL)"
    if home is None or home.path != config.home:
        return f"{config.home.absolute()}"
    return home.describe()
