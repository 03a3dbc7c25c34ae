"""Small text tools shared by routing, the offline summarizer, diff matching and the plausibility check.

Everything here is deterministic, dependency-free and fast (a few microseconds per sentence): it runs on every
turn. Words are compared after a light suffix-stripping stem so "uses"/"used"/"using" meet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CodeBlock",
    "cap_words",
    "content_words",
    "count_words",
    "fact_key",
    "names",
    "normalize",
    "numbers",
    "similarity",
    "split_code",
    "split_sentences",
    "stem",
    "tokens",
]

_TOKEN = re.compile(r"[A-Za-z0-9_$€£]+(?:[.'’+#/:-][A-Za-z0-9_]+)*\+*")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_CODE_LINE = re.compile(
    r"^\s*(def |class |import |from \S+ import |function |const |let |var |return\b|#include|public |private |"
    r"fn |func |SELECT |INSERT |UPDATE \w+ SET|CREATE |@\w+|if \(|for \(|while \(|\}|\{$)"
    r"|[;{}]\s*$|^\s{4,}\S|^\t+\S|=>|->\s*\w|\w+\([^)]*\)\s*[:{]\s*$"
)

STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto about as is are was were be been
    being am do does did doing have has had having i me my mine myself we us our ours you your yours he him his she
    her hers it its they them their theirs this that these those there here what which who whom whose when where why
    how all any both each few more most other some such no nor not only own same so than too very can will just
    should would could may might shall also again further once up down out over under off s t d ll m re ve y
    i'm i've i'd i'll you're you've we're we've it's that's let's let what's there's""".split()  # noqa: SIM905
)

#: Words a summarizer uses to frame a fact ("User prefers …", "Constraint: …"); they need no support in the text.
FRAMING = frozenset(
    """user users assistant constraint constraints preference preferences decision decisions fact facts note notes
    requirement requirements currently now new newly old still stated states said says mentioned noted asked wants
    want wanted prefers prefer preferred likes like liked dislikes dislike needs need needed uses use using used
    working work works project version key value hard exception rule rules instead anymore longer
    goal goals""".split()  # noqa: SIM905
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


def tokens(text: str) -> list[str]:
    return [t.rstrip(".:'’-").replace("’", "'") for t in _TOKEN.findall(text)]


def stem(word: str) -> str:
    w = word.lower().replace("’", "'")
    if any(c.isdigit() for c in w) or len(w) <= 3:
        return w
    if w.endswith("'s"):
        w = w[:-2]
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + repl
            break
    else:
        if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
            w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "preferr" → "prefer", "stopp" → "stop"
    return w


_NEGATIONS = (
    (re.compile(r"\b(?:can ?not|can'?t)\b", re.I), "cannot"),
    (re.compile(r"\b(?:do not|don'?t)\b", re.I), "dont"),
    (re.compile(r"\b(?:does not|doesn'?t)\b", re.I), "doesnt"),
    (re.compile(r"\b(?:must not|mustn'?t)\b", re.I), "mustnt"),
    (re.compile(r"\b(?:should not|shouldn'?t)\b", re.I), "shouldnt"),
    (re.compile(r"\b(?:will not|won'?t)\b", re.I), "wont"),
)


def content_words(text: str, *, framing: bool = False) -> set[str]:
    """Stemmed words that carry meaning: stop words removed, and also framing words when ``framing``.

    Negations are kept as one canonical word each ("can't", "can not" → ``cannot``; "do not" → ``dont``)."""
    text = text.replace("’", "'")
    for pattern, canon in _NEGATIONS:
        text = pattern.sub(canon, text)
    out = set()
    for tok in tokens(text):
        low = tok.lower()
        if low in STOPWORDS or (framing and low in FRAMING):
            continue
        out.add(stem(low))
    return out


def numbers(text: str) -> set[str]:
    return {m.group(0).rstrip(".,:/-") for m in _NUMBER.finditer(text)}


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
            if (inner_upper or code_like or acronym or proper) and word.lower() not in FRAMING | STOPWORDS:
                out.add(word.lower())
        start = ends_clause
    return out


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
