"""Small text tools shared by routing, the offline summarizer, diff matching and the plausibility check.

Everything here is deterministic and fast (a few microseconds per sentence): it runs on every turn. Words, stems and
stop words are :mod:`memstack.text`'s, the ones full-text search uses, so "uses"/"used"/"using" meet as ``us``
here as they do in a search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstack.text import FRAMING_WORDS, STOP_WORDS, comparison_words, content_stems, spell_out_negations, words

__all__ = [
    "CodeBlock",
    "cap_words",
    "content_words",
    "count_words",
    "fact_key",
    "names",
    "normalize",
    "similarity",
    "split_code",
    "split_sentences",
]

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_CODE_LINE = re.compile(
    r"^\s*(def |class |import |from \S+ import |function |const |let |var |return\b|#include|public |private |"
    r"fn |func |SELECT |INSERT |UPDATE \w+ SET|CREATE |@\w+|if \(|for \(|while \(|\}|\{$)"
    r"|[;{}]\s*$|^\s{4,}\S|^\t+\S|=>|->\s*\w|\w+\([^)]*\)\s*[:{]\s*$"
)


@dataclass(frozen=True, slots=True)
class CodeBlock:
    language: str
    code: str


def count_words(text: str) -> int:
    return len(text.split())


def cap_words(text: str, limit: int) -> str:
    """The first ``limit`` words of ``text``; a cut text ends with "…" attached to its last word."""
    parts = text.split()
    if len(parts) <= limit:
        return " ".join(parts)
    return " ".join(parts[:limit]).rstrip(",;:-–—") + "…"


def normalize(text: str) -> str:
    """Lower case, single spaces, no surrounding punctuation: the form facts are compared in."""
    return " ".join(text.lower().replace("’", "'").split()).strip(" .;,!")


# A negated rule keeps its negation as one content word (a stop word on its own): "don't" → "do not" → ``dont``.
_NEGATIONS = (
    (re.compile(r"\bcan not\b", re.I), "cannot"),
    (re.compile(r"\bdo not\b", re.I), "dont"),
    (re.compile(r"\bdoes not\b", re.I), "doesnt"),
    (re.compile(r"\bmust not\b", re.I), "mustnt"),
    (re.compile(r"\bshould not\b", re.I), "shouldnt"),
    (re.compile(r"\bwill not\b", re.I), "wont"),
)
_NONE: frozenset[str] = frozenset()


def content_words(text: str, *, framing: bool = False) -> set[str]:
    """Stems of the words that carry meaning (:func:`memstack.text.content_stems` of
    :func:`~memstack.text.comparison_words`): stop words removed, and also
    :data:`~memstack.text.FRAMING_WORDS` when ``framing``.

    Negations are kept as one canonical word each ("can't", "cannot", "can not" → ``cannot``; "do not" →
    ``dont``)."""
    text = spell_out_negations(text)
    for pattern, canon in _NEGATIONS:
        text = pattern.sub(canon, text)
    return set(content_stems(comparison_words(text), ignore=FRAMING_WORDS if framing else _NONE))


def names(text: str) -> set[str]:
    """Identifiers and proper names a fact may not invent: tokens with digits, underscores, inner dots or capitals
    past the first letter (``numpy.array``, ``snake_case``, ``FastAPI``), and capitalised words that do not open
    the text, a sentence or a ``key:`` value. Lower-cased."""
    out: set[str] = set()
    start = True
    for raw in re.findall(r"\S+", text):
        word = raw.strip("\"'`()[]{},;!?")
        ends_clause = raw.endswith((".", ":", "!", "?"))
        word = word.rstrip(".:")
        if word and not word.isdigit():
            inner_upper = any(c.isupper() for c in word[1:]) and not word.isupper()
            code_like = "_" in word or any(c.isdigit() for c in word) or ("." in word and not word.endswith("."))
            acronym = word.isupper() and len(word) >= 2 and word.isalpha()
            proper = word[:1].isupper() and not start
            if (inner_upper or code_like or acronym or proper) and not _plain(word):
                out.add(word.lower())
        start = ends_clause
    return out


def _plain(word: str) -> bool:
    """A word no fact needs support for: stop or framing words only ("I'm", "User")."""
    return all(w in STOP_WORDS or w in FRAMING_WORDS for w in words(word))


def similarity(a: str, b: str) -> float:
    """Overlap of stemmed content words (framing words ignored), 0..1: the Dice coefficient 2|A∩B| / (|A|+|B|)."""
    wa, wb = content_words(a, framing=True), content_words(b, framing=True)
    if not wa or not wb:
        return 1.0 if normalize(a) == normalize(b) else 0.0
    return 2 * len(wa & wb) / (len(wa) + len(wb))


#: Labels that name a kind of fact, not one fact: never matched as keys ("Constraint: a" does not update
#: "Constraint: b").
GENERIC_KEYS = frozenset(
    """constraint constraints rule decision decisions uses preference preferences note notes fact facts hard
    exception user requirement requirements goal goals""".split()  # noqa: SIM905
)


def fact_key(fact: str) -> str | None:
    """The ``key`` of a ``key: value`` fact (lower case), or ``None`` when it has none.

    A key is short (≤ 6 words) and comes before the first ``": "``; URLs and times are not keys, and neither are
    generic labels such as ``Constraint`` or ``Decision``."""
    head, sep, tail = fact.partition(":")
    if not sep or not tail.startswith((" ", "\t")) or not head.strip():
        return None
    if count_words(head) > 6 or head.strip()[-1:].isdigit():
        return None
    key = normalize(head)
    return None if key in GENERIC_KEYS else key


def split_code(text: str) -> tuple[str, list[CodeBlock], int]:
    """Separate fenced code blocks from prose: ``(prose, blocks, code_line_count)``.

    Unfenced lines that look like code (indented blocks, ``def``/``class``, trailing ``;`` or braces) count as code
    lines too; they stay in the prose only when fewer than three of them are together."""
    blocks = [CodeBlock(m.group(1).lower(), m.group(2).rstrip()) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub("\n", text)
    code_lines = sum(len([ln for ln in b.code.splitlines() if ln.strip()]) for b in blocks)
    kept: list[str] = []
    run: list[str] = []
    for line in [*prose.splitlines(), ""]:
        if line.strip() and _CODE_LINE.search(line):
            run.append(line)
            continue
        if len(run) >= 3:
            blocks.append(CodeBlock("", "\n".join(run)))
            code_lines += len(run)
        else:
            kept.extend(run)
        run = []
        kept.append(line)
    return "\n".join(kept).strip(), blocks, code_lines


def split_sentences(prose: str) -> list[str]:
    """Sentences of prose (code removed first): split at line breaks, bullets and sentence ends."""
    out: list[str] = []
    for line in prose.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip()
        if not line:
            continue
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out
