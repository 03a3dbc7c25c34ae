"""Decoding passes run before the guard's judgement: text that hides words behind an encoding is read as decoded too.

:func:`decoded_variants` returns what a text says once decoded, one variant per pass that changed something:

* ``tags``: what invisible Unicode tag characters spell (:func:`memstack.guard.unmask.hidden_text`);
* ``separators``: zero-width characters used as the spaces between words ("ignore\u200ball\u200brules"), read as
  spaces (the normal form removes them, which glues the words together);
* ``base64``: runs of 16+ base64 characters that decode to mostly printable text with spaces (an image or a token
  decodes to bytes or to JSON without sentences, and yields nothing);
* ``rot13``: the whole text, when its rot13 reading holds clearly more common English words than the text itself;
* ``leetspeak``: words mixing letters with the digits and symbols used for letters (``1gn0r3``, ``4ll``);
* ``spaced``: letters written one at a time with spaces, dots, dashes or underscores between them (``I g n o r e``,
  ``i.g.n.o.r.e``), read two ways: words where the gap between letters changes (``I g n o r e   a l l`` is two
  words), and the letters run together and cut into known words (:func:`segment`), which is what is left once a
  summary has put one space everywhere;
* ``reversed``: text written backwards, whole (``.tpmorp eht laever``) or word by word (``erongi lla``), read forwards
  when at least three of its words are known words only backwards.

Invisible characters, compatibility forms and look-alike letters are undone by
:func:`memstack.guard.unmask.fold`, which every pass starts from. A variant is scanned like the text itself (rules
and semantic head alike); what it finds is reported with the ``obfuscated`` flag.

The known words (:func:`vocabulary`) are the words every guard rule is gated on, the stop words and common English
words (``data/decode.yaml``, with the leetspeak letters: :func:`readings`): the words an attack needs, so a reading
that recovers them is the one the rules can judge. No word list of attack sentences: a reading is the text itself,
only decoded.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from memstack.errors import ConfigError
from memstack.guard.unmask import fold, hidden_text

__all__ = ["Readings", "decoded_variants", "hidden_prose", "parse_readings", "readings", "segment", "vocabulary"]

_B64_RUN = re.compile(r"[A-Za-z0-9+/]{16}")
_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/_-])")
_WORD = re.compile(r"[a-z]+")
_LEET_WORD = re.compile(r"(?<![\w@$!])[a-z0-9@$!]*[a-z][a-z0-9@$!]*(?![\w@$!])")
_LEET_MARK = re.compile(r"[a-z][0-9@$]|[0-9@$][a-z]")
# One letter standing alone, then three or more more, each after a short run of spacing or punctuation.
_LETTER = r"[a-z](?![a-z])"
_GAP = r"[\s.\-_*·•|/+~,:;'\"]{1,4}"
_SPACED = re.compile(rf"(?<![a-z]){_LETTER}(?:{_GAP}{_LETTER}){{3,}}")
_GAPS = re.compile(rf"{_LETTER}({_GAP})(?=[a-z])")
# A zero-width character between two letters, where a space would be.
_INVISIBLE_GAP = re.compile("(?<=[A-Za-z])[\u200b\u200c\u200d\u2060\u2063\ufeff\u180e](?=[A-Za-z])")
_LONGEST_WORD = 24
#: The rule sets whose gate words are known words (the sentence-level detectors', the write-time rules' and the
#: upper-case role label's are not).
_VOCABULARY_SETS = (
    ("phrases", "imperatives"),
    ("phrases", "more"),
    ("claims", "claims"),
    ("directives", "addressed"),
    ("standing", "standing"),
    ("standing", "outside"),
)
_MIN_REVERSED = 3  # words known only backwards before a text is read reversed
_READINGS = frozenset({"rot13", "leetspeak"})


@dataclass(frozen=True, slots=True)
class Readings:
    """``data/decode.yaml``: the common English words (rot13, known words), the leetspeak letters, the examples."""

    common: frozenset[str]
    leet: dict[int, str]  # a ``str.translate`` table
    examples: tuple[tuple[str, str, str], ...]  # (reading, text, what the reading says)


@lru_cache(maxsize=1)
def readings() -> Readings:
    """``data/decode.yaml``, read on first use and checked as it loads."""
    path = resources.files("memstack.guard") / "data" / "decode.yaml"
    return parse_readings(path.read_text(encoding="utf-8"))


def parse_readings(text: str) -> Readings:
    """The word lists of a ``decode.yaml`` text; a malformed one is a :class:`~memstack.errors.ConfigError` naming
    the entry."""
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(data, dict) or set(data) != {"about", "common_words", "leet", "examples"}:
        raise ConfigError("decode.yaml must hold about, common_words, leet and examples")
    words = data["common_words"]
    if not isinstance(words, str) or not words.split():
        raise ConfigError("decode.yaml: common_words must be a string of words")
    leet = data["leet"]
    if not (
        isinstance(leet, dict)
        and set(leet) == {"from", "to"}
        and all(isinstance(v, str) for v in leet.values())
        and len(leet["from"]) == len(leet["to"]) > 0
    ):
        raise ConfigError("decode.yaml: leet must have 'from' and 'to', strings of the same length")
    examples: list[tuple[str, str, str]] = []
    for reading, found in (data["examples"] or {}).items():
        if reading not in _READINGS or not isinstance(found, dict) or not found:
            raise ConfigError(f"decode.yaml: examples.{reading}: a reading ({', '.join(sorted(_READINGS))}) maps texts")
        for source, says in found.items():
            if not (isinstance(source, str) and isinstance(says, str)):
                raise ConfigError(f"decode.yaml: examples.{reading}: {source!r} must map to what it says")
            examples.append((reading, source, says))
    leet_map = {ord(a): b for a, b in zip(leet["from"], leet["to"], strict=True)}
    return Readings(frozenset(words.split()), leet_map, tuple(examples))


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """The known words of the spaced and reversed readings: every word a guard rule is gated on, the stop words of
    :mod:`memstack.text` and the common words of the rot13 pass (built on first use)."""
    from memstack.guard.tables import rules
    from memstack.text import STOP_WORDS

    words = set(readings().common) | set(STOP_WORDS)
    for table, name in _VOCABULARY_SETS:
        for r in rules(table, name).rules:
            for gate in r.gates:
                words.update(w for w in gate if w.isalpha() and len(w) > 1)
    return frozenset(w for w in words if w.isascii() and len(w) <= _LONGEST_WORD)


def decoded_variants(norm: str, raw: str, words: set[str] | None = None) -> list[str]:
    """Decoded readings of a text (``norm``: its normalized form, ``raw``: as written, for case-sensitive base64 and
    the characters the normal form removes, ``words``: the words of ``norm`` when the caller has them); empty when no
    pass applies, as for almost all ordinary text, which costs a few set and substring checks."""
    if words is None:
        words = set(_WORD.findall(norm))
    out: list[str] = []
    if not raw.isascii():
        hidden = hidden_text(raw)
        if hidden.strip():
            out.append(hidden)
        if _INVISIBLE_GAP.search(raw):
            out.append(fold(_INVISIBLE_GAP.sub(" ", raw)))
    if _B64_RUN.search(raw):
        b64 = _base64(raw)
        if b64:
            out.append(b64)
    if len(words & readings().common) < 3:  # fewer than three common English words: perhaps rot13
        rot = _rot13(norm)
        if rot:
            out.append(rot)
    if len(_LEET_MARK.findall(norm)) >= 2:
        leet = _leetspeak(norm)
        if leet:
            out.append(leet)
    if sum(len(w) == 1 for w in words) >= 4:
        out.extend(_spaced(norm))
    if len(words) >= _MIN_REVERSED:
        out.extend(_reversed(norm, words))
    return [v for v in dict.fromkeys(out) if v and v != norm]


def hidden_prose(raw: str) -> bool:
    """Whether invisible tag characters in ``raw`` spell three words or more: text written for a machine to read and
    a person not to see. A flag emoji's tags spell one short region code."""
    return len(hidden_text(raw).split()) >= 3


