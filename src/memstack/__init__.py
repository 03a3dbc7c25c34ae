"""memstack: layered context and long-term memory for LLM apps."""

from __future__ import annotations

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
