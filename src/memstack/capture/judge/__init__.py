"""The update judge role: does a user's news supersede, update or leave the memories it is about?

Chosen by its own setting, never by another role's type (``update_model`` / ``$MEMSTACK_UPDATE_MODEL``; unset, it
follows ``classifier_model``, and with neither it is offline)::

    judge = get_update_judge("offline")                  # no model: a cross-encoder, memstack.capture.judge.offline
    judge = get_update_judge("openai:gpt-4o-mini")       # one structured call per batch, offline fallback
    verdicts = await judge.judge([JudgeItem(candidate, nearest)])

The contract (:class:`UpdateJudge`, the verdicts) is :mod:`~memstack.capture.judge.base`; the model judge is
:mod:`~memstack.capture.judge.model`. A judge is an async resource: close it with ``aclose``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memstack.capture.judge.base import UPDATE_NEIGHBOURS, JudgeItem, UpdateJudge, UpdateKind, UpdateVerdict

__all__ = [
    "OFFLINE_JUDGES",
    "UPDATE_NEIGHBOURS",
    "JudgeItem",
    "UpdateJudge",
    "UpdateKind",
    "UpdateVerdict",
    "get_update_judge",
    "register_offline_judge",
]


def _learned(*, embedder: Any = None) -> UpdateJudge:
    from memstack.capture.judge.offline import LearnedJudge

    return LearnedJudge(embedder)


#: Offline judges by name; ``offline`` is the default one. Each factory takes the engine's embedder as ``embedder``.
OFFLINE_JUDGES: dict[str, Callable[..., UpdateJudge]] = {"offline": _learned}


def register_offline_judge(name: str, factory: Callable[..., UpdateJudge]) -> None:
    """Make ``name`` a judge ``get_update_judge`` can build (a name with no provider prefix; ``offline:…``)."""
    OFFLINE_JUDGES[name] = factory


def get_update_judge(spec: str | None = None, **options: Any) -> UpdateJudge:
    """``None`` or an offline name: that offline judge; otherwise a chat model string (``openai:gpt-4o-mini``): the
    model judge, falling back to the offline one. ``embedder`` goes to the offline judge; ``base_url``, ``api_key``,
    ``timeout_s`` and ``attempts`` to the model judge. ``ConfigError`` (naming the variable to set) when the model
    cannot be reached."""
    embedder = options.pop("embedder", None)
    name = (spec or "offline").strip()
    if name in OFFLINE_JUDGES:
        return OFFLINE_JUDGES[name](embedder=embedder)
    from memstack.capture.judge.model import ModelJudge

    return ModelJudge.from_spec(name, OFFLINE_JUDGES["offline"](embedder=embedder), **options)