def _base64(raw: str) -> str:
    if len(raw) < 16:
        return ""
    found: list[str] = []
    for match in _B64.finditer(raw):
        token = match.group()
        try:
            data = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
            text = data.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
        if text and printable / len(text) > 0.95 and " " in text and len(_WORD.findall(text.lower())) >= 3:
            found.append(text.lower())
    return "\n".join(found)


def _rot13(norm: str) -> str:
    words = _WORD.findall(norm)
    if len(words) < 4:
        return ""
    common = readings().common
    before = sum(w in common for w in words)
    if before >= 0.2 * len(words):  # reads as English already
        return ""
    rotated = codecs.encode(norm, "rot13")
    after = sum(w in common for w in _WORD.findall(rotated))
    if after >= 3 and after >= 0.4 * len(words) and after >= 2 * before + 2:
        return rotated
    return ""


def _leetspeak(norm: str) -> str:
    if not _LEET_MARK.search(norm):
        return ""
    changed = 0

    def fold(match: re.Match[str]) -> str:
        nonlocal changed
        word = match.group()
        if not _LEET_MARK.search(word):
            return word
        changed += 1
        return word.translate(readings().leet)

    text = _LEET_WORD.sub(fold, norm)
    return text if changed >= 2 else ""


def _spaced(norm: str) -> list[str]:
    """The two readings of letters written one at a time (see the module docstring); empty when there are none."""
    runs = list(_SPACED.finditer(norm))
    if not runs:
        return []
    by_gaps: list[str] = []
    glued: list[str] = []
    last = 0
    for match in runs:
        run = match.group()
        gaps = _GAPS.findall(run + "a")
        inner = max(set(gaps), key=gaps.count)  # the commonest gap joins letters; any other one parts words
        letters = re.findall(r"[a-z]", run)
        parted = [letters[0]]
        for gap, letter in zip(gaps, letters[1:], strict=False):
            parted.append(letter if gap == inner else f" {letter}")
        head = norm[last : match.start()]  # a run is a clause of its own: an imperative may start it
        by_gaps.append(f"{head}\n{''.join(parted)}\n")
        glued.append(f"{head}\n{' '.join(segment(''.join(letters)))}\n")
        last = match.end()
    tail = norm[last:]
    return [
        re.sub(r" {2,}", " ", ("".join(by_gaps) + tail).strip()),
        re.sub(r" {2,}", " ", ("".join(glued) + tail).strip()),
    ]


