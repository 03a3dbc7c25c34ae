"""Undoing what attackers hide words with, before any judgement: the one normal form the guard reads.

Every layer of the guard (the phrase rules, the other-language rules, the semantic head, the write-time checks of
memories and session facts, the check of client metadata) reads text through :func:`fold`, so a trick that defeats
one layer cannot defeat another. What is undone, and why each is safe for ordinary text:

* **invisible characters** (:data:`INVISIBLE`): zero-width spaces and joiners, word joiners, the byte-order mark, soft
  hyphens, bidi controls (embeddings, overrides, isolates, marks), variation selectors, invisible fillers and the
  Unicode tag characters (U+E0000 block) are removed. They change how text looks, never what its words are: a family
  emoji's joiners or a flag's tag characters carry no words, and "ig\u200bnore" is "ignore" to a model;
* **compatibility forms and marks**: NFKC (full-width letters, mathematical bold or script letters, circled letters,
  ligatures), then combining marks: stacked "zalgo" accents, and the accents of Latin letters ("Ignóre your rüles",
  read as English, is "ignore your rules"; the other-language rules read the text with its accents);
* **look-alike letters** (:data:`LOOKALIKE`): Cyrillic, Greek and Armenian letters drawn like Latin ones, small
  capitals, and the letter-like emoji (regional indicators, negative circled and squared letters) become the Latin
  letter they pass for. Text in those scripts becomes Latin gibberish no English rule reads; the other-language
  rules read the text unfolded (``lookalikes=False``). A capital I between lower-case letters is read as the "l" it
  is drawn like.

What the text says once decoded (hidden tag text, spaced or reversed letters, base64 …) is a *reading* of it, not its
normal form: :mod:`memstack.guard.decode` produces those, each scanned like the text itself. :func:`hidden_text`
is the one decoding that lives here, because the tag characters it reads are the ones :func:`fold` removes.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["INVISIBLE", "LOOKALIKE", "fold", "hidden_text", "invisible"]

#: Ranges of characters that draw nothing (or only steer how neighbours are drawn): removed before judgement.
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, (non-)joiner, left-to-right and right-to-left marks
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x206F),  # bidi isolates, deprecated format characters
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # byte-order mark, zero-width no-break space
    (0xFFA0, 0xFFA0),  # half-width Hangul filler
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical format controls
    (0xE0000, 0xE007F),  # tag characters
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
INVISIBLE: dict[int, None] = {cp: None for lo, hi in _INVISIBLE_RANGES for cp in range(lo, hi + 1)}

_LOOK_FROM = (
    # Cyrillic
    "аеорсхуіјѕԁһкмнтвԛԝӏѵүҺАЕОРСХУІЈЅНКМТВԚԜӀҮ"
    # Greek
    "αεοιυνκτρςϲϳχωηΑΕΟΙΚΤΡΒΗΖΝΜΧΥ"
    # Armenian
    "օսհոցրՕՍ"
    # small capitals and other Latin-like letters
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢıȷɑɡ"
)
_LOOK_TO = (
    "aeopcxyijsdhkmhtbqwlvyhaeopcxyijshkmtbqwlyaeoiuvktpscjxwnaeoiktpbhznmxyouhngrouabcdefghijklmnopqrstuvwyzijag"
)
#: Quotation marks drawn like ASCII ones, folded in every script ("l’IA" is "l'ia").
_QUOTES = str.maketrans("‘’ʼ“”", "'''\"\"")
_LETTER_EMOJI = {
    **{0x1F1E6 + i: chr(0x61 + i) for i in range(26)},  # regional indicators
    **{0x1F150 + i: chr(0x61 + i) for i in range(26)},  # negative circled letters
    **{0x1F170 + i: chr(0x61 + i) for i in range(26)},  # negative squared letters
}
LOOKALIKE: dict[int, str] = {
    **{ord(a): b for a, b in zip(_LOOK_FROM, _LOOK_TO, strict=True)},
    **_LETTER_EMOJI,
}
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
    out = unicodedata.normalize("NFKC", text.translate(INVISIBLE))
    if not out.isascii():
        # Accents go too when the text is read as Latin ("Ignóre your rüles"); other scripts keep theirs.
        out = unicodedata.normalize("NFD", out) if lookalikes else out
        out = unicodedata.normalize("NFC", "".join(ch for ch in out if unicodedata.category(ch) not in _MARKS))
    out = out.translate(_QUOTES)
    if lookalikes:
        out = _CAPITAL_I.sub("l", out).translate(LOOKALIKE)
    return out.lower()


def invisible() -> dict[int, None]:
    """The characters :func:`fold` removes, as a ``str.translate`` table (code point → ``None``)."""
    return INVISIBLE


def hidden_text(text: str) -> str:
    """What Unicode tag characters in ``text`` spell (U+E0020-E007E are ASCII 0x20-0x7E shifted), lower-cased; empty
    when it has none. A flag emoji spells a region code this way ("gbsct"); a sentence spelled this way is text
    meant to be read by a machine and not by the person looking at it."""
    if text.isascii():
        return ""
    return "".join(chr(ord(ch) - 0xE0000) for ch in text if 0xE0020 <= ord(ch) <= 0xE007E).lower()
