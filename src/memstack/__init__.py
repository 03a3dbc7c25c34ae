"""memstack: layered context and long-term memory for LLM apps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memstack.blocking import Memstack
    from memstack.config import Config, TierLimits
    from memstack.engine import AsyncMemstack
    from memstack.errors import (
        BudgetExceeded,
        ConfigError,
        DimensionMismatch,
        InputError,
        LimitReached,
        MalformedResponse,
        MemstackError,
        MigrationError,
        NotFound,
        OverrideViolation,
        ProviderError,
        ProviderTimeout,
        StoreBusy,
        StoreError,
        StoreUnavailable,
    )
    from memstack.types import (
        Category,
        DeletedBy,
        Fact,
        Fragment,
        Layer,
        Memory,
        MemoryEvent,
        MemoryFilter,
        MemoryPatch,
        MemoryUsage,
        NewMemory,
        ScoredMemory,
        SessionState,
        Source,
        TurnSummary,
        UserRef,
    )

#: Where each public name lives. Importing ``memstack`` imports none of them: ``memstack --help`` (a submodule of
#: this package) must not pay for the engine, numpy and the models, so each name is imported on first use (PEP 562).
_LAZY: dict[str, str] = {
    "AsyncMemstack": "memstack.engine",
    "BudgetExceeded": "memstack.errors",
    "Category": "memstack.types",
    "Config": "memstack.config",
    "ConfigError": "memstack.errors",
    "DeletedBy": "memstack.types",
    "DimensionMismatch": "memstack.errors",
    "Fact": "memstack.types",
    "Fragment": "memstack.types",
    "InputError": "memstack.errors",
    "Layer": "memstack.types",
    "LimitReached": "memstack.errors",
    "MalformedResponse": "memstack.errors",
    "Memory": "memstack.types",
    "MemoryEvent": "memstack.types",
    "MemoryFilter": "memstack.types",
    "MemoryPatch": "memstack.types",
    "MemoryUsage": "memstack.types",
    "Memstack": "memstack.blocking",
    "MemstackError": "memstack.errors",
    "MigrationError": "memstack.errors",
    "NewMemory": "memstack.types",
    "NotFound": "memstack.errors",
    "OverrideViolation": "memstack.errors",
    "ProviderError": "memstack.errors",
    "ProviderTimeout": "memstack.errors",
    "ScoredMemory": "memstack.types",
    "SessionState": "memstack.types",
    "Source": "memstack.types",
    "StoreBusy": "memstack.errors",
    "StoreError": "memstack.errors",
    "StoreUnavailable": "memstack.errors",
    "TierLimits": "memstack.config",
    "TurnSummary": "memstack.types",
    "UserRef": "memstack.types",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memstack' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "AsyncMemstack",
    "BudgetExceeded",
    "Category",
    "Config",
    "ConfigError",
    "DeletedBy",
    "DimensionMismatch",
    "Fact",
    "Fragment",
    "InputError",
    "Layer",
    "LimitReached",
    "MalformedResponse",
    "Memory",
    "MemoryEvent",
    "MemoryFilter",
    "MemoryPatch",
    "MemoryUsage",
    "Memstack",
    "MemstackError",
    "MigrationError",
    "NewMemory",
    "NotFound",
    "OverrideViolation",
    "ProviderError",
    "ProviderTimeout",
    "ScoredMemory",
    "SessionState",
    "Source",
    "StoreBusy",
    "StoreError",
    "StoreUnavailable",
    "TierLimits",
    "TurnSummary",
    "UserRef",
    "__version__",
]
