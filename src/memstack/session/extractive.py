"""The offline summarizer: extractive summaries and rule-based facts, no model, no network.

It is the default when no summarizer model is configured, and it says so: its name is ``offline:extractive``,
``offline`` is true and every draft carries the ``offline`` flag. Summaries are chosen sentences, lightly
normalised ("Can you refactor X?" → "Asked to refactor X"), cut to the word caps; sentences in the first quarter of
a message score higher (seed 04 §8). Facts come from :mod:`memstack.session.facts`, consolidation from
:mod:`memstack.session.consolidate`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from memstack.embed.base import Embedder
from memstack.session.base import TurnDraft
from memstack.session.consolidate import merge_facts
from memstack.session.diff import is_hard_rule
from memstack.session.facts import extract_diff
from memstack.session.routing import route_exchange
from memstack.session.settings import SessionSettings
from memstack.session.text import (
    CodeBlock,
    cap_words,
    content_words,
    count_words,
    names,
    split_code,
    split_sentences,
)
from memstack.text import numbers
from memstack.types import BaseTruthDiff, Exchange, Fact, Route, TurnSummary

__all__ = ["OfflineSummarizer", "summarize_message"]

_REQUEST = re.compile(
    r"^(?:hi|hey|hello)?[,!\s]*(?:(?:can|could|would|will) you(?: please)?|please|i(?:'d| would) like you to|"
    r"i (?:want|need) you to|help me(?: to)?)\s+",
    re.I,
)
_IMPERATIVE = frozenset(
    """add build change check compare convert create debug define draft explain find fix generate give help implement
    improve list make move optimize plan refactor remove rename replace review rewrite show simplify sort suggest
    summarize tell translate update use write""".split()  # noqa: SIM905
)
_FILLER = re.compile(
    r"^(?:sure|certainly|of course|great question|good question|absolutely|okay|ok|got it|thanks|thank you|"
    r"hi|hello|hey|happy to help|no problem)\b[!.,]?\s*",
    re.I,
)
_CLOSING = re.compile(r"\b(?:let me know|hope (?:this|that) helps|feel free to ask|happy coding|good luck)\b", re.I)
_ANSWER = re.compile(
    r"\b(?:use|recommend|should|here(?:'s| is)|I've|I have|changed|fixed|added|returns?|because|the answer|"
    r"is due|will|means)\b",
    re.I,
)


def _code_note(blocks: Sequence[CodeBlock], lines: int) -> str:
    if not blocks:
        return ""
    lang = next((b.language for b in blocks if b.language), "")
    defined = []
    for block in blocks:
        defined += re.findall(r"^\s*(?:async\s+)?(?:def|function|fn|func|class)\s+([A-Za-z_]\w*)", block.code, re.M)
    what = f"{lines} lines of {lang + ' ' if lang else ''}code"
    if defined:
        what += " defining " + ", ".join(dict.fromkeys(defined[:4]))
    return what


def _score(sentence: str, pos: int, count: int, *, user: bool) -> float:
    words = count_words(sentence)
    score = 1.0
    if pos < max(1, round(count * 0.25)):
        score += 1.0  # the first quarter: constraints and the ask usually come first
    if user and (sentence.rstrip().endswith("?") or _REQUEST.match(sentence) or _first_word(sentence) in _IMPERATIVE):
        score += 1.5
    if is_hard_rule(sentence):
        score += 1.2
    score += 0.4 * min(3, len(names(sentence)) + len(set(numbers(sentence))))
    if not user and _ANSWER.search(sentence):
        score += 0.8
    if _FILLER.match(sentence) and words <= 4:
        score -= 2.0
    if _CLOSING.search(sentence):
        score -= 2.0
    if words < 3:
        score -= 0.7
    return score


def _noise(sentence: str) -> bool:
    """Greetings, acknowledgements and "Here it is:" lines carry nothing to remember."""
    words = count_words(sentence)
    if words <= 3 and _FILLER.match(sentence) and not is_hard_rule(sentence):
        return True
    return sentence.rstrip().endswith(":") and words <= 6


def _first_word(sentence: str) -> str:
    parts = sentence.split(maxsplit=1)
    return parts[0].lower().strip(",.!") if parts else ""


def _rephrase_request(sentence: str) -> str:
    text = _FILLER.sub("", sentence.strip()).strip()
    m = _REQUEST.match(text)
    if m:
        rest = text[m.end() :].rstrip("?.! ")
        return f"Asked to {rest}" if rest else text
    if _first_word(text) in _IMPERATIVE:
        return f"Asked to {text[:1].lower()}{text[1:].rstrip('.!')}"
    if text.endswith("?"):
        return f"Asked: {text}"
    return text


def summarize_message(text: str, limit: int, *, user: bool) -> str:
    """An extractive summary of one message in at most ``limit`` words (code described, not quoted)."""
    prose, blocks, code_lines = split_code(text)
    sentences = [x for x in split_sentences(prose) if not _noise(x)]
    note = _code_note(blocks, code_lines)
    if not sentences:
        verb = "Shared" if user else "Provided"
        return cap_words(f"{verb} {note}" if note else text, limit)
    order = sorted(range(len(sentences)), key=lambda i: -_score(sentences[i], i, len(sentences), user=user))
    budget = limit - (count_words(note) + 2 if note and not user else 0)
    chosen: list[int] = []
    used = 0
    for i in order:
        n = count_words(sentences[i])
        if chosen and used + n > budget:
            continue
        chosen.append(i)
        used += n
        if used >= budget * 0.8:
            break
    parts = [_rephrase_request(sentences[i]) if user else _FILLER.sub("", sentences[i]) for i in sorted(chosen)]
    summary = " ".join(p for p in parts if p)
    if note:
        summary = f"Provided {note}. {summary}" if not user else f"{summary} (shared {note})"
    return cap_words(summary, limit)


class OfflineSummarizer:
    """Rule-and-extraction summarizer; ``embedder`` (optional) lets consolidation merge paraphrases too."""

    name = "offline:extractive"
    offline = True

    def __init__(self, settings: SessionSettings | None = None, *, embedder: Embedder | None = None) -> None:
        self.settings = settings or SessionSettings()
        self._embedder = embedder

    async def summarize_turn(self, exchange: Exchange, base_truth: Sequence[Fact], route: Route) -> TurnDraft:
        s = self.settings
        user_summary = summarize_message(exchange.user, s.user_summary_words, user=True)
        assistant_summary = summarize_message(exchange.assistant, s.assistant_summary_words, user=False)
        wants_diff = route is not Route.SHORT or route_exchange(exchange, s).extract_diff
        diff = extract_diff(exchange, base_truth, s, with_code=True) if wants_diff else BaseTruthDiff()
        return TurnDraft(user_summary or "(empty message)", assistant_summary or "(empty reply)", diff, ("offline",))

    async def consolidate(self, base_truth: Sequence[Fact]) -> list[Fact]:
        vectors = None
        if self._embedder is not None and len(base_truth) > 1:
            vectors = await self._embedder.embed([f.text for f in base_truth])
        return merge_facts(base_truth, self.settings, vectors=vectors).facts

    async def summarize_session(self, turn_log: Sequence[TurnSummary], base_truth: Sequence[Fact]) -> str:
        return session_line(turn_log, base_truth, self.settings.cross_session_words)


def session_line(turn_log: Sequence[TurnSummary], base_truth: Sequence[Fact], limit: int) -> str:
    """One user-focused line about a session: its opening ask, its most central later topic, its firmest rule."""
    asks = [t.user_summary for t in turn_log if t.user_summary.strip() and not t.unsummarized]
    asks = asks or [t.user_summary for t in turn_log if t.user_summary.strip()]
    if not asks:
        return ""
    freq = Counter(w for a in asks for w in content_words(a, framing=True))

    def centrality(text: str) -> float:
        words = content_words(text, framing=True)
        return sum(freq[w] for w in words) / (len(words) + 1)

    first = _short(asks[0], limit // 2)
    parts = [first]
    if len(asks) > 1:
        later = max(asks[1:], key=centrality)
        parts.append("later " + _short(later, limit // 3))
    rules = [f.text for f in base_truth if f.hard_exception]
    if rules:
        parts.append("rule: " + rules[0].removeprefix("Constraint: "))
    line = "; ".join(parts)
    line = line[:1].upper() + line[1:]
    return cap_words(line, limit)


def _short(summary: str, limit: int) -> str:
    text = summary.removeprefix("Asked: ")
    text = text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
    return cap_words(text.rstrip("."), max(limit, 4))
