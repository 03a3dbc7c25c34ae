"""Undoing what attackers hide words with, before any judgement: the one normal form the guard reads.

Every layer of the guard (the phrase rules, the other-language rules, the semantic head, the write-time checks of
memories and session facts, the check of client metadata) reads text through :func:`fold`, so a trick that defeats
one layer cannot defeat another. What is undone, and why each is safe for ordinary text:

* **invisible characters** (``invisible``): zero-width spaces and joiners, word joiners, the byte-order mark, soft
  hyphens, bidi controls (embeddings, overrides, isolates, marks), variation selectors, invisible fillers and the
  Unicode tag characters (U+E0000 block) are removed. They change how text looks, never what its words are: a family
  emoji's joiners or a flag's tag characters carry no words, and "ig\u200bnore" is "ignore" to a model;
* **compatibility forms and marks**: NFKC (full-width letters, mathematical bold or script letters, circled letters,
  ligatures), then combining marks: stacked "zalgo" accents, and the accents of Latin letters ("Ignóre your rüles",
  read as English, is "ignore your rules"; the other-language rules read the text with its accents);
* **look-alike letters** (``lookalikes``, ``letter_emoji``): Cyrillic, Greek and Armenian letters drawn like Latin
  ones, small capitals, and the letter-like emoji (regional indicators, negative circled and squared letters) become
  the Latin letter they pass for. Text in those scripts becomes Latin gibberish no English rule reads; the
  other-language rules read the text unfolded (``lookalikes=False``). A capital I between lower-case letters is read
  as the "l" it is drawn like.

What the text says once decoded (hidden tag text, spaced or reversed letters, base64 …) is a *reading* of it, not its
normal form: :mod:`memstack.guard.decode` produces those, each scanned like the text itself. :func:`hidden_text`
is the one decoding that lives here, because the tag characters it reads are the ones :func:`fold` removes.

The tables (``invisible``, ``lookalikes``, ``quotes``, ``letter_emoji``) are ``data/unmask.yaml``, read on first use
(:func:`maps`) and checked as they load; each look-alike row carries examples of what :func:`fold` reads, which
``tests/guard/test_unmask.py`` runs.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from memstack.errors import ConfigError

__all__ = ["Maps", "fold", "hidden_text", "invisible", "maps", "parse_maps"]


@dataclass(frozen=True, slots=True)
class Maps:
    """The tables of ``data/unmask.yaml``, as ``str.translate`` tables."""

    invisible: dict[int, None]  # characters that draw nothing (or only steer how neighbours are drawn): removed
    lookalike: dict[int, str]  # letters drawn like Latin ones, and the letter-like emoji: the letter they pass for
    quotes: dict[int, str]  # quotation marks drawn like ASCII ones, folded in every script ("l’IA" is "l'ia")
    examples: tuple[tuple[str, str], ...]  # (text, what fold reads): every row's examples


@lru_cache(maxsize=1)
def maps() -> Maps:
    """``data/unmask.yaml``, read on first use and checked as it loads."""
    path = resources.files("memstack.guard") / "data" / "unmask.yaml"
    return parse_maps(path.read_text(encoding="utf-8"))


def parse_maps(text: str) -> Maps:
    """The maps of an ``unmask.yaml`` text; a malformed row is a :class:`~memstack.errors.ConfigError` naming it."""
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(data, dict) or set(data) != {"about", "invisible", "lookalikes", "quotes", "letter_emoji"}:
        raise ConfigError("unmask.yaml must hold about, invisible, lookalikes, quotes and letter_emoji")
    examples: list[tuple[str, str]] = []
    invisible: dict[int, None] = {}
    for i, row in enumerate(_rows(data["invisible"], "invisible", {"first", "last", "what"})):
        first, last = row["first"], row["last"]
        if not (isinstance(first, int) and isinstance(last, int) and 0 <= first <= last <= 0x10FFFF):
            raise ConfigError(f"unmask.yaml: invisible[{i}]: 'first' and 'last' must be code points, first <= last")
        invisible.update(dict.fromkeys(range(first, last + 1)))
    lookalike: dict[int, str] = {}
    for i, row in enumerate(_rows(data["lookalikes"], "lookalikes", {"script", "from", "to", "examples"})):
        lookalike.update(_pairs(row, f"lookalikes[{i}] ({row['script']})", examples))
    for i, row in enumerate(_rows(data["letter_emoji"], "letter_emoji", {"first", "what", "examples"})):
        if not isinstance(row["first"], int):
            raise ConfigError(f"unmask.yaml: letter_emoji[{i}]: 'first' must be a code point")
        lookalike.update({row["first"] + n: chr(0x61 + n) for n in range(26)})
        examples.extend(_examples(row, f"letter_emoji[{i}]"))
    (quotes_row,) = _rows([data["quotes"]], "quotes", {"from", "to", "examples"})
    quotes = _pairs(quotes_row, "quotes", examples)
    return Maps(invisible, lookalike, quotes, tuple(examples))


def _rows(value: Any, at: str, keys: set[str]) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"unmask.yaml: {at} must be a list of one row or more")
    for i, row in enumerate(value):
        if not isinstance(row, dict) or set(row) != keys:
            raise ConfigError(f"unmask.yaml: {at}[{i}] must have exactly {', '.join(sorted(keys))}")
    return value


def _pairs(row: dict[str, Any], at: str, examples: list[tuple[str, str]]) -> dict[int, str]:
    before, after = row["from"], row["to"]
    if not (isinstance(before, str) and isinstance(after, str) and before and len(before) == len(after)):
        raise ConfigError(f"unmask.yaml: {at}: 'from' and 'to' must be strings of the same length, one letter each")
    examples.extend(_examples(row, at))
    return {ord(a): b for a, b in zip(before, after, strict=True)}


def _examples(row: dict[str, Any], at: str) -> list[tuple[str, str]]:
    found = row["examples"]
    if not isinstance(found, dict) or not found or not all(isinstance(v, str) for v in (*found, *found.values())):
        raise ConfigError(f"unmask.yaml: {at}: 'examples' must map a text to what the guard reads")
    return list(found.items())


def invisible() -> dict[int, None]:
    """The characters :func:`fold` removes, as a ``str.translate`` table (code point → ``None``)."""
    return maps().invisible


_MARKS = frozenset({"Mn", "Me"})
#: A capital I (Latin, Greek or Cyrillic) between lower-case letters stands for an "l" ("ruIes"): the two are drawn
#: alike, and no word is written with a capital inside it that way except names (McIntosh), which no rule reads.
_CAPITAL_I = re.compile(r"(?<=[a-z])[IΙІӀ](?=[a-z])")


def fold(text: str, *, lookalikes: bool = True) -> str:
    """The guard's normal form of ``text``: lower case, invisible characters removed, compatibility forms and
    leftover combining marks undone, look-alike letters made Latin (unless ``lookalikes`` is false: the
    other-language rules keep Cyrillic and Greek as they are). ASCII text is only lower-cased."""
    if text.isascii():
        return _CAPITAL_I.sub("l", text).lower() if "I" in text else text.lower()
    tables = maps()
    out = unicodedata.normalize("NFKC", text.translate(tables.invisible))
    if not out.isascii():
        # Accents go too when the text is read as Latin ("Ignóre your rüles"); other scripts keep theirs.
        out = unicodedata.normalize("NFD", out) if lookalikes else out
        out = unicodedata.normalize("NFC", "".join(ch for ch in out if unicodedata.category(ch) not in _MARKS))
    out = out.translate(tables.quotes)
    if lookalikes:
        out = _CAPITAL_I.sub("l", out).translate(tables.lookalike)
    return out.lower()


def hidden_text(text: str) -> str:
    """What Unicode tag characters in ``text`` spell (U+E0020-E007E are ASCII 0x20-0x7E shifted), lower-cased; empty
    when it has none. A flag emoji spells a region code this way ("gbsct"); a sentence spelled this way is text
    meant to be read by a machine and not by the person looking at it."""
    if text.isascii():
        return ""
    return "".join(chr(ord(ch) - 0xE0000) for ch in text if 0xE0020 <= ord(ch) <= 0xE007E).lower()
