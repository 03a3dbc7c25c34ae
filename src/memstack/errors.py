"""Every error memstack raises on purpose.

Each message says what went wrong and what to do about it. Callers catch the
branch they can handle; ``MemstackError`` catches all of them::

    MemstackError
    ├── ConfigError              bad settings, unknown model string
    │   ├── MissingExtra         a measuring command or `hash:<dim>` needs the test fakes, not installed
    │   └── ReembedInProgress    the store is half-way through `memstack reembed` to another model
    ├── Unauthorized             no API key, or an unknown or revoked one (HTTP 401)
    ├── InputError               the caller sent something unusable (HTTP 4xx)
    │   ├── DimensionMismatch    a vector of the wrong length for the store
    │   ├── NotFound             unknown user, memory, session, context or agent
    │   ├── ImportRefused        an import document memstack cannot read (version, cut short, changed, too large)
    │   ├── ImportConflict       an import that would overwrite other data: the user differs, or ids are others'
    │   └── WebhookRefused       a webhook URL memstack will not call (not http(s), or a private address)
    ├── LimitReached             the user's tier allows no more memories
    ├── BudgetExceeded           the untrimmable layers alone exceed the token budget
    ├── OverrideViolation        layers 1-2 differ from the loaded agent (tampering)
    ├── RequestInFlight          a request with the same idempotency key is still being answered (HTTP 409)
    ├── UserErased               the user was erased while this work ran; nothing more of it is kept (HTTP 409)
    ├── StoreError               the database failed; nothing was half-written
    │   ├── StoreUnavailable     cannot connect (server down, bad URL, missing pgvector)
    │   ├── StoreBusy            another writer holds the database
    │   ├── SessionConflict      another process changed the session during this turn
    │   │   └── LeaseLost        another process took the session over (this turn's lease lapsed)
    │   └── MigrationError       the schema cannot be brought up to date
    └── ProviderError            a model endpoint failed (status, body)
        ├── ProviderTimeout      no answer within the deadline
        └── MalformedResponse    the answer could not be parsed

No error carries a secret: a message's URLs lose their password (``postgresql://ana:***@db/app``) and a connection
string its ``password=…``, however the message was made (:func:`redact`), so a mistyped setting can be printed,
logged or sent back to a client as it is.
"""

from __future__ import annotations

import re

__all__ = [
    "BudgetExceeded",
    "ConfigError",
    "DimensionMismatch",
    "ImportConflict",
    "ImportRefused",
    "InputError",
    "LeaseLost",
    "LimitReached",
    "MalformedResponse",
    "MemstackError",
    "MigrationError",
    "MissingExtra",
    "NotFound",
    "OverrideViolation",
    "ProviderError",
    "ProviderTimeout",
    "ReembedInProgress",
    "RequestInFlight",
    "SessionConflict",
    "StoreBusy",
    "StoreError",
    "StoreUnavailable",
    "Unauthorized",
    "UserErased",
    "WebhookRefused",
]  # redact and redact_log_records below are memstack's own helpers, not public API

#: ``scheme://user:password@``: the password, up to the last ``@`` before the host (a password may hold ``@``).
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^:/?#@\s'\"]*:)[^\s'\"]*@(?=[^@\s'\"]*(?:[\s'\"]|$))"
)
#: ``user:password@host/…`` or ``…@host:port`` without a scheme (how a driver quotes a URL it could not parse, its
#: ``:`` lost); a host must follow, so a model string such as ``openai:text-embedding-3-small@32`` is left alone.
_BARE_PASSWORD = re.compile(r"(?P<head>[\w.%+-]+:)[^\s'\"@/:]+@(?=(?:[\w.-]+|\[[\w:.]+\])(?:/|:\d))")
#: ``password=…`` of a libpq connection string or a URL's query (also ``sslpassword``, ``api_key``, ``apikey``).
_PASSWORD_PARAM = re.compile(r"(?P<head>\b(?:ssl)?password\s*=\s*|\bapi_?key\s*=\s*)(?:'[^']*'|[^\s&'\"]+)", re.I)

SECRET = "***"


def redact(text: str) -> str:
    """``text`` with the secrets a setting can carry replaced by ``***``: a URL's password and ``password=…`` (or
    ``api_key=…``) parameters. Every :class:`MemstackError` message goes through it; so do the server's logs."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{SECRET}@", text)
    text = _BARE_PASSWORD.sub(lambda m: f"{m['head']}{SECRET}@", text)
    return _PASSWORD_PARAM.sub(lambda m: f"{m['head']}{SECRET}", text)


def redact_log_records() -> None:
    """Redact every log record of this process from now on (:func:`redact` of its message and its traceback), by
    wrapping the log record factory: whatever handler prints it later, uvicorn's included, prints the redacted text.
    For the processes memstack owns (``memstack serve`` and its workers, ``memstack mcp``, the CLI); the library
    never calls it, since logging belongs to the application. Calling it again changes nothing."""
    import logging
    import traceback

    make = logging.getLogRecordFactory()
    if getattr(make, "memstack_redacts", False):
        return

    def redacted(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 (a malformed record: logging reports it when it formats it)
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and record.exc_info[1] is not None:  # a formatter uses exc_text when it is already set
            record.exc_text = redact("".join(traceback.format_exception(record.exc_info[1])).rstrip("\n"))
        return record

    redacted.memstack_redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(redacted)


class MemstackError(Exception):
    """Base class of every error memstack raises on purpose. Its text arguments are :func:`redact`-ed."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(arg) if isinstance(arg, str) else arg for arg in args))


#: How the test fakes' distribution is installed: from a checkout of memstack (it is not published).
TESTING_INSTALL = "pip install -e ./testing in a memstack checkout (`make install` does it)"


