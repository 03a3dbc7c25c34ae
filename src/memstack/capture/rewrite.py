"""Rewrite a first-person sentence as a durable fact about "User".

The convention is fixed: the subject is the word ``User`` ("I'm a sophomore at UCLA" → "User is a sophomore at
UCLA", "my quiz is …" → "User's quiz is …", "visual examples help me" → "Visual examples help User"); "we" becomes
"User and others". Verbs after "I" are put in the third person with a small set of rules and irregulars. Where a
sentence cannot be rewritten cleanly the result is still readable, never invented.

A memory (``their=True``, what capture stores) reads as a sentence someone would write: once the user is the
subject, what is the user's is "their" ("I quit my job" → "User quit their job", not "User quit User's job"), a
subject shared with someone stays shared ("my wife and I are vegetarian" → "User and their wife are vegetarian",
"me and my flatmates" → "User and their flatmates"), and a lower-case "i" is the user too. The default keeps
"User's" everywhere, which the update judge's patterns read.
"""

from __future__ import annotations

import re

__all__ = ["SUBJECT", "strip_preamble", "third_person"]

#: The subject every captured memory is written about.
SUBJECT = "User"

_IRREGULAR = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "wanna": "wants to",
    "'ve": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "dont": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
}
# Words after "I" that keep their form: past tenses, modals and contractions that do not depend on the person.
_INVARIANT_TEXT = """was did had could would should might must will shall
    can can't cannot couldn't wouldn't shouldn't won't didn't
    wasn't 'd 'll went got made took saw met came bought brought ran won lost left told said felt found gave began wrote
    ate spent paid sold sent thought knew kept led meant put set sat slept spoke stood taught understood woke wore
    became broke caught chose drove flew fell grew heard read hit quit cut let hurt built fought forgot
    tore swore bore shook froze stole rode rose drew dug hung lit slid spun sprang stuck stung struck swam swung threw
    wept bled bent bit blew bred burnt dealt dreamt drank fed fled flung forgave hid knelt leapt lent misled overcame
    rang sang sank sought shot shrank sped strode swept withdrew mistook undertook underwent withheld"""
_PARTICIPLE_TEXT = """been gone done seen had left made taken given known got gotten told said found lost met bought
    brought thought written eaten driven forgotten spent sent heard kept felt begun broken chosen fallen flown grown
    hidden ridden shown spoken stolen thrown woken worn won sold paid built caught taught slept lent meant fought held
    stood understood better"""
_PARTICIPLES = frozenset(_PARTICIPLE_TEXT.split())
# A past tense or a participle after "I" ("I tore my ACL", "I never been to Japan" as chat writes it) keeps its form:
# none of them takes an "-s".
_INVARIANT = frozenset(_INVARIANT_TEXT.split()) | _PARTICIPLES
_ADVERB_TEXT = """really also just still usually always never often actually recently finally sometimes
    totally definitely
    truly mostly generally kinda sort kind personally honestly already even only absolutely no longer"""
_ADVERBS = frozenset(_ADVERB_TEXT.split())
#: Past participles that do not end in "-ed" (above): after "I'd" they make it "had" ("I'd left my keys"), as
#: "better" does.


def _had_or_would(after: str | None) -> str:
    """What "'d" stands for, by the verb after it: "had" before a past participle ("I'd moved", "I'd been"),
    "would" before a bare verb ("I'd like", "I'd rather")."""
    if after is None:
        return "would"
    low = after.lower()
    regular = low.endswith("ed") and not low.endswith("eed") and len(low) > 3
    return "had" if regular or low in _PARTICIPLES else "would"


_PRONOUNS = {
    "me": "User",
    "myself": "User",
    "my": "User's",
    "mine": "User's",
    "we": "User and others",
    "us": "User and others",
    "our": "User's",
    "ours": "User's",
    "we're": "User and others are",
    "we've": "User and others have",
    "we'll": "User and others will",
}

