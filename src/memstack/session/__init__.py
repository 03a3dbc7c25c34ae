"""Per-session memory (seed 04, DESIGN §4): base truth, turn log, raw window, and the summarizer around them.

The pieces, each usable alone::

    decision = route_exchange(exchange, settings)                 # short / medium / long / code
    result = await SummaryRunner(summarizer, settings).run(exchange, base_truth)   # failure policy of §7
    new_truth, warnings = apply_diff(base_truth, diff, exchange)  # remove → update → add, plausibility-checked
    window = push_exchange(window, exchange, decision, settings)  # raw window with long replies kept longer
    if consolidation_due(turn, last, len(facts), settings):
        merged = await consolidate_base_truth(summarizer, facts, settings)

:class:`SessionService` puts them together for the chat turn, over a store's ``sessions`` and ``archive`` roles
(lock, durable record, phase 2, background retries, startup resume, cross-session lines).

``OfflineSummarizer`` is the default (rules + extraction, labelled offline); ``ModelSummarizer`` uses a chat model
(its own model setting, ``Config.summarizer_model``).
"""

from __future__ import annotations

from memstack.session.base import Summarizer, TurnDraft
from memstack.session.consolidate import Consolidation, consolidate_base_truth, consolidation_due, merge_facts
from memstack.session.diff import DiffResult, DiffWarning, WarningKind, apply_diff
from memstack.session.extractive import OfflineSummarizer, session_line
from memstack.session.llm import JsonChatModel, ModelSummarizer, get_summarizer
from memstack.session.lock import HeldLock, LocalSessionLocks, SessionLocks
from memstack.session.policy import Outcome, SummaryRunner, TurnResult, fallback_summary, summarize_session
from memstack.session.routing import RouteDecision, route_exchange
from memstack.session.service import SessionService, TurnHandle
from memstack.session.settings import SessionSettings
from memstack.session.support import Support, Verdict, check_support
from memstack.session.window import push_exchange

__all__ = [
    "Consolidation",
    "DiffResult",
    "DiffWarning",
    "HeldLock",
    "JsonChatModel",
    "LocalSessionLocks",
    "ModelSummarizer",
    "OfflineSummarizer",
    "Outcome",
    "RouteDecision",
    "SessionLocks",
    "SessionService",
    "SessionSettings",
    "Summarizer",
    "SummaryRunner",
    "Support",
    "TurnDraft",
    "TurnHandle",
    "TurnResult",
    "Verdict",
    "WarningKind",
    "apply_diff",
    "check_support",
    "consolidate_base_truth",
    "consolidation_due",
    "fallback_summary",
    "get_summarizer",
    "merge_facts",
    "push_exchange",
    "route_exchange",
    "session_line",
    "summarize_session",
]