class ConfigError(MemstackError):
    """A setting is missing or invalid, or an optional dependency is not installed."""


class MissingExtra(ConfigError):
    """A part of memstack outside the runtime needs a package that is not installed.

    Mostly the test fakes' distribution, ``memstack-testing`` (a scripted OpenAI-compatible server, an embedded
    PostgreSQL, the ``hash:<dim>`` embedder): it lives in the repository's ``testing/`` folder, so that the runtime
    wheel carries none of it, and only the tests, ``memstack bench …`` and ``memstack eval … --backend postgres``
    use it; also an extra (``otel`` for traces). ``what`` is the part ("the embedded PostgreSQL server"), ``hint``
    an alternative, if there is one; ``package`` and ``install`` name the package and the command that installs it."""

    def __init__(
        self, what: str, hint: str = "", *, package: str = "memstack-testing", install: str = TESTING_INSTALL
    ) -> None:
        super().__init__(f"{what} needs {package}, which is not installed: {install}" + (f"; {hint}" if hint else ""))
        self.what = what
        self.package = package
        self.install = install


class ReembedInProgress(ConfigError):
    """The store is being re-embedded with another model; it opens again for normal use once that has finished."""

    def __init__(self, where: str, embedder: str, dim: int) -> None:
        super().__init__(
            f"a reembed of {where} to {embedder!r} ({dim}-d) is in progress: run `memstack reembed` to finish it "
            "(or `memstack reembed --abort` to go back to the previous model)"
        )
        self.embedder = embedder
        self.dim = dim


class Unauthorized(MemstackError):
    """The request carries no API key, or one that is unknown or revoked."""


class InputError(MemstackError):
    """The caller passed something memstack cannot accept; the message says what to send instead."""


class DimensionMismatch(InputError):
    """A vector's length differs from the dimension the store was created with."""

    def __init__(self, expected: int, got: int) -> None:
        super().__init__(
            f"vector has {got} dimensions but this store holds {expected}-d vectors; "
            "embed with the store's embedding model, or run `memstack reembed` to switch models"
        )
        self.expected = expected
        self.got = got


class NotFound(InputError):
    """The named object does not exist (or belongs to another user or tenant)."""

    def __init__(self, kind: str, key: str) -> None:
        plural = f"{kind[:-1]}ies" if kind.endswith("y") else f"{kind}s"
        super().__init__(f"no {kind} {key!r}; check the id (list them with `memstack {plural} list`)")
        self.kind = kind
        self.key = key


class ImportRefused(InputError):
    """An import's input cannot be read as what it claims to be: another format or version, JSON cut short, records
    changed after the export (its ``sha256`` differs), a record missing a field, or more than the size allowed. Nothing
    was stored; the message says what to send instead (HTTP 400, 413 for too large)."""


class ImportConflict(InputError):
    """An import would change data it does not own: the user already holds data that differs from the document, or
    the document names ids (memories, contexts, jobs) another user or tenant holds. Nothing was stored (HTTP 409)."""


class WebhookRefused(InputError):
    """A webhook URL memstack will not call: not ``http(s)://``, without a host, or one that resolves to a private,
    loopback or link-local address where the deployment does not allow those (``webhooks_allow_private``)."""


class LimitReached(MemstackError):
    """The user already holds as many active memories as their tier allows."""

    def __init__(self, tier: str, limit: int) -> None:
        super().__init__(f"the {tier} tier keeps at most {limit} memories; forget some or upgrade to keep more")
        self.tier = tier
        self.limit = limit

    @property
    def upgrade_prompt(self) -> str:
        return (
            f"You've reached the {self.limit}-memory limit of the {self.tier} plan. "
            "Upgrade to let me remember more, or ask me to forget something you no longer need."
        )


class BudgetExceeded(MemstackError):
    """The layers that are never trimmed do not fit in the token budget."""

    def __init__(self, needed: int, budget: int) -> None:
        super().__init__(
            f"the untrimmable layers need {needed} tokens but the budget is {budget}; "
            "raise budget_tokens or shorten the agent's core, the delegated task or the message"
        )
        self.needed = needed
        self.budget = budget


class OverrideViolation(MemstackError):
    """A lower layer tried to take the place of a higher one, or layers 1-2 were tampered with."""


class RequestInFlight(MemstackError):
    """Another request sent with the same ``Idempotency-Key`` is still being answered: retry in a moment, and the
    retry gets its answer (HTTP 409 with ``Retry-After``)."""


class UserErased(MemstackError):
    """The user was erased after this work began (``AsyncMemstack.erase``): its write was refused and rolled back,
    and it writes nothing more. What it wrote before the erasure went with it. Start again to write for a user of
    that id from now on (HTTP 409)."""


class StoreError(MemstackError):
    """The store failed; the operation was rolled back and nothing stored was changed."""


class StoreUnavailable(StoreError):
    """The database cannot be reached or lacks something it needs (e.g. the pgvector extension)."""


class StoreBusy(StoreError):
    """Another writer holds the database lock longer than the busy timeout."""


class SessionConflict(StoreError):
    """A turn's write was based on session state that another process changed meanwhile (nothing was written)."""


class LeaseLost(SessionConflict):
    """This turn's hold on its session lapsed and another process took the session over; the write was refused
    (nothing was written). The turn that took over carries on; retry this one."""


class MigrationError(StoreError):
    """The schema could not be migrated to the version this memstack needs."""


class ProviderError(MemstackError):
    """A model endpoint answered with an error or could not be used."""

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class ProviderTimeout(ProviderError):
    """The model endpoint did not answer within the deadline."""


class MalformedResponse(ProviderError):
    """The model answered, but not in the shape the prompt asked for."""