_PREAMBLE = re.compile(
    r"^\s*(?:(?:hey|hi|hello|yeah|yes|yep|yup|oh|ah|wow|well|so|ok|okay|sure|honestly|btw|by the way|also|and|but|"
    r"lol|haha|anyway|anyways|thanks|thank you|aw|aww|omg|totally|absolutely|exactly|indeed|true|finally|lastly|"
    r"fyi|just so you know|for the record|for what it's worth|to be honest|tbh|one more thing|one last thing|"
    # a name addressed after it is capitalised ("Yeah, Mel! …"): "also pregnant, due in may" addresses no one
    r"last thing|p\.?s\.?)(?:[\s,]+(?-i:[A-Z][a-z]+)(?=[,!.]))?[\s,!.:;-]+|"
    # Sequence words only before a comma or colon: "Now, …" is a lead-in, "Now that I'm retired, …" is not.
    r"(?:now|then|next|first|firstly|second|secondly|plus|additionally|and then)\s*[,:]\s*)+",
    re.IGNORECASE,
)
# Filler at the end of a sentence: "…, by the way", "… btw", "… lol", "…, just so you know".
_FILLER = re.compile(
    r"(?:[\s,;:-]+(?:by the way|btw|fyi|just so you know|for the record|for what it's worth|just saying|tbh|lol|"
    r"lmao|haha+|hehe+|:\)|:D|;\)|for context))+[\s.!…]*$",
    re.IGNORECASE,
)
# A hedge on whether the fact is relevant, at its end ("I bank with Monzo if that matters", "…, in case it helps",
# "…, if that changes anything"): a remark on the conversation, not part of the fact, and words that make the fact
# read as a conditional. Not after a word whose object it is ("I wonder if that matters", "not sure if it helps").
_HEDGE = re.compile(
    r"(?<!\bwonder)(?<!\bknow)(?<!\bsure)(?<!\bask)(?<!\basked)(?<!\bsee)(?<!\bcheck)(?<!\btell)(?<!\bidk)"
    r"(?<!\bdoubt)[\s,;:-]+(?:just\s+)?(?:if|in case)\s+(?:that|it|this)(?:'s|\s+is)?\s+(?:matters|helps|relevant|"
    r"useful|important|changes anything|makes a difference)[\s.!…]*$",
    re.IGNORECASE,
)

_WORD = re.compile(r"[A-Za-z']+|[^A-Za-z']+")


def strip_preamble(sentence: str) -> str:
    """Drop leading interjections, lead-ins and address ("Yeah, Mel! …", "Oh well, …", "Finally, …", "Just so you
    know, …"), trailing filler ("…, by the way", "… lol") and a trailing hedge on relevance ("… if that matters"):
    none of it belongs in a memory."""
    stripped = _PREAMBLE.sub("", sentence).strip()
    stripped = _FILLER.sub("", _HEDGE.sub("", _FILLER.sub("", stripped))).strip()
    return stripped or sentence.strip()


def _present_eed(word: str) -> bool:
    """ "need", "feed", "succeed": present tenses that end in "-ed" ("agreed", "freed" are past)."""
    return word.endswith("eed") and word not in ("agreed", "freed", "guaranteed", "decreed", "refereed")


