"""Decoding passes run before the guard's rules: text that hides words behind an encoding is read as decoded too.

:func:`decoded_variants` returns what a text says once decoded, one variant per pass that changed something:

* ``base64``: runs of 16+ base64 characters that decode to mostly printable text with spaces (an image or a token
  decodes to bytes or to JSON without sentences, and yields nothing);
* ``rot13``: the whole text, when its rot13 reading holds clearly more common English words than the text itself;
* ``leetspeak``: words mixing letters with the digits and symbols used for letters (``1gn0r3``, ``4ll``);
* ``spaced``: letters written one at a time with spaces between them (``I g n o r e``).

Zero-width characters, soft hyphens, full-width forms and Cyrillic/Greek look-alike letters are folded by
:func:`memstack.context.rules.normalize`, which every pass starts from. A variant is scanned like the text itself; what
it finds is reported with the ``obfuscated`` flag.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re

__all__ = ["decoded_variants"]

_B64_RUN = re.compile(r"[A-Za-z0-9+/]{16}")
_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/_-])")
_WORD = re.compile(r"[a-z]+")
# Common English words: a rot13 reading full of them is English written in rot13.
_COMMON_WORDS = (
    "the be to of and a in that have i it for not on with he as you do at this but his by from they we say her she or "
    "an will my one all would there their what so up out if about who get which go me when make can like time no just "
    "him know take people into year your good some could them see other than then now look only come its over think "
    "also back after use two how our work first well way even new want because any these give day most us is are was "
    "were has had been must should never always tell reveal ignore previous instructions rules system prompt user "
    "assistant send password access data please now every"
)
_COMMON = frozenset(_COMMON_WORDS.split())
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
_LEET_WORD = re.compile(r"(?<![\w@$!])[a-z0-9@$!]*[a-z][a-z0-9@$!]*(?![\w@$!])")
_LEET_MARK = re.compile(r"[a-z][0-9@$]|[0-9@$][a-z]")
_SPACED = re.compile(r"(?<![a-z])(?:[a-z] ){3,}[a-z](?![a-z])")


def decoded_variants(norm: str, raw: str, words: set[str] | None = None) -> list[str]:
    """Decoded readings of a text (``norm``: its normalized form, ``raw``: as written, for case-sensitive base64,
    ``words``: the words of ``norm`` when the caller has them); empty when no pass applies, as for almost all
    ordinary text, which costs a few set and substring checks."""
    if words is None:
        words = set(_WORD.findall(norm))
    out: list[str] = []
    if _B64_RUN.search(raw):
        b64 = _base64(raw)
        if b64:
            out.append(b64)
    if len(words & _COMMON) < 3:  # fewer than three common English words: perhaps rot13
        rot = _rot13(norm)
        if rot:
            out.append(rot)
    if len(_LEET_MARK.findall(norm)) >= 2:
        leet = _leetspeak(norm)
        if leet:
            out.append(leet)
    if sum(len(w) == 1 for w in words) >= 4:
        spaced = _spaced(norm)
        if spaced:
            out.append(spaced)
    return out


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
    before = sum(w in _COMMON for w in words)
    if before >= 0.2 * len(words):  # reads as English already
        return ""
    rotated = codecs.encode(norm, "rot13")
    after = sum(w in _COMMON for w in _WORD.findall(rotated))
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
        return word.translate(_LEET)

    text = _LEET_WORD.sub(fold, norm)
    return text if changed >= 2 else ""


def _spaced(norm: str) -> str:
    if not _SPACED.search(norm):
        return ""
    joined = _SPACED.sub(lambda m: m.group().replace(" ", ""), norm)
    return re.sub(r" {2,}", " ", joined)
