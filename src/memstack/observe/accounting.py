"""Who a model call is for and what it was for: the account and the role, carried by context variables.

A model call is counted where it is made, once: the OpenAI-compatible client (:mod:`memstack.models.openai_compat`)
and the remote embedder call :func:`record_model_call` with the tokens the endpoint reported. Two context variables
say the rest, so no caller in between passes anything along:

- the **role** (:func:`role`): what the call is for. Each role sets it around its own call (the classifier, the
  update judge, the summarizer, the remote embedder); a chat turn's steps run as ``chat``, so the phase-1 calls need
  no marking, and work a turn starts (detection, phase 2) inherits ``chat`` until its own role says otherwise.
  A call outside every role is ``other``.
- the **account** (:func:`accounting`): whose call it is (tenant, user), the engine's telemetry
  (:class:`~memstack.observe.telemetry.Telemetry`), and, for a turn, the turn's :class:`Ledger`: what its reply
  reports. Tasks inherit the account of the
  code that started them (asyncio copies the context), so a turn's detection and phase 2 are the turn's user's.

A call under no account is not counted anywhere: every engine path that calls models sets one (a turn, the resume
of work left pending, consolidation, import). Setting and reading a context variable costs well under a
microsecond, and a call is counted in a few dictionary updates: accounting is always on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from memstack.observe.prices import PriceTable
from memstack.types import ModelUsage

__all__ = [
    "ROLES",
    "Account",
    "Ledger",
    "ModelCall",
    "accounting",
    "current_account",
    "current_role",
    "record_model_call",
    "role",
]

#: The roles a model call can have (``other``: made outside all of them).
ROLES = ("chat", "classifier", "update_judge", "summarizer", "embeddings", "other")

_role: ContextVar[str] = ContextVar("memstack_model_role", default="other")
_account: ContextVar[Account | None] = ContextVar("memstack_account", default=None)


class Sink(Protocol):
    """Where an account's model calls go: the engine's :class:`~memstack.observe.telemetry.Telemetry` (named by
    this Protocol, so that the hub can import the calls it counts and nothing imports back)."""

    @property
    def prices(self) -> PriceTable: ...

    def model_call(self, call: ModelCall) -> None: ...


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One call to a model endpoint: ``error`` when it failed (its tokens are then 0, and so its cost);
    ``cost_usd`` ``None`` when the model has no price. ``tenant``/``user_id``: the account's (``None`` for work of
    no one user)."""

    role: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    error: bool
    cost_usd: float | None
    tenant: str | None
    user_id: str | None
    seconds: float


@dataclass(slots=True)
class _Tally:
    calls: int = 0
    errors: int = 0
    prompt: int = 0
    completion: int = 0
    cost: float | None = 0.0  # None once any call had no price

    def add(self, call: ModelCall) -> None:
        self.calls += 1
        self.errors += call.error
        self.prompt += call.prompt_tokens
        self.completion += call.completion_tokens
        if call.cost_usd is None:
            self.cost = None
        elif self.cost is not None:
            self.cost += call.cost_usd

    def usage(self, role: str, model: str) -> ModelUsage:
        return ModelUsage(role, model, self.calls, self.errors, self.prompt, self.completion, self.cost)


class Ledger:
    """Model calls summed by (role, model): one turn's, or one user's (:class:`~memstack.observe.usage.UsageBook`)."""

    __slots__ = ("_tallies",)

    def __init__(self) -> None:
        self._tallies: dict[tuple[str, str], _Tally] = {}

    def add(self, call: ModelCall) -> None:
        key = (call.role, call.model)
        tally = self._tallies.get(key)
        if tally is None:
            tally = self._tallies[key] = _Tally()
        tally.add(call)

    def usage(self) -> tuple[ModelUsage, ...]:
        """The sums, roles in :data:`ROLES` order, then by model."""
        order = {name: i for i, name in enumerate(ROLES)}
        keys = sorted(self._tallies, key=lambda k: (order.get(k[0], len(order)), k))
        return tuple(self._tallies[k].usage(*k) for k in keys)

    def __len__(self) -> int:
        return len(self._tallies)


@dataclass(frozen=True, slots=True)
class Account:
    """Whose work runs here: the engine's telemetry, the tenant and user (``None`` for work of many), and
    the ledger of a turn (what its reply reports). ``trace``: the turn's span context, the parent of the spans of
    the work it starts (:mod:`memstack.observe.tracing`)."""

    telemetry: Sink
    tenant: str | None = None
    user_id: str | None = None
    ledger: Ledger | None = None
    trace: Any = None


@contextmanager
def role(name: str) -> Iterator[None]:
    """Model calls in this block (and in tasks it starts) are for ``name`` (one of :data:`ROLES`)."""
    token = _role.set(name)
    try:
        yield
    finally:
        _role.reset(token)


@contextmanager
def accounting(account: Account | None) -> Iterator[None]:
    """Model calls in this block (and in tasks it starts) are counted for ``account`` (``None``: not counted)."""
    token = _account.set(account)
    try:
        yield
    finally:
        _account.reset(token)


def current_role() -> str:
    return _role.get()


def current_account() -> Account | None:
    return _account.get()


def record_model_call(
    model: str,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    *,
    error: bool = False,
    reported: bool = True,
    seconds: float = 0.0,
) -> None:
    """Count one call of ``model`` (memstack's model string) for the current account and role; nothing under no
    account. ``reported``: the endpoint reported the tokens (a stream from a server that reports none did not: its
    cost is then unknown, not zero)."""
    account = _account.get()
    if account is None:
        return
    cost = account.telemetry.prices.cost(model, prompt_tokens, completion_tokens) if reported else None
    call = ModelCall(
        _role.get(), model, prompt_tokens, completion_tokens, error, cost, account.tenant, account.user_id, seconds
    )
    if account.ledger is not None:
        account.ledger.add(call)
    account.telemetry.model_call(call)
