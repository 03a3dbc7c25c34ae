"""Applying a base-truth diff: remove → update → add (seed 04 §5.1), with the checks production needs.

Rules, in the order they run:

* **remove** — an entry removes the fact it names: exact text, else a fact that contains it or that it contains
  (the seed's ``f.includes(r)``), else the most similar fact at ``remove_similarity``. Several facts matching one
  entry equally well are all removed and a warning says so; an entry matching nothing is ignored with a warning.
* **update** — matched by key phrase: the ``key`` of a ``key: value`` entry names the fact with the same key (the
  seed's prefix match), the most similar fact among several sharing it; without a key, or with a key nothing has,
  the most similar fact at ``update_similarity``. An update that matches nothing is added, with a warning.
* **add** — appended unless the same fact (normalised text) is already there.
* **poisoning** — every add and update first goes through ``guard``, the write-time check of DESIGN §2
  (:func:`memstack.guard.check_session_fact`): an entry that claims authority it does not have (an attempt to
  override or change the assistant's rules, identity or policy, a standing order about what to tell others, an
  authorization claim, exfiltration) is refused with a ``refused`` warning and never stored, whichever summarizer
  proposed it. A rule the user sets for their own conversation ("never use numpy", "you must answer in Spanish")
  is not an injection: it passes, and becomes a hard exception below. The semantic head's likeness to an attack
  (flag ``semantic``) alone does not refuse such a rule when the user's own message states it: only a phrase rule
  (override, identity change, authority claim, standing order about others …) does.
* **plausibility** — every add and update is checked against the raw exchange (:mod:`memstack.session.support`):
  unsupported entries are rejected, weakly supported ones applied and flagged.
* **hard exceptions** — an entry is a hard exception when the summarizer marks it (``diff.hard``) or it states a
  rule (must / never / always / cannot / don't / avoid / not allowed …) *and* the user's own message backs it (a rule
  only the assistant stated is kept as an ordinary fact). A hard exception is never removed or replaced by a diff
  unless the user's message in this exchange explicitly lifts it ("you can use numpy now", "forget the numpy
  rule", "that restriction no longer applies") and names what it lifts; otherwise it stays and a warning says why.
  An update the user's own words support may rewrite a hard exception (the user restated the rule); it stays hard.

Conflicts resolve by that order: a fact both removed and updated is removed, then the update finds nothing and is
added (so the new value survives, flagged ``unknown_update``); a fact removed and re-added in one diff is present
afterwards; two updates of one key leave the last.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple, Protocol

from memstack.session.settings import SessionSettings
from memstack.session.support import Verdict, check_support
from memstack.session.text import content_words, fact_key, normalize, similarity
from memstack.text import stem
from memstack.types import BaseTruthDiff, Exchange, Fact

__all__ = [
    "HARD_CUE",
    "DiffResult",
    "DiffWarning",
    "FactCheck",
    "FactGuard",
    "WarningKind",
    "apply_diff",
    "is_hard_rule",
    "lifts",
]

log = logging.getLogger("memstack.session")

MAX_FACT_CHARS = 500

#: Words that state a rule wherever they stand.
HARD_CUE = re.compile(
    r"\b(must|mustn't|must not|not allowed|forbidden|avoid|required to|is required|are required|"
    r"under no circumstances|no \w+ allowed|only use|at all times)\b",
    re.IGNORECASE,
)
#: never / always / can't / don't state a rule when they direct an action ("never use", "don't log"), open the
#: sentence ("Always answer in French"), or follow "you" / "we" — not in "I always forget" or "I don't know".
_DIRECTIVE = re.compile(
    r"^(?:(?:please|and|but|also|so)\s+)?(?:never|always|don't|do not|avoid)\b|"
    r"\b(?:you|we)\s+(?:should\s+|must\s+)?(?:never|always|can ?not|can't|don't|do not|shouldn't|should not)\b|"
    r"\b(?:never|always|can ?not|can't|don't|do not|shouldn't|should not)\s+(?:\w+\s+)?"
    r"(?:use|using|eat|drink|install|import|add|include|change|modify|touch|exceed|spend|share|send|deploy|run|call|"
    r"mention|remove|delete|rename|write|push|commit|store|log|expose|break|rely|depend|answer|reply|respond|"
    r"reveal|show|print|schedule|book|contact|email)\b",
    re.IGNORECASE,
)
_NOT_RULES = re.compile(
    r"\b(?:don't|do not|can't|cannot|can not)\s+(?:really\s+)?(?:know|think|understand|remember|care|mind|get|see|"
    r"worry|figure|find|tell|wait|believe|decide|imagine|stop|help)\b",
    re.IGNORECASE,
)
#: "must" that guesses rather than obliges: "It must be nice", "That must have been hard", "You must be tired".
_EPISTEMIC_MUST = re.compile(
    r"\bmust(?:'ve| have)?\s+(?:been|be)\s+(?:so\s+|really\s+|very\s+|pretty\s+|quite\s+|such\s+|a\s+|an\s+)*"
    r"(?:nice|great|good|lovely|fun|hard|tough|difficult|rough|tiring|tired|exhausting|exhausted|stressful|"
    r"frustrating|annoying|scary|sad|exciting|excited|amazing|awesome|wonderful|cool|interesting|busy|hectic|"
    r"lonely|overwhelming|painful|relief|relieved|proud|happy|boring|crazy|wild|beautiful|joking|kidding|"
    r"nervous|worried|fascinating|challenging|weird|strange|pain|blast|shock|surprise|nightmare)\b|"
    r"\bmust(?:'ve| have)\s+(?:felt|seen|thought|known|heard|missed|forgotten)\b",
    re.IGNORECASE,
)
#: The user lifting a rule they set earlier.
LIFT_CUE = re.compile(
    r"\b(you can (?:now )?|you may (?:now )?|(?:it's|it is) (?:now )?(?:ok|okay|fine|alright) to|feel free to|"
    r"go ahead and|no longer (?:need|have|must|required|applies|matters|a (?:rule|constraint|requirement))|"
    r"not (?:a )?(?:rule|requirement|constraint|restriction) any ?more|lift(?:ed)?|"
    r"drop (?:the|that|my) (?:rule|constraint|restriction|requirement)|ignore (?:my|the|that) (?:earlier|previous)|"
    r"changed my mind|(?:is|are) (?:now )?allowed|forget (?:about )?(?:the|that|my)|"
    r"don't need to (?:avoid|worry)|doesn't (?:matter|apply) any ?more)",
    re.IGNORECASE,
)
#: Entry wording that relaxes a rule; such an entry needs the user's lift like a removal does.
RELAX_CUE = re.compile(r"\b(allowed|permitted|(?:ok|okay|fine) to|can (?:now )?use|may (?:now )?use|no longer)\b", re.I)
_RULE_WORDS = frozenset(
    stem(w)
    for w in (
        *("never", "must", "mustnt", "always", "cannot", "dont", "doesnt", "shouldnt"),
        *("not", "avoid", "allowed", "forbidden", "required", "only"),
    )
)


class WarningKind(StrEnum):
    UNKNOWN_UPDATE = "unknown_update"  # the update matched no fact: added instead
    UNKNOWN_REMOVE = "unknown_remove"  # the removal matched no fact: ignored
    AMBIGUOUS_REMOVE = "ambiguous_remove"  # one removal matched several facts equally: all removed
    UNSUPPORTED = "unsupported"  # rejected: not supported by the exchange (hallucination check)
    WEAK_SUPPORT = "weak_support"  # applied, but the exchange supports it only partly
    HARD_EXCEPTION_KEPT = "hard_exception_kept"  # a diff tried to remove or replace a hard exception
    HARD_DEMOTED = "hard_demoted"  # marked hard, but the user never said it: kept as an ordinary fact
    DUPLICATE = "duplicate"  # already in base truth
    INVALID = "invalid"  # empty or too long to be a fact
    TOO_MANY = "too_many"  # beyond max_facts_per_turn
    SUPERSEDED = "superseded"  # a late summary's change that a later turn already overrode (session service)
    REFUSED = "refused"  # claims authority it does not have (the write-time poisoning check): never stored


#: Flags that say only "close in meaning to a known attack" (the semantic head): not enough to refuse a rule the user
#: sets in their own message ("do not reveal the solution until I ask" reads like an attack to it, and is not one).
_LIKENESS_FLAGS = frozenset({"semantic", "suspect"})


class FactCheck(Protocol):
    """The write-time check's verdict on one entry (``memstack.guard.CandidateCheck``)."""

    @property
    def is_instruction(self) -> bool: ...

    @property
    def flags(self) -> tuple[str, ...]: ...