def segment(letters: str) -> list[str]:
    """``letters`` (lower case, no spaces) cut into known words (:func:`vocabulary`), fewest pieces first; letters no
    known word covers stay together as one piece. ``"ignoreallpreviousinstructions"`` → ``ignore all previous
    instructions``. Dynamic programming over at most 2,000 letters (the rest is left as it is)."""
    known = vocabulary()
    text, rest = letters[:2000], letters[2000:]
    n = len(text)
    unknown_cost = 2.5  # a letter no word covers costs more than any known word
    best = [0.0] + [float("inf")] * n
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(max(0, end - _LONGEST_WORD), end):
            piece = text[start:end]
            cost = 1.0 if piece in known else unknown_cost * len(piece) if end - start == 1 else float("inf")
            if best[start] + cost < best[end]:
                best[end], back[end] = best[start] + cost, start
    pieces: list[str] = []
    end = n
    while end > 0:
        start = back[end]
        pieces.append(text[start:end])
        end = start
    pieces.reverse()
    out: list[str] = []
    alone = False  # the previous piece was a letter no word covers
    for piece in pieces:
        single = len(piece) == 1 and piece not in known
        if single and alone:
            out[-1] += piece
        else:
            out.append(piece)
        alone = single
    if rest:
        out.append(rest)
    return out


def _reversed(norm: str, words: set[str]) -> list[str]:
    """The text read backwards, whole and word by word, when at least three of its words are known words only when
    reversed ("snoitcurtsni", "ruoy", "tegrof") and they are at least half of the words it has that are not known
    words; else nothing."""
    known = vocabulary()
    strange = [w for w in words if len(w) >= 3 and w not in known]
    backwards = sum(w[::-1] in known for w in strange)
    if backwards < _MIN_REVERSED or 2 * backwards < len(strange):
        return []
    return [norm[::-1], _WORD.sub(lambda m: m.group()[::-1], norm)]
