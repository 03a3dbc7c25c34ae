"""Offline fact extraction: the base-truth diff of one exchange by rules (an honest baseline, not a model).

What it recognises, mostly in the user's message (facts about the user and the work come from the user):

* **rules** — sentences with cannot / must / always / never / don't / avoid / not allowed … → ``Constraint: …``,
  marked hard (``I can't use numpy`` → ``Constraint: cannot use numpy``);
* **key: value** — ``my|our|the <key> is <value>`` → ``Key: value`` (``The deadline is Friday`` → ``Deadline: Friday``),
  dotted versions (``Python 3.12`` → ``Python version: 3.12``);
* **preferences and identity** — ``I prefer / like / hate …``, ``I'm a …``, ``I work at …``, ``I live in …``;
* **goals and events** — ``I'm planning to …``, ``my goal is to …``, ``I want to …``; ``I just started / joined /
  adopted / moved to …``;
* **decisions** — ``let's …``, ``we'll use …``, ``go with …``; from the assistant, ``I've switched / replaced …``;
* **code** — signatures of functions and classes defined in code blocks → ``Function name: def name(...)``;
* **corrections** — with "actually", "instead", "switched to" … a fact whose key (or near-identical wording) is
  already in base truth becomes an *update*; "no longer", "not anymore", "forget about" … *remove* the facts they
  name; a lifting phrase ("you can use numpy now") removes the hard exception it names.

Sentences in the first quarter of a message are taken first (seed 04 §8: summaries under-weight early constraints).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memstack.session.diff import LIFT_CUE, is_hard_rule, lifts
from memstack.session.routing import CORRECTION_CUE
from memstack.session.settings import SessionSettings
from memstack.session.text import (
    CodeBlock,
    cap_words,
    content_words,
    fact_key,
    normalize,
    similarity,
    split_code,
    split_sentences,
)
from memstack.types import BaseTruthDiff, Exchange, Fact

__all__ = ["extract_diff"]

_FACT_WORDS = 30
_LEAD = re.compile(
    r"^(?:(?:please|also|and|but|so|oh|ok|okay|remember|note|btw|by the way|one more thing)\b[,:]?\s+)+", re.I
)
_SUBJECT = re.compile(
    r"^(?:i|we|you)\s+(?=(?:can ?not|can't|must|mustn't|never|always|don't|do not|have to|need to|"
    r"should|shouldn't|only|are not|aren't|am not)\b)",
    re.I,
)
_REMOVE_CUE = re.compile(
    r"\b(no longer|not anymore|any ?more|forget (?:about )?|scratch that|never ?mind|drop (?:the|that)|cancel(?:led)?|"
    r"remove (?:the|that)|not (?:using|on|doing) .* any ?more)\b",
    re.I,
)
_KEY_VALUE = re.compile(
    r"\b(?:my|our|the)\s+((?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*)\s+(?:is|are|will be|is now|are now|has changed to|"
    r"changed to|moved to|'s)\s+(?!that\b|to\b|not\b|a bit\b|very\b|really\b)(.+)",
    re.I,
)
_BAD_KEYS = frozenset(
    """problem issue question thing point reason idea answer result code error output way case goal part rest
    same plan""".split()  # noqa: SIM905
)
_VERSION = re.compile(r"\b([A-Z][\w+#.-]*[A-Za-z+#])\s+(?:version\s+)?v?(\d+\.\d+(?:\.\d+)*)\b")
_PREFERENCE = re.compile(
    r"\bI(?:'d| would)?\s+(?:really\s+)?(prefer|like|love|enjoy|hate|dislike|rather)\s+(?!you\b|to know\b|it if\b)(.+)",
    re.I,
)
_IDENTITY = re.compile(
    r"\bI(?:'m| am)\s+(?!not\b|sure\b|going\b|trying\b|looking\b|asking\b|wondering\b|working on\b|getting\b)"
    r"(a|an|the|from|based in|based at)\s+(.+)|\bI\s+(work|live|study|teach)\s+(at|in|for|as|on)\s+(.+)",
    re.I,
)
_GOAL = re.compile(
    r"\b(?:i'm|i am|we're|we are)\s+(?:planning|hoping|aiming|going)\s+to\s+(?!ask\b|say\b|try\b)(.+)|"
    r"\b(?:my|our)\s+(?:goal|plan|dream|aim)\s+is\s+to\s+(.+)|"
    r"\b(?:i|we)\s+(?:want|hope|plan|intend|need)\s+to\s+(?!know\b|ask\b|see\b|understand\b|say\b|check\b)(.+)",
    re.I,
)
_EVENT = re.compile(
    r"\bI(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?(went to|started|joined|finished|adopted|bought|moved to|"
    r"visited|signed up for|graduated from|got (?:a|an|my)|took up|launched|opened|lost my|won)\s+(.+)",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:let's|let us|we'll|we will|we're going to|i'll go with|go(?:ing)? with|decided to|"
    r"switch(?:ed|ing)? to|use (?=\S+ instead))\s+(.+)",
    re.I,
)
_USES = re.compile(
    r"\b(?:i'm|i am|we're|we are)\s+(?:using|on|running|building with)\s+(.+)|\b(?:we|i)\s+use\s+(.+)", re.I
)
_REPLY_DECISION = re.compile(
    r"\b(?:I've|I have|I)\s+(switched|changed|replaced|rewrote|rewritten|refactored|converted|moved|renamed|"
    r"migrated|pinned|upgraded|downgraded)\s+(.+)",
    re.I,
)
_DEF = re.compile(r"^\s*(?:async\s+)?(def|class|function|fn|func)\s+([A-Za-z_]\w*)\s*(.*?)\s*[:{]?\s*$")
_PY_CUT = re.compile(
    r"\s*(?:,\s*(?:but|because|since|so|which|not)\b|;|\s+because\b|\s+but\b|\s+so that\b|\s+not\s+\S+$|"
    r",?\s+and\s+(?:i|we|my|our|it|the|they|you)\b).*$",
    re.I,
)

#: Time words that end a statement but are not part of the value ("my editor is Helix now" → "Editor: Helix").
_TAIL = re.compile(r"(?:\s+(?:now|these days|nowadays|instead|from now on|going forward|anymore|again))+$", re.I)


def _value(text: str) -> str:
    return _TAIL.sub("", _PY_CUT.sub("", text).strip(" .")).strip(" .")


@dataclass(slots=True)
class _Found:
    text: str
    hard: bool
    rank: float  # lower first
    update: bool = False


def extract_diff(
    exchange: Exchange, base_truth: Sequence[Fact], settings: SessionSettings | None = None, *, with_code: bool = True
) -> BaseTruthDiff:
    s = settings or SessionSettings()
    user_prose, user_code, _ = split_code(exchange.user)
    reply_prose, reply_code, _ = split_code(exchange.assistant)
    found: list[_Found] = []
    removals: list[str] = []
    sentences = split_sentences(user_prose)
    for pos, sentence in enumerate(sentences):
        early = pos < max(1, round(len(sentences) * 0.25))
        found.extend(_from_user_sentence(sentence, base_truth, removals, rank=pos + (0 if early else 100)))
    for pos, sentence in enumerate(split_sentences(reply_prose)[:12]):
        found.extend(_from_reply_sentence(sentence, rank=500 + pos))
    if with_code:
        found.extend(_from_code([*user_code, *reply_code], rank=300))
    return _assemble(found, removals, base_truth, exchange, s)


def _clean(sentence: str) -> str:
    text = _LEAD.sub("", sentence.strip()).strip()
    return text.rstrip(".!").strip()


def _from_user_sentence(sentence: str, base_truth: Sequence[Fact], removals: list[str], rank: float) -> list[_Found]:
    text = _clean(sentence)
    if not text or len(text.split()) < 2:
        return []
    out: list[_Found] = []
    question = text.endswith("?")
    # withdrawals and lifted rules
    if _REMOVE_CUE.search(text) or LIFT_CUE.search(text):
        for fact in base_truth:
            lifted = fact.hard_exception and lifts(fact, text)
            withdrawn = not fact.hard_exception and bool(_REMOVE_CUE.search(text)) and _names_fact(text, fact)
            if lifted or withdrawn:
                removals.append(fact.text)
    if is_hard_rule(text) and not LIFT_CUE.search(text):
        rule = _SUBJECT.sub("", text.rstrip("?")).replace("can't", "cannot").replace("can not", "cannot")
        rule = rule[:1].lower() + rule[1:] if rule[1:2].islower() else rule
        out.append(_Found(f"Constraint: {cap_words(rule, _FACT_WORDS)}", True, rank))
    if question:
        return out
    body = CORRECTION_CUE.sub("", text, count=1).strip(" ,") if text.lower().startswith("actually") else text
    if m := _KEY_VALUE.search(body):
        key, value = m.group(1).strip(), _value(m.group(2))
        if key.split()[-1].lower() not in _BAD_KEYS and value and len(value.split()) <= 12:
            out.append(_Found(f"{key[:1].upper()}{key[1:]}: {value}", False, rank + 0.1))
    # one value per name; after "switched to", "no longer" … the last mentioned is the current one
    latest = bool(CORRECTION_CUE.search(body) or _REMOVE_CUE.search(body))
    by_name: dict[str, str] = {}
    for m in _VERSION.finditer(body):
        if latest or m.group(1) not in by_name:
            by_name[m.group(1)] = m.group(2)
    versions = [_Found(f"{name} version: {v}", False, rank + 0.2) for name, v in by_name.items()]
    out.extend(versions)
    if m := _PREFERENCE.search(body):
        verb = {"rather": "would rather", "prefer": "prefers"}.get(m.group(1).lower(), m.group(1).lower() + "s")
        obj = _PY_CUT.sub("", m.group(2)).strip(" .")
        if obj:
            out.append(_Found(f"User {verb} {cap_words(obj, _FACT_WORDS)}", False, rank + 0.3))
    if m := _IDENTITY.search(body):
        if m.group(1):
            phrase = f"is {m.group(1).lower()} {_PY_CUT.sub('', m.group(2)).strip(' .')}"
        else:
            phrase = f"{m.group(3).lower()}s {m.group(4).lower()} {_PY_CUT.sub('', m.group(5)).strip(' .')}"
        out.append(_Found(f"User {cap_words(phrase, _FACT_WORDS)}", False, rank + 0.4))
    if m := _GOAL.search(body):
        goal = _PY_CUT.sub("", next(g for g in m.groups() if g)).strip(" .!")
        out.append(_Found(f"Goal: {cap_words(goal, _FACT_WORDS)}", False, rank + 0.45))
    if m := _EVENT.search(body):
        what = _PY_CUT.sub("", m.group(2)).strip(" .!")
        out.append(_Found(f"User {m.group(1).lower()} {cap_words(what, _FACT_WORDS)}", False, rank + 0.46))
    if m := _USES.search(body):
        what = _value(m.group(1) or m.group(2))
        if what and not versions:
            out.append(_Found(f"Uses: {cap_words(what, _FACT_WORDS)}", False, rank + 0.5))
    elif (m := _DECISION.search(body)) and not out:
        what = _value(m.group(1))
        if len(what.split()) >= 1:
            out.append(_Found(f"Decision: {cap_words(what, _FACT_WORDS)}", False, rank + 0.5))
    return out


def _from_reply_sentence(sentence: str, rank: float) -> list[_Found]:
    text = _clean(sentence)
    if (m := _REPLY_DECISION.search(text)) and not text.endswith("?"):
        what = _PY_CUT.sub("", f"{m.group(1)} {m.group(2)}").strip(" .")
        return [_Found(f"Decision: {cap_words(what, _FACT_WORDS)}", False, rank)]
    return []


def _from_code(blocks: Sequence[CodeBlock], rank: float) -> list[_Found]:
    out: list[_Found] = []
    seen: set[str] = set()
    for block in blocks:
        for line in block.code.splitlines():
            m = _DEF.match(line)
            if not m or m.group(2) in seen or m.group(2).startswith("__") or line[:1].isspace():
                continue
            seen.add(m.group(2))
            kind = "Class" if m.group(1) == "class" else "Function"
            signature = line.strip().rstrip(":{").strip()
            out.append(_Found(f"{kind} {m.group(2)}: {cap_words(signature, _FACT_WORDS)}", False, rank + len(out)))
    return out[:4]


def _names_fact(sentence: str, fact: Fact) -> bool:
    """The sentence is about this fact: it repeats its key, or most of its topic words."""
    key = fact_key(fact.text)
    if key and key in sentence.lower():
        return True
    topic = content_words(fact.text, framing=True)
    return bool(topic) and len(topic & content_words(sentence)) / len(topic) >= 0.5


def _assemble(
    found: list[_Found], removals: list[str], base_truth: Sequence[Fact], ex: Exchange, s: SessionSettings
) -> BaseTruthDiff:
    existing = {normalize(f.text) for f in base_truth} - {normalize(r) for r in removals}
    keys = {fact_key(f.text) for f in base_truth if f.text not in removals} - {None}
    correcting = bool(CORRECTION_CUE.search(ex.user))
    picked: dict[str, _Found] = {}
    for item in sorted(found, key=lambda f: (not f.hard, f.rank)):
        norm = normalize(item.text)
        if (
            norm in existing
            or norm in picked
            or not content_words(item.text.partition(": ")[2] or item.text, framing=True)
        ):
            continue  # known already, or says nothing ("Decision: do it")
        key = fact_key(item.text)
        item.update = key in keys or (
            correcting
            and any(similarity(item.text, f.text) >= s.update_similarity for f in base_truth if f.text not in removals)
        )
        if key and not item.update and any(fact_key(p.text) == key for p in picked.values()):
            continue  # one value per key per turn: the earliest statement wins
        picked[norm] = item
        if len(picked) >= s.max_facts_per_turn:
            break
    chosen = sorted(picked.values(), key=lambda f: f.rank)
    return BaseTruthDiff(
        add=tuple(f.text for f in chosen if not f.update),
        update=tuple(f.text for f in chosen if f.update),
        remove=tuple(dict.fromkeys(removals)),
        hard=tuple(f.text for f in chosen if f.hard),
    )