#: The write-time poisoning check of base-truth entries (``memstack.guard.check_session_fact``).
FactGuard = Callable[[str], FactCheck]


@dataclass(frozen=True, slots=True)
class DiffWarning:
    kind: WarningKind
    op: str  # add | update | remove
    entry: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind.value} ({self.op} {self.entry!r}){': ' + self.detail if self.detail else ''}"


class DiffResult(NamedTuple):
    """``new_base_truth, warnings = apply_diff(...)``."""

    base_truth: tuple[Fact, ...]
    warnings: tuple[DiffWarning, ...]

    @property
    def rejected(self) -> tuple[DiffWarning, ...]:
        return tuple(w for w in self.warnings if w.kind is WarningKind.UNSUPPORTED)


def is_hard_rule(text: str) -> bool:
    """Whether ``text`` states a rule (must / never use / always answer / can't use / don't log / avoid …)."""
    body = text.partition(": ")[2] if text.lower().startswith(("constraint:", "rule:")) else text
    body = _EPISTEMIC_MUST.sub(" ", body).strip()
    if _NOT_RULES.search(body):
        return bool(HARD_CUE.search(body))
    return bool(HARD_CUE.search(body) or _DIRECTIVE.search(body))


def lifts(fact: Fact, user_message: str) -> bool:
    """Whether the user's message explicitly lifts this fact: a lifting phrase plus most of its topic words."""
    return bool(LIFT_CUE.search(user_message)) and topic_overlap(fact.text, user_message) >= 0.5