def _third(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _INVARIANT or (low.endswith("ed") and not _present_eed(low)) or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


#: Verbs that end in "-ly" (every other "-ly" word after "I" is an adverb: "I officially retired").
_LY_VERBS = frozenset(["rely", "fly", "ally", "rally", "tally", "bully", "sully", "dally", "belly", "jelly"])


def _ly_adverb(word: str) -> bool:
    return len(word) > 4 and word.endswith("ly") and not word.endswith("ply") and word not in _LY_VERBS


def _split_contraction(word: str) -> tuple[str, str | None]:
    low = word.lower().replace("’", "'")
    for suffix in ("'m", "'ve", "'d", "'ll"):
        if low == "i" + suffix:
            return "I", suffix
    if low == "im":
        return "I", "'m"
    return word, None


#: What the user's own words become once the user is the subject of the clause (``their=True``).
_OWN = {"my": "their", "mine": "theirs", "myself": "themselves", "me": "them", "our": "their", "ours": "theirs"}
_SHARED_SUBJECT = re.compile(
    r"^(?:(?:my|our)\s+(?P<who>(?:[\w'-]+\s+){0,2}?[\w'-]+)|(?P<name>[A-Z][a-z]+))\s+and\s+(?:I|me)\b|"
    r"^(?:me|I)\s+and\s+(?:my|our)\s+(?P<others>(?:[\w'-]+\s+){0,2}?[\w'-]+)(?=\s+(?!and\b)[a-z])",
    re.IGNORECASE,
)


def _shared_subject(sentence: str) -> str:
    """ "My wife and I …" → "User and their wife …"; "Sam and I …" → "User and Sam …"."""
    m = _SHARED_SUBJECT.match(sentence)
    if m is None:
        return sentence
    who = m.group("who") or m.group("others")
    partner = f"their {who}" if who else m.group("name")
    return f"{SUBJECT} and {partner}{sentence[m.end() :]}"


#: Auxiliaries that, before "I", ask a question ("should I be worried", "can I get"): the verb after "I" is bare.
_AUXILIARIES = frozenset(
    ["do", "does", "did", "can", "could", "should", "would", "will", "shall", "may", "might", "must"]
)


def _asked(out: list[str]) -> bool:
    """The word written before "User" (the last of ``out``) is an auxiliary: "I" is the subject of a question."""
    before = next((w for w in reversed(out[:-1]) if w.strip()), "")
    return before.strip().lower() in _AUXILIARIES


def _verb_after(parts: list[str], at: int) -> str | None:
    """The first word after ``parts[at]`` that is not an adverb ("I'd already left": "left")."""
    for part in parts[at + 1 :]:
        if part[0].isalpha():
            low = part.lower()
            if low not in _ADVERBS and not _ly_adverb(low):
                return part
    return None


def _hyphened(parts: list[str], at: int) -> bool:
    """``parts[at]`` is joined by a hyphen to a neighbouring word or number ("CBT-I", "I-95", "me-time"): part of a
    name or compound, not a pronoun."""
    before = parts[at - 1] if at > 0 else ""
    after = parts[at + 1] if at + 1 < len(parts) else ""
    joined_before = before.endswith("-") and (
        (before == "-" and at > 1) or (len(before) > 1 and not before[-2].isspace())
    )
    joined_after = after.startswith("-") and (
        (after == "-" and at + 2 < len(parts)) or (len(after) > 1 and not after[1].isspace())
    )
    return joined_before or joined_after


def third_person(sentence: str, *, their: bool = False) -> str:
    """The sentence with the speaker as "User"; capitalised, trailing space trimmed. ``their``: as a memory is
    written (see the module docstring)."""
    text = sentence.replace("’", "'")
    user_subject = False  # the user is the clause's subject: their own things are "their"
    if their:
        shared = _shared_subject(text)
        user_subject = shared != text
        text = shared
    parts = _WORD.findall(text)
    shouting = text.upper() == text
    out: list[str] = []
    expect_verb = False  # just after "I": the next word is the verb to conjugate
    for at, part in enumerate(parts):
        if not part[0].isalpha() and part[0] != "'":
            out.append(part)
            continue
        word, suffix = _split_contraction(part)
        low = word.lower()
        if their and len(word) > 1 and word.isupper() and not shouting:
            out.append(part)  # "US", "IT": an acronym, not "us" or "it"
            expect_verb = False
            continue
        if suffix is not None:
            user_subject = user_subject or their
            out.append("User")
            if suffix == "'d":
                out.append(" " + _had_or_would(_verb_after(parts, at)))
            else:
                out.append(" " + ("will" if suffix == "'ll" else _third(suffix)))
            expect_verb = False
            continue
        if expect_verb:
            if low in _ADVERBS or _ly_adverb(low) or parts[at + 1 : at + 2] == ["-"]:
                out.append(word)  # an adverb, or a verb's prefix ("re-did", "co-own"): the verb is yet to come
                continue
            out.append(_third(word))
            expect_verb = False
            continue
        if _hyphened(parts, at):
            out.append(part)
        elif word == "I" or (their and word == "i"):
            out.append("User")
            expect_verb = not _asked(out)  # "should I be": a question's verb stays bare
            user_subject = their
        elif user_subject and low in _OWN:
            out.append(_OWN[low])
        elif low in _PRONOUNS:
            out.append(_PRONOUNS[low])
            user_subject = user_subject or (their and low in ("we", "we're", "we've", "we'll"))
        else:
            out.append(part)
    text = "".join(out).strip()
    text = re.sub(r"\s+", " ", text)
    return text[:1].upper() + text[1:]
