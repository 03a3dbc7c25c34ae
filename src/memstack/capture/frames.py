"""What a memory-like sentence says, and about whom: the frames the offline update matcher compares.

A sentence ("User moved to Berlin in October, still unpacking boxes.") is normalised (first person rewritten about
"User", lower case, contractions expanded), split into clauses, and each clause gives at most one
:class:`Frame`: **who** it is about (``user``, or someone else such as ``user's sister``), **which attribute**
(a slot such as ``residence``), **what value** (content stems, here ``{berlin}``), and whether it holds, began or
ended (:class:`Mode`). Clauses with none of the patterns below give an ``activity`` frame (what the user does,
has or plans) when the user is their subject.

Slots hold one value at a time (a new value replaces the old): ``residence``, ``household`` and ``home`` (where,
with whom, in what: "rents a flat"), ``job`` and ``employer`` (what, for whom), ``partner``, ``diet``, ``school``,
``team``, ``commute`` (working from home included), ``age``, ``pregnancy`` (ended by a birth), ``hair``,
``favourite:<thing>``, ``count:<thing>``, ``schedule:<event>`` and ``attr:<name>`` ("user's major is …").
``activity`` and ``likes`` hold many (learning Spanish does not end learning French); they change only when one of
them ends ("no longer", "stopped", "quit", "gave up", "cancelled", "sold", "passed away"), resumes ("again"), flips
("loves" / "can't stand", "prefers tea" after "prefers coffee over tea"), or is switched ("switched to", "traded …
for", "… instead of …"). The wordings are in :mod:`~memstack.capture.slots`.

Everything is regular expressions: about 0.5 ms for a short candidate against eight short memories, no model.
Frames of texts up to a memory's length (2,000 characters) are cached, 2,048 of them (a few MB at most).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from memstack.capture import slots as sl
from memstack.capture.rewrite import third_person, user_possessives
from memstack.capture.slots import Mode
from memstack.dates import MONTH_NAMES, MONTHS, WEEKDAY_NAMES
from memstack.text import STOP_WORDS, tokenize, words
from memstack.types import MAX_CONTENT_CHARS

__all__ = [
    "FACETS",
    "POSITIVE_STATUS",
    "SINGLE_VALUED",
    "STATUS",
    "Frame",
    "Mode",
    "clauses",
    "content",
    "frames",
    "head_stems",
    "keys",
    "normalise",
]


#: Slots that hold one value at a time (``favourite:``, ``count:`` and ``schedule:`` slots are single-valued too).
SINGLE_VALUED = frozenset(
    {
        "residence",
        "household",
        "home",
        "salary",
        "job",
        "employer",
        "partner",
        "diet",
        "school",
        "commute",
        "age",
        "team",
        "pregnancy",
        "hair",
    }
)
#: Slots that are facets of one attribute: a change of one (a new job, a move) replaces the other's statement too,
#: but two statements of different facets never conflict ("works as a nurse" / "works at St. Mary's").
FACETS = ({"job", "employer"}, {"residence", "household", "home"}, {"school", "attr:major"})
_KEYED = ("favourite:", "count:", "schedule:", "attr:")
#: Values of an ended state that name no one and nothing in particular ("is single", "is unemployed").
STATUS = frozenset(tokenize("single divorced separated widowed widow widower unemployed jobless retired out of work"))
#: Values of a state that name no one in particular ("is married", "is in a relationship").
POSITIVE_STATUS = frozenset(tokenize("married engaged relationship"))


@dataclass(frozen=True, slots=True)
class Frame:
    subject: str  # "user", "user's sister", or "other"
    slot: str  # "residence", "job", …, "favourite:band", "schedule:dentist appoint", "activity", "likes", "switch"
    mode: Mode
    value: frozenset[str]  # content stems of the filler
    clause: str  # the normalised clause it came from
    additive: bool = False  # "also", "too", "as well": beside the old fact, never instead of it
    again: bool = False  # "again", "back to": something that had ended resumes
    origin: frozenset[str] = field(default_factory=frozenset)  # "switched from X to Y": X's stems

    @property
    def single(self) -> bool:
        return self.slot in SINGLE_VALUED or self.slot.startswith(_KEYED)

    @property
    def negative(self) -> bool:
        return self.mode is Mode.END


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# -- normalising ------------------------------------------------------------------------------------------------------

_FIRST_PERSON = _rx(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|us)\b")
_CONTRACTIONS = (
    (_rx(r"\bcan't\b|\bcannot\b"), "can not"),
    (_rx(r"\bwon't\b"), "will not"),
    (_rx(r"\b(\w+)n't\b"), r"\1 not"),
    (_rx(r"\bisnt\b"), "is not"),
    (_rx(r"\bdoesnt\b"), "does not"),
    (_rx(r"\bdont\b"), "do not"),
)


def normalise(text: str) -> str:
    """Lower case, "User" as the subject of first-person text, a memory's "their" read as the user's, curly quotes
    straightened, "n't" expanded."""
    text = user_possessives(text.replace("’", "'").replace("‘", "'").strip())
    low = text.lower()
    if _FIRST_PERSON.search(low) and not re.search(r"\buser\b", low):
        low = third_person(text).lower()
    for pattern, repl in _CONTRACTIONS:
        low = pattern.sub(repl, low)
    low = re.sub(r"\buser and others\b", "user", low)
    return re.sub(r"\s+", " ", low).strip()


# -- clauses and their subjects ----------------------------------------------------------------------------------------

_PEOPLE = """sister sisters brother brothers mom mum mother dad father parents parent wife husband partner boyfriend
    girlfriend fiance fiancee spouse son sons daughter daughters kid kids child children baby friend friends roommate
    roommates flatmate cousin cousins aunt uncle grandma grandmother grandpa grandfather grandparents neighbour
    neighbor neighbours neighbors boss colleague colleagues coworker coworkers manager family niece nephew stepmom
    stepdad twin teammate classmate classmates ex"""
PEOPLE = frozenset(_PEOPLE.split())
_PARTNER_WORDS = "husband wife partner boyfriend girlfriend fiance fiancee spouse"
_CHILDREN = frozenset(["son", "daughter", "baby", "kid", "child", "twin"])
_PARTNERS = frozenset(f"user's {w}" for w in _PARTNER_WORDS.split())
_PERSON_ADJ_WORDS = "older younger elder little big best old new two three four five twin baby step"
_PERSON_ADJ = frozenset(_PERSON_ADJ_WORDS.split())
# Words that may open a clause before its subject: "Sadly, …", "These days …", "On Monday …", "Last week, …".
_LEAD_WORDS = """sadly honestly luckily unfortunately fortunately finally recently nowadays anyway well so now then
    also actually btw basically officially apparently these those this that last next past coming days day week weeks
    month months year years ago today yesterday tonight on in at since by from after before during as of the a
    weekend summer winter spring fall autumn morning evening night and but"""
_LEADS = frozenset([*_LEAD_WORDS.split(), *MONTH_NAMES, *WEEKDAY_NAMES])
_PREPOSITIONS = frozenset(["after", "before", "since", "following", "thanks", "during", "despite"])
_VERBISH = _rx(
    r"^(?:(?:now|then|also|just|recently|finally|later|soon|eventually)\s+)?"
    r"(?:no more|\w+ed|\w+ing|started|start|starts|"
    r"began|begin|begins|bought|got|gets|joined|joins|moved|left|leaves|quit|quits|sold|sells|took|takes|went|goes|"
    r"is|are|was|were|has|have|had|will|does|do|did|lives|live|works|work|eats|eat|earns|earn|plays|drives|cycles|"
    r"walks|makes|studies|study|uses|use|"
    r"switched|cancelled|canceled|found|became|becomes|broke|split|married|divorced|gave|gives|turned|"
    r"signed|landed|retired|resigned|graduated|transferred|relocated|traded|no longer|never|can|can not)\b"
)
_SPLIT = _rx(
    r"\s*[.!?;:]+\s+|\s*[.!?;]+$|"
    r",\s+(?=(?:and |but |so |since |because |though |although |while )?(?:user|she|he|they|it)\b)|"
    r"\s+(?:but|so|since|because|though|although|while|whereas|when)\s+"
    r"(?=(?:user|user's|she|he|they|it|there|the|his|her|their|now)\b)"
)
_AND_VERB = _rx(r"(,?\s+and\s+|,\s+)")
_JOINT = _rx(r"^([a-z][\w'-]*) and user\b(?!')|^user and (?:user's )?([a-z][\w'-]*)\b")


@dataclass(frozen=True, slots=True)
class _Clause:
    subject: str
    text: str  # the clause from its subject on ("user moved to berlin"), or its predicate when inherited
    companion: str = ""  # "sam and user broke up": sam


def _strip_lead(text: str) -> str:
    """Drop adverbials before the subject ("sadly user's dog …", "on monday user starts …"), only when every word
    before "user" is one of them or they are a phrase opened by a preposition ("after the immunotherapy user is …"),
    so "a friend of user works at …" keeps its subject."""
    words = text.split(" ")
    phrase = words[0] in _PREPOSITIONS
    for i, word in enumerate(words[:7]):
        bare = word.strip(",:")
        if bare in ("user", "user's"):
            return " ".join(words[i:])
        if bare not in _LEADS and not bare.isdigit() and not phrase:
            return text
    return text


def _drop_leads(text: str) -> str:
    """The clause without the adverbials it opens with ("sadly, bubbles did not make it" → "bubbles did not …")."""
    words = text.split(" ")
    i = 0
    while i < min(len(words) - 1, 4) and words[i].strip(",:") in _LEADS:
        i += 1
    return " ".join(words[i:])


def _subject(text: str) -> tuple[str, str, str]:
    """(subject, clause text from the subject, companion) of a clause that names its subject."""
    text = _strip_lead(text.strip(" ,:-"))
    if m := _JOINT.match(text):
        companion = m.group(1) or m.group(2) or ""
        return "user", "user" + text[m.end() :], companion
    if text.startswith("user's "):
        rest = text[7:].split(" ")
        i = 0
        while i < len(rest) - 1 and rest[i] in _PERSON_ADJ:
            i += 1
        person = rest[i].strip(",").removesuffix("'s") if rest else ""
        if person in PEOPLE:
            return f"user's {person}", text, ""
        return "user", text, ""
    if text == "user" or text.startswith("user "):
        return "user", text, ""
    if m := sl.ELIDED.match(_drop_leads(text)):  # "finally got rid of the civic": "I" left out
        return "user", "user " + _drop_leads(text)[m.end() :], ""
    return "other", text, ""


def clauses(text: str) -> list[_Clause]:
    """The clauses of a normalised sentence with their subjects; a clause that starts with a verb ("… and joined a
    startup") inherits the subject of the one before."""
    out: list[_Clause] = []
    for piece in _SPLIT.split(text):
        if not piece or not piece.strip(" ,"):
            continue
        subject, body, companion = _subject(piece)
        parts = _AND_VERB.split(body)
        out.append(_Clause(subject, parts[0], companion))
        for sep, part in zip(parts[1::2], parts[2::2], strict=True):
            part = part.strip(" ,")
            if re.match(r"(?:(?:now|then|so) )?(?:user|user's|she|he|they|it)\b", part):
                sub, text_, comp = _subject(part)
                out.append(_Clause(sub, text_, comp))
            elif part and _VERBISH.match(part):
                out.append(_Clause(subject, "user " + part if subject == "user" else part, companion))
            elif part:
                last = out[-1]
                out[-1] = _Clause(last.subject, f"{last.text}{sep}{part}", last.companion)
    return out


# -- values ------------------------------------------------------------------------------------------------------------

# Month names (and abbreviations) and weekday names (whole, and plural) are memstack.dates'; then times of day.
_DATE_WORDS = """morning mornings evening evenings afternoon afternoons night noon midnight week weekend weekends
    month year today tomorrow yesterday"""
_DATES = frozenset([*MONTHS, *WEEKDAY_NAMES, *(f"{name}s" for name in WEEKDAY_NAMES), *_DATE_WORDS.split()])
_NOISE_TEXT = """user user's now again anymore longer just also too really still currently finally recently only even
    already actually new basically officially sadly honestly nowadays days day time times lot bit much very
    well back last next this that these those ago since every each most some instead called named early late later
    soon quickly slowly together alone away off around there here someday sometime eventually"""
_NOISE_WORDS = _NOISE_TEXT.split()
_NOISE = frozenset(tokenize(" ".join(_NOISE_WORDS))) | frozenset(_NOISE_WORDS)
_DATE_STEMS = frozenset(tokenize(" ".join(_DATES)))
# Verbs and nouns that say little about which fact a sentence is about ("plays tennis": tennis is the key).
_GENERIC = frozenset(
    tokenize(
        """play plays playing do does doing go goes going have has having get gets getting got make makes making
        take takes taking took use uses using work works working eat eats eating drink drinks drinking watch read
        listen visit like likes love loves enjoy enjoys want wants need thing things stuff people way part kind lot
        start started stop stopped keep kept try tried give gave gone become became feel feels bought buy join
        joined"""
    )
)
_DATES_IN = (
    r"(?:(?:early|late|mid)[- ])?(?:\d|the (?:spring|summer|fall|autumn|winter)|"
    + sl.MONTH_NAMES
    + r"|spring|summer|fall|autumn|winter)"
)
_WHEN = (
    rf"in {_DATES_IN}|(?:last|this|next) (?:week|month|year|summer|winter|spring|fall|autumn|weekend|term)|"
    r"on the weekend"
)
# Where the filler of a slot ends: "berlin in october, still unpacking" → berlin; "a paramedic with the county" →
# a paramedic. An activity keeps its complements ("training for the boston marathon").
_VALUE_END = _rx(
    rf",|\s+(?:with|for|since|because|after|before|when|while|as|due to|which|who|where|that|so|but|until|{_WHEN})\b"
)
_ACTIVITY_END = _rx(rf",|\s+(?:since|because|after|before|when|while|due to|which|who|so|but|until|{_WHEN})\b")


def _content(text: str) -> frozenset[str]:
    """Content stems: no stop words, fillers, date words or numbers."""
    return _stems(text) if len(text) > MAX_CONTENT_CHARS else _cached_stems(text)


def _stems(text: str) -> frozenset[str]:
    return frozenset(
        s
        for w, s in zip(words(text), tokenize(text), strict=True)
        if w not in STOP_WORDS and w not in _NOISE and s not in _NOISE and s not in _DATE_STEMS and not w.isdigit()
    )


_cached_stems = lru_cache(maxsize=2048)(_stems)


def _value(text: str | None, *, head: bool = True) -> frozenset[str]:
    """Content stems of a filler, cut at the first clause boundary ("berlin in october, still …" → berlin)."""
    if not text:
        return frozenset()
    return _content((_VALUE_END if head else _ACTIVITY_END).split(text, maxsplit=1)[0])


def head_stems(text: str) -> frozenset[str]:
    """The content stems of a normalised phrase up to its first clause boundary ("a marathon next year" →
    {marathon}; "10 miles for the marathon" → {mile})."""
    return _value(text)


def content(frame: Frame) -> frozenset[str]:
    """Every content stem of the frame's clause (its value may be a cut of it: "sleeps badly because of insomnia")."""
    return _content(frame.clause)


def keys(value: frozenset[str]) -> frozenset[str]:
    """What identifies a value: its stems without generic verbs and nouns (all of them when nothing else is left)."""
    specific = value - _GENERIC
    return specific or value


def _date_value(text: str) -> frozenset[str]:
    """The date words and numbers of a text ("saturday, 19 june 2027" → {saturday, 19, june, 2027}), plurals folded."""
    out = set()
    for w in re.findall(r"[a-z]+|\d+", text):
        if w.isdigit() or w in _DATES:
            out.add(w[:-1] if w.endswith("s") and w[:-1] in _DATES else w)
    return frozenset(out)


_PERFECT = re.compile(
    rf"^(?:has|have|had) {sl.ADVERBS}(?=\w+ed\b|been\b|gone\b|got\b|gotten\b|begun\b|become\b|left\b|quit\b|"
    r"sold\b|given\b|taken\b|made\b|done\b|found\b|lost\b|split\b|broken\b|turned\b|grown\b|come\b)"
)


def _predicate(text: str) -> str:
    """A clause with its subject, leading adverbs and a perfect's auxiliary removed ("user has really gone off …"
    → "gone off …")."""
    body = text[5:] if text.startswith("user ") else text
    body = re.sub(rf"^{sl.ADVERBS}", "", body).strip()
    return _PERFECT.sub("", body).strip()


def _slot_frame(subject: str, pred: str, clause: str) -> Frame | None:
    """The slot pattern a predicate matches, if any."""
    if m := sl.COUNT.match(pred):
        return Frame(subject, f"count:{tokenize(m.group('k'))[0]}", Mode.STATE, frozenset({m.group("n")}), clause)
    for slot, mode, pattern in sl.PREDICATES:
        if m := pattern.match(pred):
            raw = m.groupdict().get("v")
            if slot == "partner" and (status := m.groupdict().get("s")):
                raw = f"{status} {raw or ''}"
            if slot in ("age", "salary") and raw:
                value = frozenset({re.sub(r"[$£€,]|\.\d*$", "", raw).replace("k", "000")})
            else:
                value = _value(raw, head=slot not in ("commute",))
            if slot == "diet" and raw:
                value = frozenset({re.sub(r"[- ]", "", raw)}) if mode is not Mode.END else value
            return Frame(subject, slot, mode, value, clause)
    if m := sl.EVENT_HAS.match(pred):
        dates = _date_value(m.group("d"))
        if dates:
            return Frame(subject, f"schedule:{_event_key(m.group('k'))}", Mode.STATE, dates, clause)
    if m := sl.EVENT_MOVED_BY.match(pred):
        dates = _date_value(m.group("d"))
        if dates:
            return Frame(subject, f"schedule:{_event_key(m.group('k'))}", Mode.START, dates, clause)
    return None


def _head_noun(text: str) -> str:
    """The last content stem of a noun phrase: "tv show" → show (a favourite show is a favourite TV show)."""
    stems = [s for w, s in zip(words(text), tokenize(text), strict=True) if w not in STOP_WORDS]
    return stems[-1] if stems else text


def _event_key(text: str) -> str:
    return " ".join(sorted(_value(text, head=False))) or text


def _possessive_frame(text: str) -> Frame | None:
    """Patterns on "user's …" clauses about the user's things: favourites, dated events, a pet or thing that is
    gone, the job."""
    if m := sl.FAVOURITE.match(text):
        key = _head_noun(m.group("k"))
        return Frame("user", f"favourite:{key}", Mode.STATE, _value(m.group("v")), text)
    if m := sl.EVENT_MOVED.match(text):
        return Frame("user", f"schedule:{_event_key(m.group('k'))}", Mode.START, _date_value(m.group("d")), text)
    if m := sl.EVENT_WHEN.match(text):
        return Frame("user", f"schedule:{_event_key(m.group('k'))}", Mode.STATE, _date_value(m.group("d")), text)
    if m := sl.EVENT_CANCELLED.match(text):
        return Frame("user", f"schedule:{_event_key(m.group('k'))}", Mode.END, frozenset(), text)
    if m := sl.GONE.match(text):
        return Frame("user", "activity", Mode.END, _value(m.group("v"), head=False), text)
    if m := sl.JOB_IS.match(text):
        return Frame("user", "job", Mode.STATE, _value(m.group("v")), text)
    if m := sl.ATTR_IS.match(text):
        return Frame("user", f"attr:{_head_noun(m.group('k'))}", Mode.STATE, _value(m.group("v")), text)
    return None


def _person_frame(subject: str, text: str) -> Frame | None:
    """A clause about someone in the user's life ("user's sister moved to …"): the user's partner named, or gone,
    else what the clause says about that person."""
    if subject in _PARTNERS:
        if sl.GONE.match(text):
            return Frame("user", "partner", Mode.END, frozenset(), text)
        if m := sl.PARTNER_IS.match(text):
            return Frame("user", "partner", Mode.STATE, _value(m.group("v")), text)
    person = subject.split(" ", 1)[1]
    if person in _CHILDREN and sl.BORN.search(text):  # "user's daughter was born": the user's pregnancy ended
        return Frame("user", "pregnancy", Mode.END, frozenset(), text)
    words_ = text.split(" ")
    at = next((i for i, w in enumerate(words_) if i and w.strip(",").removesuffix("'s") == person), len(words_))
    rest = " ".join(words_[at + 1 :])
    if words_[at : at + 1] and words_[at].endswith("'s"):  # "user's sister's wedding is on …": the sister's
        found = _possessive_frame("user's " + rest)
        return None if found is None else Frame(subject, found.slot, found.mode, found.value, text)
    return _predicate_frame(subject, _predicate(rest), text)


def _frame(clause: _Clause) -> Frame | None:
    text = clause.text.strip(" ,")
    additive = sl.ADDITIVE.search(text) is not None
    again = sl.AGAIN.search(text) is not None
    subject = clause.subject
    if m := sl.REALIZED.match(text):  # "user has realized video tutorials do not stick …": what was realized
        return _frame(_Clause(*_subject(text[m.end() :])))
    if m := sl.LAST_DAY.search(text):
        return Frame("user", "job", Mode.END, _value(m.group("v")), text)
    if m := sl.NEW_HOME.search(text):
        return Frame("user", "residence", Mode.START, _value(m.group("v")), text)
    if (m := sl.HEALED.search(text)) and not re.search(r"user's [\w-]+'s\b", text):  # "wrist is fully healed"
        return Frame("user", "activity", Mode.END, _value(m.group("v")), text)
    if m := sl.FAVOURITE_OBJ.match(_strip_lead(text)):  # "succession is user's favourite show now"
        return Frame("user", f"favourite:{_head_noun(m.group('k'))}", Mode.STATE, _value(m.group("v")), text, additive)
    if subject == "other":
        if m := sl.NAMED_GONE.match(_drop_leads(text)):  # "whiskers passed away": whoever the memories name
            return Frame("user", "activity", Mode.END, _value(m.group("v"), head=False), text)
        if m := sl.PROPOSED.match(_strip_lead(text)):
            return Frame("user", "partner", Mode.START, _value(f"engaged {m.group('v')}"), text)
        if (m := sl.AGENT_MOVED.match(text)) and not re.search(r"user's [\w-]+'s\b", text):  # not a person's
            return _slot_frame("user", text[m.end() :], text)
        if m := sl.THE_CANCELLED.match(text):  # "the coldplay concert got cancelled": the user's plans
            return Frame("user", "activity", Mode.END, _value(m.group("v"), head=False), text)
        if m := sl.OFF_TABLE.search(_drop_leads(text)):  # "…, so berlin is off the table this year"
            return Frame("user", "activity", Mode.END, _value(m.group("v"), head=False), text)
        if m := sl.NOT_FOR_USER.match(_drop_leads(text)):  # "textbooks do not do it for user anymore"
            return Frame("user", "likes", Mode.END, _value(m.group("v"), head=False), text)
        if (m := sl.TAKEN.match(text)) and not re.search(r"user's [\w-]+'s\b", text):  # "… stole user's bike"
            return Frame("user", "activity", Mode.END, _value(m.group("v"), head=False), text)
        if m := sl.PROMOTED.match(text):  # "they made user store manager"
            return Frame("user", "job", Mode.START, _value(m.group("v")), text)
        return None
    if text.startswith("user's "):
        found = _possessive_frame(text) if subject == "user" else _person_frame(subject, text)
        return _with(found, additive, again)
    return _with(_predicate_frame(subject, _predicate(text), text, clause.companion), additive, again)


def _with(frame: Frame | None, additive: bool, again: bool) -> Frame | None:
    if frame is None:
        return None
    return Frame(frame.subject, frame.slot, frame.mode, frame.value, frame.clause, additive, again, frame.origin)


def _predicate_frame(subject: str, pred: str, clause: str, companion: str = "") -> Frame | None:
    if not pred:
        return None
    if m := sl.ATTR_CHANGED.match(pred):
        key = _head_noun(m.group("k"))
        origin = _value(m.group("from")) if m.group("from") else frozenset()
        return Frame(subject, f"attr:{key}", Mode.START, _value(m.group("v")), clause, origin=origin)
    if m := sl.SWITCH_PLURAL.match(pred):
        return Frame(subject, "switch", Mode.START, _value(m.group("v")), clause)
    if m := sl.TEAM.match(pred):
        return Frame(subject, "team", Mode.STATE, _value(m.group("v") or m.group("w")), clause)
    if m := sl.PREFERS.match(pred):
        value, other = _value(m.group("v"), head=False), _value(m.group("o"), head=False)
        return Frame(subject, "likes", Mode.STATE, value, clause, origin=other)
    if m := sl.SWITCH.match(pred):
        inner = _slot_frame(subject, _predicate(m.group("v")), clause)
        origin = _value(m.group("from"), head=False) if m.group("from") else frozenset()
        if inner is not None and inner.slot != "activity":
            return Frame(subject, inner.slot, Mode.START, inner.value, clause, origin=origin)
        return Frame(subject, "switch", Mode.START, _value(m.group("v")), clause, origin=origin)
    if m := sl.GOODBYE.match(pred):
        return Frame(subject, "activity", Mode.END, _value(m.group("v")), clause)
    if m := sl.NOT_SINCE.match(pred):
        return Frame(subject, "activity", Mode.END, _value(m.group("v"), head=False), clause)
    if m := sl.INSTEAD_END.match(pred):
        return Frame(subject, "switch", Mode.START, _value(m.group("v")), clause)
    if m := sl.INSTEAD.match(pred):
        return Frame(subject, "switch", Mode.START, _value(m.group("v")), clause, origin=_value(m.group("from")))
    if m := sl.TRADE.match(pred):
        return Frame(subject, "switch", Mode.START, _value(m.group("v")), clause, origin=_value(m.group("from")))
    found = _slot_frame(subject, pred, clause)
    if found is not None:
        if found.slot == "partner" and companion and not found.value:
            return Frame(subject, found.slot, found.mode, _value(companion), clause)
        return found
    if m := sl.PREF_NEG.match(pred):
        return Frame(subject, "likes", Mode.END, _value(m.group("v"), head=False), clause)
    if m := sl.PREF_POS.match(pred):
        return Frame(subject, "likes", Mode.STATE, _value(m.group("v"), head=False), clause)
    if m := sl.GAVE.match(pred):
        return Frame(subject, "activity", Mode.END, _value(m.group("v"), head=False), clause)
    if m := sl.FINISHED.match(pred):
        return Frame(subject, "activity", Mode.END, _value(m.group("v"), head=False), clause)
    if (m := sl.END_WRAP.match(pred)) and not sl.NOT_ENDING.match(pred):
        rest = sl.ANYMORE.sub("", m.group("rest")).strip(" ,")
        inner = _slot_frame(subject, _predicate(rest), clause)
        if inner is None and (pos := sl.PREF_POS.match(rest)):
            inner = Frame(subject, "likes", Mode.STATE, _value(pos.group("v"), head=False), clause)
        if inner is not None:
            mode = Mode.START if inner.mode is Mode.END else Mode.END  # "is not single anymore"
            return Frame(subject, inner.slot, mode, inner.value, clause)
        return Frame(subject, "activity", Mode.END, _value(rest, head=False), clause)
    if subject != "user":
        return None
    if re.match(r"^(?:grew up|was born|visited|went|travell?ed|flew|was|had|met|saw)\b", pred):
        return None
    start = re.match(
        r"^(?:started|starts|began|begins|took up|picked up|got into|is back to|went back to)\s+(?P<v>.+)", pred
    )
    if start:
        return Frame(subject, "activity", Mode.START, _value(start.group("v"), head=False), clause)
    return Frame(subject, "activity", Mode.STATE, _value(pred, head=False), clause)


def frames(text: str) -> tuple[Frame, ...]:
    """The frames of a memory or candidate text (any wording: first person is rewritten about "User" first)."""
    return _frames(text) if len(text) > MAX_CONTENT_CHARS else _cached_frames(text)


def _frames(text: str) -> tuple[Frame, ...]:
    out = []
    for clause in clauses(normalise(text)):
        frame = _frame(clause)
        if frame is not None and (frame.value or frame.slot not in ("activity", "likes", "switch")):
            out.append(frame)
    return tuple(out)


_cached_frames = lru_cache(maxsize=2048)(_frames)