def topic_overlap(entry: str, text: str) -> float:
    """Share of ``entry``'s topic words (content words less framing and rule words) that ``text`` contains."""
    topic = content_words(entry, framing=True) - _RULE_WORDS
    if not topic:
        return 0.0
    return len(topic & content_words(text)) / len(topic)


def apply_diff(
    base_truth: Sequence[Fact],
    diff: BaseTruthDiff,
    raw_exchange: Exchange,
    settings: SessionSettings | None = None,
    *,
    guard: FactGuard | None = None,
) -> DiffResult:
    """Apply ``diff`` to ``base_truth``, checking each entry against ``raw_exchange``; never raises for content.

    ``guard``: the write-time poisoning check of adds and updates (``None``: no check; the session's
    :class:`~memstack.session.policy.SummaryRunner` always passes one). With the semantic guard it embeds the
    entries: call it off the event loop."""
    return _Apply(base_truth, diff, raw_exchange, settings or SessionSettings(), guard).run()


class _Apply:
    def __init__(
        self, bt: Sequence[Fact], diff: BaseTruthDiff, ex: Exchange, s: SessionSettings, guard: FactGuard | None
    ) -> None:
        self.bt = list(bt)
        self.diff = diff
        self.ex = ex
        self.s = s
        self.guard = guard
        self.warnings: list[DiffWarning] = []
        self.hard_marked = {normalize(h) for h in diff.hard}
        self.applied = 0

    def warn(self, kind: WarningKind, op: str, entry: str, detail: str = "") -> None:
        w = DiffWarning(kind, op, entry, detail)
        self.warnings.append(w)
        log.log(logging.INFO if kind is WarningKind.DUPLICATE else logging.WARNING, "turn %d: %s", self.ex.turn, w)

    def run(self) -> DiffResult:
        for entry in self.diff.remove:
            self.remove(entry)
        for entry in self.diff.update:
            if self.valid("update", entry) and self.allowed("update", entry):
                self.update(entry.strip())
        for entry in self.diff.add:
            if self.valid("add", entry) and self.allowed("add", entry):
                self.add(entry.strip())
        return DiffResult(tuple(self.bt), tuple(self.warnings))

    def valid(self, op: str, entry: str) -> bool:
        if not entry.strip() or len(entry) > MAX_FACT_CHARS:
            self.warn(WarningKind.INVALID, op, entry[:80], f"a fact is 1-{MAX_FACT_CHARS} characters")
            return False
        if self.applied >= self.s.max_facts_per_turn:
            self.warn(WarningKind.TOO_MANY, op, entry, f"more than {self.s.max_facts_per_turn} changes in one turn")
            return False
        return True

    def allowed(self, op: str, entry: str) -> bool:
        """The write-time poisoning check (DESIGN §2): an entry claiming authority is refused, never stored."""
        if self.guard is None:
            return True
        verdict = self.guard(entry.strip())
        if not verdict.is_instruction:
            return True
        if set(verdict.flags) <= _LIKENESS_FLAGS and self.users_rule(entry):
            return True  # only like an attack in meaning, and a rule the user's own message sets: the user's rule
        self.warn(
            WarningKind.REFUSED,
            op,
            entry,
            f"claims authority it does not have ({', '.join(verdict.flags)}); not stored as a session fact",
        )
        return False

    def users_rule(self, entry: str) -> bool:
        """A rule (marked hard, or worded as one) that the user's own message backs: what a hard exception is."""
        rule = normalize(entry) in self.hard_marked or is_hard_rule(entry)
        return rule and topic_overlap(entry, self.ex.user) >= self.s.support_flag

    # -- remove ---------------------------------------------------------------------------------------------------

    def remove(self, entry: str) -> None:
        hits = self.match_remove(entry)
        if not hits:
            self.warn(WarningKind.UNKNOWN_REMOVE, "remove", entry, "no fact matches it")
            return
        if len(hits) > 1:
            names = "; ".join(self.bt[i].text for i in hits)
            self.warn(WarningKind.AMBIGUOUS_REMOVE, "remove", entry, f"matched {len(hits)} facts: {names}")
        drop = set()
        for i in hits:
            fact = self.bt[i]
            if fact.hard_exception and not lifts(fact, self.ex.user):
                self.warn(
                    WarningKind.HARD_EXCEPTION_KEPT,
                    "remove",
                    entry,
                    f"{fact.text!r} is a hard exception the user did not lift",
                )
            else:
                drop.add(i)
        self.bt = [f for i, f in enumerate(self.bt) if i not in drop]

    def match_remove(self, entry: str) -> list[int]:
        target = normalize(entry)
        if not target:
            return []
        exact = [i for i, f in enumerate(self.bt) if normalize(f.text) == target]
        if exact:
            return exact
        contained = [i for i, f in enumerate(self.bt) if target in normalize(f.text) or normalize(f.text) in target]
        candidates = contained or list(range(len(self.bt)))
        scored = [(similarity(entry, self.bt[i].text), i) for i in candidates]
        if not scored:
            return []
        best = max(score for score, _ in scored)
        if not contained and best < self.s.remove_similarity:
            return []
        return [i for score, i in scored if score == best]

    # -- update ---------------------------------------------------------------------------------------------------

    def update(self, entry: str) -> None:
        idx = self.match_update(entry)
        known = (fact_key(self.bt[idx].text) or "") if idx is not None else ""
        if not self.supported("update", entry, known):
            return
        if (idx is None or not self.bt[idx].hard_exception) and self.relaxes_a_rule("update", entry):
            return
        hard = self.hard("update", entry)
        if idx is None:
            self.warn(WarningKind.UNKNOWN_UPDATE, "update", entry, "no fact matches it; added as a new fact")
            self.append(entry, hard, "update")
            return
        old = self.bt[idx]
        if normalize(old.text) == normalize(entry) and (old.hard_exception or not hard):
            self.warn(WarningKind.DUPLICATE, "update", entry, "the fact already reads so")
            return
        if old.hard_exception:
            backed = topic_overlap(entry, self.ex.user) >= self.s.support_flag
            if not (backed or lifts(old, self.ex.user)):
                self.warn(
                    WarningKind.HARD_EXCEPTION_KEPT,
                    "update",
                    entry,
                    f"{old.text!r} is a hard exception; only the user's own words may change it",
                )
                return
            hard = hard or not lifts(old, self.ex.user)
        self.bt[idx] = Fact(entry, hard, self.ex.turn)
        self.applied += 1

    def match_update(self, entry: str) -> int | None:
        key = fact_key(entry)
        if key:
            same = [i for i, f in enumerate(self.bt) if fact_key(f.text) == key]
            if not same:
                same = [i for i, f in enumerate(self.bt) if normalize(f.text).startswith(key)]
            if len(same) == 1:
                return same[0]
            if same:
                return max(same, key=lambda i: similarity(entry, self.bt[i].text))
        scored = [(similarity(entry, f.text), i) for i, f in enumerate(self.bt)]
        if scored:
            best, idx = max(scored)
            if best >= self.s.update_similarity:
                return idx
        return None

    # -- add ------------------------------------------------------------------------------------------------------

    def add(self, entry: str) -> None:
        if not self.supported("add", entry, "") or self.relaxes_a_rule("add", entry):
            return
        self.append(entry, self.hard("add", entry), "add")

    def append(self, entry: str, hard: bool, op: str) -> None:
        norm = normalize(entry)
        for i, f in enumerate(self.bt):
            if normalize(f.text) == norm:
                if hard and not f.hard_exception:
                    self.bt[i] = Fact(f.text, True, f.since_turn)
                self.warn(WarningKind.DUPLICATE, op, entry, "already in base truth")
                return
        self.bt.append(Fact(entry, hard, self.ex.turn))
        self.applied += 1

    # -- checks ---------------------------------------------------------------------------------------------------

    def supported(self, op: str, entry: str, known: str) -> bool:
        sup = check_support(entry, self.ex, self.s, known=known)
        if sup.verdict is Verdict.UNSUPPORTED:
            self.warn(WarningKind.UNSUPPORTED, op, entry, sup.reason)
            return False
        if sup.verdict is Verdict.WEAK:
            self.warn(WarningKind.WEAK_SUPPORT, op, entry, sup.reason)
        return True

    def hard(self, op: str, entry: str) -> bool:
        if normalize(entry) not in self.hard_marked and not is_hard_rule(entry):
            return False
        if topic_overlap(entry, self.ex.user) < self.s.support_flag:
            self.warn(WarningKind.HARD_DEMOTED, op, entry, "the user did not state this rule; kept as a plain fact")
            return False
        return True

    def relaxes_a_rule(self, op: str, entry: str) -> bool:
        """An entry saying a rule's subject is now allowed, when the user lifted no such rule."""
        if not RELAX_CUE.search(entry):
            return False
        for fact in self.bt:
            if fact.hard_exception and topic_overlap(fact.text, entry) >= 0.5 and not lifts(fact, self.ex.user):
                self.warn(
                    WarningKind.HARD_EXCEPTION_KEPT,
                    op,
                    entry,
                    f"it relaxes the hard exception {fact.text!r}, which the user did not lift",
                )
                return True
        return False
