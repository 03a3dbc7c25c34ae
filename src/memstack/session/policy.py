"""The failure policy of seed 04 §7 around any summarizer: what phase 2 of a turn produces, whatever happens.

| failure                      | what happens                                                                        |
|------------------------------|-------------------------------------------------------------------------------------|
| malformed answer             | retried once with the same payload; then the raw text (cut to the word caps) is the |
|                              | turn summary and the diff is skipped (``fallback_malformed``); the session service  |
|                              | still retries it later, bounded (``SessionSettings.retry_malformed``)               |
| timeout (``timeout_s``, 8 s) | raw text fallback, turn flagged ``unsummarized`` for a background retry              |
| endpoint error (5xx, network)| as a timeout (``fallback_error``): transient, so retried in the background          |
| update of an unknown fact    | added, with an ``unknown_update`` warning                                           |
| hallucinated diff entry      | rejected by the plausibility check, warning logged (``unsupported``)                 |
| poisoned diff entry          | refused by the write-time guard, warning logged (``refused``), never stored          |
| user message that takes      | its summary is withheld (:data:`WITHHELD`, flag ``withheld``): the guard judges the |
| authority                    | original, so no rewrite can carry its words into the turn log unjudged              |
| race between turns           | the per-session lock of the session service, not here                               |

:class:`SummaryRunner` is pure: it reads nothing but its arguments and the clock it was given, and writes nothing;
the :class:`TurnResult` it returns is what the session service persists (turn log entry, new base truth,
warnings, the unsummarized flag). A background retry is another ``run`` with the current base truth.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from memstack.errors import MalformedResponse, ProviderError, ProviderTimeout
from memstack.session.base import Summarizer, TurnDraft
from memstack.session.diff import DiffWarning, FactCheck, FactGuard, WarningKind, apply_diff
from memstack.session.extractive import session_line
from memstack.session.routing import RouteDecision, route_exchange
from memstack.session.settings import SessionSettings
from memstack.session.text import cap_words, count_words
from memstack.types import BaseTruthDiff, Exchange, Fact, TurnSummary

__all__ = [
    "NO_REPLY",
    "WITHHELD",
    "Outcome",
    "SummaryRunner",
    "TurnResult",
    "default_fact_guard",
    "fallback_summary",
    "summarize_session",
]

log = logging.getLogger("memstack.session")

#: The turn log's entry for the reply of an exchange that had none (a blank assistant message: the offline
#: responder answered, and its report is not conversation). Marked as such, never worded as something said.
NO_REPLY = "(no reply)"

#: The turn log's entry for a user message the write-time guard refuses (it tries to take authority: an override,
#: a claim of authority, an attack hidden by spacing, reversal, invisible characters or another language). A summary
#: rewrites text, and a rewrite can undo what made the attack recognisable (a summary that puts one space between
#: spaced letters, cuts a sentence or translates it), so the original is judged and its summary never carries its
#: words. The message itself stays in the archive and the raw window, as the user's own words.
#: The note is two words on purpose: it is read by the guard in every later context, and any wording about orders,
#: flags or guards reads to the semantic head like the attacks it was trained on. The turn's flags say the rest.
WITHHELD = "(left out)"


class Outcome(StrEnum):
    SUMMARIZED = "summarized"
    FALLBACK_MALFORMED = "fallback_malformed"  # raw text kept, diff skipped, no retry
    FALLBACK_TIMEOUT = "fallback_timeout"  # raw text kept, flagged for a background retry
    FALLBACK_ERROR = "fallback_error"  # raw text kept, flagged for a background retry


@dataclass(frozen=True, slots=True)
class TurnResult:
    """Everything phase 2 decided about one exchange."""

    turn: int
    route: RouteDecision
    summary: TurnSummary
    base_truth: tuple[Fact, ...]
    diff: BaseTruthDiff  # as the summarizer proposed it (empty on a fallback)
    warnings: tuple[DiffWarning, ...]
    outcome: Outcome
    attempts: int
    elapsed_s: float
    summarizer: str
    flags: tuple[str, ...] = ()
    error: str = ""

    @property
    def unsummarized(self) -> bool:
        return self.summary.unsummarized


def fallback_summary(exchange: Exchange, settings: SessionSettings, *, unsummarized: bool) -> TurnSummary:
    """The raw exchange text, cut to the summary word caps: what the turn log holds when summarizing failed."""
    return TurnSummary(
        exchange.turn,
        cap_words(exchange.user, settings.user_summary_words),
        cap_words(exchange.assistant, settings.assistant_summary_words),
        unsummarized=unsummarized,
    )


def default_fact_guard() -> FactGuard:
    """The write-time check of base-truth entries with the phrase rules:
    :func:`memstack.guard.check_session_fact` (imported when a runner is built)."""
    from memstack.guard import check_session_fact

    return check_session_fact


class SummaryRunner:
    """Runs one summarizer under the failure policy; ``clock`` is injectable for tests (``time.monotonic``).

    ``guard``: the write-time poisoning check of every diff entry added or updated, whatever the summarizer
    (default :func:`default_fact_guard`, the phrase rules; the engine passes its semantic guard when it has one).
    Diffs are applied off the event loop, since a semantic guard embeds the entries."""

    def __init__(
        self,
        summarizer: Summarizer,
        settings: SessionSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        guard: FactGuard | None = None,
    ) -> None:
        self.summarizer = summarizer
        self.settings = settings or SessionSettings()
        self._clock = clock
        self.guard = guard or default_fact_guard()

    async def run(self, exchange: Exchange, base_truth: Sequence[Fact]) -> TurnResult:
        """Summarize one exchange. One with no reply (blank: the offline responder's stand-in is not kept) gets
        :data:`NO_REPLY` as its reply's summary and the flag ``no_reply``, whatever the summarizer wrote for it. A
        user message the guard refuses gets :data:`WITHHELD` as its summary and the flag ``withheld``."""
        result, check = await asyncio.gather(self._run(exchange, base_truth), self._judge(exchange.user))
        if check.is_instruction:
            result = replace(
                result,
                summary=replace(result.summary, user_summary=WITHHELD),
                flags=tuple(dict.fromkeys((*result.flags, "withheld", *(f"withheld: {f}" for f in check.flags)))),
            )
        if exchange.assistant.strip():
            return result
        summary = replace(result.summary, assistant_summary=NO_REPLY)
        return replace(result, summary=summary, flags=tuple(dict.fromkeys((*result.flags, "no_reply"))))

    async def _judge(self, message: str) -> FactCheck:
        """The guard's verdict on the user's message as written (off the event loop: a semantic guard embeds it)."""
        return await asyncio.to_thread(self.guard, message)

    async def _run(self, exchange: Exchange, base_truth: Sequence[Fact]) -> TurnResult:
        s = self.settings
        decision = route_exchange(exchange, s)
        started = self._clock()
        attempts = 0
        error = ""
        outcome = Outcome.FALLBACK_MALFORMED
        while attempts <= s.malformed_retries:
            attempts += 1
            try:
                async with asyncio.timeout(s.timeout_s):
                    draft = await self.summarizer.summarize_turn(exchange, tuple(base_truth), decision.route)
                draft = self._check(draft, replied=bool(exchange.assistant.strip()))
            except MalformedResponse as exc:
                error = f"malformed summarizer answer: {exc}"
                log.warning("turn %d: %s (attempt %d)", exchange.turn, error, attempts)
                continue
            except (TimeoutError, ProviderTimeout) as exc:
                error = f"summarizer timed out after {s.timeout_s:g}s" + (f": {exc}" if str(exc) else "")
                outcome = Outcome.FALLBACK_TIMEOUT
                break
            except ProviderError as exc:
                error = f"summarizer failed: {exc}"
                outcome = Outcome.FALLBACK_ERROR
                break
            if draft.diff.add or draft.diff.update:  # entries to check: the guard may embed them
                return await asyncio.to_thread(
                    self._summarized, exchange, base_truth, decision, draft, attempts, started
                )
            return self._summarized(exchange, base_truth, decision, draft, attempts, started)
        retry = outcome is not Outcome.FALLBACK_MALFORMED
        log.warning("turn %d: raw-text fallback (%s)%s", exchange.turn, error, "; retry due" if retry else "")
        return TurnResult(
            turn=exchange.turn,
            route=decision,
            summary=fallback_summary(exchange, s, unsummarized=retry),
            base_truth=tuple(base_truth),
            diff=BaseTruthDiff(),
            warnings=(),
            outcome=outcome,
            attempts=attempts,
            elapsed_s=self._clock() - started,
            summarizer=self.summarizer.name,
            flags=("unsummarized",) if retry else ("diff_skipped",),
            error=error,
        )

    def _check(self, draft: TurnDraft, *, replied: bool = True) -> TurnDraft:
        """Shape rules every summarizer's answer must meet; word caps are enforced, not trusted. The summary of a
        reply that was never given may be empty (:meth:`run` replaces it)."""
        if not isinstance(draft, TurnDraft):
            raise MalformedResponse(f"summarizer returned {type(draft).__name__}, not a TurnDraft")
        if not draft.user_summary.strip() or (replied and not draft.assistant_summary.strip()):
            raise MalformedResponse("summarizer returned an empty user_summary or assistant_summary")
        return draft

    def _summarized(
        self,
        exchange: Exchange,
        base_truth: Sequence[Fact],
        decision: RouteDecision,
        draft: TurnDraft,
        attempts: int,
        started: float,
    ) -> TurnResult:
        s = self.settings
        flags = list(draft.flags)
        if count_words(draft.user_summary) > s.user_summary_words:
            flags.append("user_summary_cut")
        if count_words(draft.assistant_summary) > s.assistant_summary_words:
            flags.append("assistant_summary_cut")
        summary = TurnSummary(
            exchange.turn,
            cap_words(draft.user_summary, s.user_summary_words),
            cap_words(draft.assistant_summary, s.assistant_summary_words),
        )
        new_truth, warnings = apply_diff(base_truth, draft.diff, exchange, s, guard=self.guard)
        if any(w.kind is WarningKind.REFUSED for w in warnings):
            flags.append("refused")
        if decision.preserve_raw:
            flags.append("preserve_raw")
        return TurnResult(
            turn=exchange.turn,
            route=decision,
            summary=summary,
            base_truth=new_truth,
            diff=draft.diff,
            warnings=warnings,
            outcome=Outcome.SUMMARIZED,
            attempts=attempts,
            elapsed_s=self._clock() - started,
            summarizer=self.summarizer.name,
            flags=tuple(dict.fromkeys(flags)),
        )


async def summarize_session(
    summarizer: Summarizer,
    turn_log: Sequence[TurnSummary],
    base_truth: Sequence[Fact],
    settings: SessionSettings | None = None,
) -> str:
    """The cross-session line (layer 7) for a session that ended or resumed: the summarizer's, cut to
    ``cross_session_words``; the offline line when the summarizer fails, times out or returns nothing."""
    s = settings or SessionSettings()
    if not turn_log:
        return ""
    try:
        async with asyncio.timeout(s.timeout_s):
            line = (await summarizer.summarize_session(tuple(turn_log), tuple(base_truth))).strip()
    except (TimeoutError, ProviderError) as exc:
        log.warning(
            "cross-session summary by %s failed (%s); using the offline line", summarizer.name, exc or "timeout"
        )
        line = ""
    line = " ".join(line.split())
    return cap_words(line, s.cross_session_words) if line else session_line(turn_log, base_truth, s.cross_session_words)
