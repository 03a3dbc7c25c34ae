"""One fact per memory: a statement split into clauses that each stand alone, with their subject.

"I'm Ivo and I'm a vegan" holds two facts; stored as one memory, forgetting one forgets both. :func:`clauses` cuts a
sentence where a conjunction or a comma ("and", "but", "so", "because", "though", ",", ";") is followed by a clause
with **its own subject**:

* the user ("I …", "we …"); someone of the user's ("my sister …", "our dog …", "the kids …") followed by a verb;
* "he", "she" or "they" when the clause before names whom it means ("my manager is called Priya and she's based in
  Singapore" → "my manager Priya is based in Singapore"); an object "her", "him" or "them" is resolved the same way
  ("My sister Gina lives in Rome and I visit her every August" → "I visit my sister Gina every August");
* a request to the assistant ("…, so please keep accessibility in mind", "…, can you help me prep?").

Where a cut would leave a clause that cannot stand alone, there is no cut: a pronoun with nothing to point to ("I
quit smoking and I'm trying to stay off it"), a shared subject ("my wife and I are vegetarian", "me and my flatmates
share a house"), a clause without a subject ("and still does the crossword"). A fact kept whole is still true; a
fact cut in two may not be.

:func:`restore_subject` gives back the "I" that chat leaves out ("Sold my car last year" → "I sold my car last year",
"Moving into the new flat on Tuesday" → "I'm moving …", "Got a job interview on the 14th" → "I've got …").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memstack.dates import MONTH_NAMES, WEEKDAY_NAMES
from memstack.text import RELATION_WORDS, STOP_WORDS

__all__ = [
    "MAX_SPLIT_CHARS",
    "clauses",
    "drops_subject",
    "head_reading",
    "names_someone",
    "resolve_pronoun",
    "restore_be",
    "restore_subject",
]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_BOUNDARY = _rx(
    r"\s*[,;]\s*(?:(?:and|but|so|because|cause|cos|though|although|whereas|plus)\s+)?|"
    r"\s+(?:and|but|so|because|cause|cos|though|although|whereas|plus)\s+"
)
_FIRST = _rx(r"(?:i|i'm|im|i've|ive|i'd|i'll|we|we're|we've|we'll|we'd|me and)\b")
_POSSESSIVE = _rx(r"(?:my|our)\s+")
_THE_PEOPLE = _rx(r"the\s+(?:kids|children|boys|girls|twins)\s+")
_NAMED = re.compile(r"(?P<name>[A-Z][a-z]+)\s+")  # "Leo is 7": someone the user names
_NOT_NAMES = STOP_WORDS | set(MONTH_NAMES) | set(WEEKDAY_NAMES)
# A question after the statement ("…, any last tips?", "…, what should I bring?"): a clause of its own.
_TAIL_QUESTION = _rx(r"(?:any|what|how|why|where|which|who|when|should|can|could|would|do|does|is|are)\b.*\?$")
# A short question without a verb of its own at the end of a sentence ("…, fastest way to learn dbt?", "… — easy
# first songs?"): what the user asks, cut from what they said before it.
_ASKED = _rx(
    r"^(?:what|why|how|who|which|whose|when|where|is|are|was|were|do|does|did|can|could|would|will|should|shall|"
    r"have|has|am)\b"
)
_BARE_QUESTION = re.compile(r"^(?![^?]*\b(?:i|i'm|im|i've|my|me|we|our|us)\b)(?:\S+\s+){0,7}\S+\?$", re.IGNORECASE)
# A clause that leans on the one after it ("when you draft emails for me, sign off …") is not cut from it.
_SUBORDINATE = _rx(
    r"^(?:when|whenever|if|because|since|although|though|even though|while|as|as soon as|once|until|before|after|"
    r"unless|now that|so that|given that|in case)\b"
)
_NOT_VERBS_AFTER_PLURAL = frozenset(
    """of and or with in at to from the a an by for on as like than that who which so very really too more most all
    both also just only still always never here there now""".split()  # noqa: SIM905
)
_PRONOUN = _rx(r"(?P<p>he|she|they)(?:'(?P<c>s|re|ve|ll|d))?\b")
_REQUEST = _rx(r"(?:so\s+)?(?:please|pls|plz|kindly)\b|(?:can|could|would|will)\s+(?:you|u)\b")
# A shared subject is one subject: "my wife and I", "Sam and I", "me and my flatmates".
_SHARED_LEFT = _rx(r"^(?:(?:my|our)\s+\S+(?:\s+\S+){0,2}|[A-Z][a-z]+)$")
_AUXILIARIES = frozenset(
    """am is are was were be been 's 're 'm 've 'd 'll has have had do does did can could will would shall should may
    might must isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't can't cannot couldn't won't
    wouldn't shouldn't""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[\w'-]+")
_ADJECTIVES = frozenset("best older younger little big eldest oldest youngest late new old dear".split())  # noqa: SIM905
_PLURAL_PEOPLE = frozenset(w for w in RELATION_WORDS if w.endswith("s") and w[:-1] in RELATION_WORDS) | {
    "children",
    "parents",
    "grandparents",
    "family",
}
_OBJECT = _rx(r"\b(?P<p>him|her|them)\b(?P<after>\s+\w+)?")
# After an object pronoun: where a clause goes on ("I visit her every August"), not a noun it owns ("her cooking").
_AFTER_OBJECT = frozenset(
    """every each on at in to with for from about again often sometimes tomorrow today yesterday last next this
    twice once a an the and but so because when if more less lots too as""".split()  # noqa: SIM905
)
# A reference to something the clause before names: a cut would lose what it means.
_IT = _rx(r"\b(?:it|them|this|that|those|these|there|mine|yours|ours|theirs|one|ones|instead|either)\b")


def _has_verb(words: list[str]) -> bool:
    """A verb among the first words after a subject noun: an auxiliary, a past tense, a third-person "-s"."""
    for i, word in enumerate(words[:6]):
        low = word.lower().replace("’", "'")
        if low in _AUXILIARIES or (low.endswith("'s") and i > 0) or low.endswith(("n't", "ed")):
            return True
        if i > 0 and low.endswith("s") and not low.endswith("ss") and low not in RELATION_WORDS:
            return True
    return False


def _referent(left: str, plural: bool | None) -> str | None:
    """The person the clause ``left`` names ("my sister Gina", "my manager Priya", "our dog Pepper"), or ``None``."""
    words = _WORD.findall(left)
    for i, word in enumerate(words):
        if word.lower() not in ("my", "our"):
            continue
        j = i + 1
        while j < len(words) and words[j].lower() in _ADJECTIVES:
            j += 1
        if j >= len(words):
            return None
        head = words[j].lower().removesuffix("'s").removesuffix("’s")
        if head not in RELATION_WORDS:
            continue
        if plural is not None and (head in _PLURAL_PEOPLE) != plural:
            return None
        phrase = [word.lower(), *words[i + 1 : j + 1]]
        phrase[-1] = phrase[-1].removesuffix("'s").removesuffix("’s")
        name = words[j + 1] if j + 1 < len(words) and words[j + 1][:1].isupper() else None
        if name is None and (m := re.search(r"\b(?:is|'s) (?:called|named) ([A-Z][\w-]+)", left)):
            name = m.group(1)
        if name is not None:
            phrase.append(name.removesuffix("'s").removesuffix("’s"))
        return " ".join(phrase)
    return None


def _resolve_subject(left: str, right: str) -> str | None:
    """``right`` with its leading he/she/they replaced by whom ``left`` names; ``None`` when it names no one."""
    m = _PRONOUN.match(right)
    if m is None:
        return right
    pronoun = m.group("p").lower()
    who = _referent(left, None if pronoun == "they" else False)
    if who is None:
        return None
    rest = right[m.end() :]
    contraction = (m.group("c") or "").lower()
    if contraction == "s":
        verb = " has" if re.match(r"\s+(?:been|got|gotten|had)\b", rest) else " is"
    else:
        verb = {"re": " are", "ve": " have", "ll": " will", "d": " would"}.get(contraction, "")
    return f"{who}{verb}{rest}"


def _resolve_objects(left: str, right: str) -> str | None:
    """``right`` with an object "her", "him" or "them" replaced by whom ``left`` names; ``None`` when it cannot be.
    "his" is replaced too where ``left`` names a man or boy of the user's ("my dad was just diagnosed … and I'm his
    main carer" → "I'm my dad's main carer"): cut from its sentence, "User is his main carer" says whose carer to no
    one. Where ``left`` names no one "his" could mean, the clause stays as the user wrote it."""
    right = _resolve_his(left, right)
    found = _OBJECT.search(right)
    if found is None:
        return None if _IT.search(right) else right
    who = _referent(left, found.group("p").lower() == "them")
    if who is None:
        return None
    after = (found.group("after") or "").strip().lower()
    possessive = found.group("p").lower() == "her" and after and after not in _AFTER_OBJECT  # "her cooking"
    replacement = f"{who}'s" if possessive else who
    return right[: found.start("p")] + replacement + right[found.end("p") :]


_HIS = _rx(r"\bhis\b")
#: Whom "his" may mean: a man or boy (the rest of the relation words say nothing of it, "my partner", "my boss").
_MEN = frozenset(
    """dad father papa pops stepdad stepfather grandpa grandfather granddad grandad brother stepbrother
    half-brother son stepson grandson husband boyfriend fiance uncle nephew""".split()  # noqa: SIM905
)


def _resolve_his(left: str, right: str) -> str:
    found = _HIS.search(right)
    if found is None or len(_HIS.findall(right)) > 1:
        return right
    who = _referent(left, False)
    if who is None or not any(word.lower() in _MEN for word in _WORD.findall(who)):
        return right
    return f"{right[: found.start()]}{who}'s{right[found.end() :]}"


def _about_user(clause: str) -> bool:
    """Whether ``clause`` has the user as its subject, said ("I …", "we …") or left out ("Renting a flat …")."""
    return _FIRST.match(clause) is not None or restore_subject(clause) != clause


def _standalone(left: str, right: str, is_request: Callable[[str], bool], *, we: bool = False) -> str | None:
    """``right`` as a clause of its own (pronouns resolved against ``left``), or ``None`` when it is not one. ``we``:
    the clause before is about "we" (a subject left out is "we" too)."""
    if _REQUEST.match(right) or _TAIL_QUESTION.match(right) or is_request(right):
        return right
    if _BARE_QUESTION.match(right) and not _ASKED.match(left):
        return right  # not the second half of a question ("is my plan any good, or too ambitious?")
    if _FIRST.match(right):
        return _resolve_objects(left, right)
    if (restored := restore_subject(right, we=we)) != right and _about_user(left):
        return _resolve_objects(left, restored)  # "Renting a flat, saving up for a deposit": the same subject again
    if _NAMED.match(right) or _POSSESSIVE.match(right) or _THE_PEOPLE.match(right):
        return _resolve_objects(left, right) if _someone_acts(right) else None
    if _PRONOUN.match(right):
        resolved = _resolve_subject(left, right)
        return None if resolved is None else _resolve_objects(left, resolved)
    return None


#: A longer sentence is kept whole: cutting reads its clauses again after each cut (quadratic), and a sentence that
#: long is a paste or a story, not a compound fact.
MAX_SPLIT_CHARS = 400


def clauses(sentence: str, is_request: Callable[[str], bool] = lambda _: False) -> list[str]:
    """The clauses of ``sentence`` that stand alone, in order (``[sentence]`` when it has one or is longer than
    :data:`MAX_SPLIT_CHARS`). ``is_request`` says whether a text is a request to the assistant (a clause of its own
    without a subject)."""
    if len(sentence) > MAX_SPLIT_CHARS:
        return [sentence]
    out: list[str] = []
    rest = sentence.strip()
    while cut := _first_cut(rest, out[-1] if out else "", is_request):
        out.append(cut[0])
        rest = cut[1]  # later cuts read the clause as resolved
    out.append(rest)
    return [c for c in out if c]


def resolve_pronoun(before: str, sentence: str) -> str:
    """``sentence`` with a leading "he", "she" or "they" replaced by whom the sentence ``before`` it names ("my niece
    Hana got into art college!" then "she starts in October" → "my niece Hana starts in October"), as a clause
    cut from one sentence is; unchanged when it starts otherwise or ``before`` names no one."""
    if _PRONOUN.match(sentence) is None or not before:
        return sentence
    resolved = _resolve_subject(before, sentence)
    # as for a cut clause: one that points at something said before ("she said it was tough") is left as said
    return (resolved and _resolve_objects(before, resolved)) or sentence


def names_someone(clause: str) -> bool:
    """Whether ``clause`` starts with someone of the user's doing something ("my cousin works …", "the kids eat …",
    "Leo is 7")."""
    return _someone_acts(clause) or re.match(r"(?:user's|their)\s", clause, re.IGNORECASE) is not None


def _someone_acts(right: str) -> bool:
    if (named := _NAMED.match(right)) and named.group("name").lower() not in _NOT_NAMES:
        after = _WORD.findall(right[named.end() :])  # a name's verb comes right after it
        return bool(after) and _has_verb(after[:1])
    if m := _POSSESSIVE.match(right) or _THE_PEOPLE.match(right):
        after = _WORD.findall(right[m.end() :])
        plural = bool(after) and after[0].lower() in _PLURAL_PEOPLE
        if plural and len(after) > 1 and after[1].lower() not in _NOT_VERBS_AFTER_PLURAL:
            return True  # "our kids go …", "the kids eat meat": a plural subject's verb has no -s
        if _THE_PEOPLE.match(right) and after and after[0].lower() not in _NOT_VERBS_AFTER_PLURAL:
            return True
        return _has_verb(after)
    return False


# What follows "so" as a remark on the statement before it ("so it's slow going", "so tax stuff is a nightmare"):
# a thing said of the situation, not of the user.
_REMARK = _rx(
    r"^(?:it|that|this|everything|things|life|(?:[\w-]+\s+)?stuff)(?:'s|’s|\s+(?:is|was|gets|got|has|feels|makes|"
    r"can be|will be))\b"
)


_ABOUT_SELF = _rx(r"\b(?:i|i'm|i've|i'd|me|my|mine|we|us|our)\b")


def _first_cut(text: str, before: str, is_request: Callable[[str], bool]) -> tuple[str, str] | None:
    for boundary in _BOUNDARY.finditer(text):
        left = text[: boundary.start()].strip()
        right = text[boundary.end() :].strip()
        if len(left.split()) < 2 or len(right.split()) < 2 or _SUBORDINATE.match(left):
            continue
        if boundary.group(0).strip().lower() == "and" and (
            (_SHARED_LEFT.match(left) and re.match(r"(?:i|me)\b", right, re.IGNORECASE))
            or (left.lower() in ("me", "i") and _POSSESSIVE.match(right))
        ):
            continue
        if boundary.group(0).strip(" ,;").lower() == "so" and _REMARK.match(right) and not _ABOUT_SELF.search(right):
            return left, ""  # "I'm a teacher so it's slow going": the fact, and a remark on it that is no fact
        we = re.match(r"(?:we|we're|we've|we'll|we'd)\b", left, re.IGNORECASE) is not None
        standalone = _standalone(f"{before} {left}".strip(), right, is_request, we=we)  # named a clause earlier?
        if standalone is not None:
            return left, standalone
    return None


# -- the subject chat leaves out -------------------------------------------------------------------------------------

_DROPPED_PAST = _rx(
    r"^(?:(?:just|finally|recently|also|already|actually)\s+)?(?:went|got|had|made|took|saw|met|came|bought|ran|won|"
    r"lost|left|sold|quit|started|finished|moved|adopted|joined|visited|tried|learned|learnt|graduated|broke|booked|"
    r"signed|switched|found|built|wrote|spent|paid|passed|failed|applied|accepted|decided|picked|began|became|grew|"
    r"flew|drove|turned|retired|dropped|gave|used to|tore|hurt|sprained|injured|fractured|twisted|lived|worked|"
    r"studied)\b(?!-)"  # "left-handed", "grown-up": a compound, not a verb
)
# "wanna branch out into crochet", "trying to get to B2": a wish or plan of the user's, its "I" left out ("gonna be
# great" is the situation's: "it's"); "been knitting for ten years": "I've" left out.
_DROPPED_WISH = _rx(
    r"^(?:(?:really|still|also|kinda)\s+)?(?:(?P<am>gonna|hoping to|planning to|trying to)|wanna)\s+(?!be\b)\w"
)
_DROPPED_BEEN = _rx(r"^(?:(?:also|just|still)\s+)?been\s+[a-z]{3,}ing\b")
# "never been to Japan", "always loved cooking", "never tried sushi": a perfect whose "I've" chat left out.
_DROPPED_PERFECT = _rx(
    r"^(?:always|never)\s+(?:[a-z]+(?<!e)ed|been|had|seen|done|met|eaten|heard|known|gone|drunk|driven|ridden|swum|"
    r"read|won|lost|felt|thought|found|made|kept|grown)\b(?!-)"
)
_DROPPED_GOT = _rx(r"^got\s+(?:a|an|my|the|some|two|three|\d+)\b")  # "Got a job interview …": "I've got"
# "Don't have kids either": the user's; "don't worry", "don't mind me": said to the other side.
_DROPPED_NEGATION = _rx(
    r"^(?:can't|cannot|can not|didn't|haven't|never|won't|am not)\s+(?!worry|mind|panic|stress|bother|judge|forget)|"
    r"^(?:don't|do not)\s+(?:have|eat|drink|like|own|smoke|drive|use|watch|celebrate|do|work|live|speak|play|need|"
    r"want|drink|cook|read|get|go)\b"
)
_DROPPED_ING = _rx(r"^(?:(?:currently|still|also|just|now)\s+)?(?P<verb>[a-z]{3,}ing)\b(?P<next>\s+\w+)?")
_NOT_VERBS = frozenset(
    """nothing something anything everything morning evening thing things spring string during ceiling wedding
    building clothing pudding king ring wing sibling darling awning bring sing swing sting exciting amazing
    interesting inspiring boring annoying relaxing rewarding fulfilling challenging surprising refreshing calming
    soothing heartwarming uplifting touching stunning charming frustrating exhausting""".split()  # noqa: SIM905
)
_GERUND_SUBJECT = frozenset("is was are were has makes helps keeps gets seems feels".split())  # noqa: SIM905
_PAST_AFTER = re.compile(r"\w+ed$")  # "meeting moved to 3": a noun and its verb
# A verb later in the clause makes the "-ing" word its subject: "Creating a space for customers is the key",
# "Parenting can be tough", "Supporting each other - that's so inspiring".
_MAIN_VERB_LATER = _rx(
    r"\b(?:is|are|was|were|can|could|will|would|must|should|may|might|makes|made|helps|pays|brings|means|seems|"
    r"feels|keeps|gives|takes|fills|sounds|looks|puts|sends|drives|bores|gets|stresses|relaxes|calms|costs|ruins|"
    r"kills|wakes|leaves|lets|that's|it's|this is|that is)\b"
)
# Feelings and reactions said with "-ing" ("Loving the support!", "Missing that", "Looking forward to it"): the
# moment's, not a fact; and a clause that points at something said before ("it", "that") is the moment's too.
_REACTING = _rx(
    r"^(?:(?:currently|still|also|just|now)\s+)?(?:loving|missing|hoping|wishing|thinking|wondering|guessing|looking|"
    r"feeling|enjoying|appreciating|trying|getting)\b|\b(?:it|them)\b|\b(?:that|this)\s*(?:$|[.!?,;])"
)
_GOT_IT = _rx(r"^got\s+(?:it|you|that|this|ya)\b")
# What ties an "-ing" clause to the user's life: their own things, a place, a time ("Renting a flat in Leeds",
# "Flying to Nairobi in three days"); without it, "Supporting each other", "Making videos" are remarks.
_ANCHORED = re.compile(r"(?i:\b(?:my|our|to|in|at|on|for|into|from|next|this|tomorrow|tonight|today)\b)|\s[A-Z]|\d")


_STARTS = r"(?:^|(?<=[.!?;,\n])\s*)"
_MAY_DROP = re.compile(
    "|".join(
        _STARTS + p.pattern.removeprefix("^")
        for p in (
            _DROPPED_GOT,
            _DROPPED_PERFECT,
            _DROPPED_PAST,
            _DROPPED_NEGATION,
            _DROPPED_WISH,
            _DROPPED_BEEN,
            _rx(r"^[a-z]{3,}ing\b"),
        )
    ),
    re.IGNORECASE | re.MULTILINE,
)


def drops_subject(message: str) -> bool:
    """Whether a sentence of ``message`` may start with a verb, its "I" left out (the no-save fast path asks; one
    search, a little looser than :func:`restore_subject`)."""
    return _MAY_DROP.search(message) is not None


def restore_subject(clause: str, *, we: bool = False) -> str:
    """``clause`` with the "I" it leaves out put back, when it starts with a verb (see the module docstring); "we"
    when ``we`` (the clause before spoke of "we": "We moved to Lisbon, still unpacking" → "we're still …")."""
    subject, be, have = ("We", "We're", "We've") if we else ("I", "I'm", "I've")
    if re.match(r"[A-Z]{2,}\b", clause) and not re.search(r"[a-z]", clause):
        clause = clause.lower()  # shouted ("SIGNED UP FOR THE MARATHON!!!"): its words, not "I sIGNED UP …"
    if _DROPPED_GOT.match(clause):
        return f"{have} {clause[:1].lower()}{clause[1:]}"
    if _GOT_IT.match(clause):
        return clause  # "Got it": understood
    if _DROPPED_BEEN.match(clause):
        return f"{have} {clause[:1].lower()}{clause[1:]}"
    if (wish := _DROPPED_WISH.match(clause)) is not None:
        return f"{be if wish.group('am') else subject} {clause[:1].lower()}{clause[1:]}"
    if _DROPPED_PERFECT.match(clause):
        return f"{have} {clause[:1].lower()}{clause[1:]}"  # "never been to Japan", "always loved cooking": "I've …"
    if _DROPPED_PAST.match(clause) or _DROPPED_NEGATION.match(clause):
        return f"{subject} {clause[:1].lower()}{clause[1:]}"
    if m := _DROPPED_ING.match(clause):
        following = (m.group("next") or "").strip().lower()
        gerund = following in _GERUND_SUBJECT or _PAST_AFTER.match(following) is not None
        gerund = gerund or _MAIN_VERB_LATER.search(clause, m.end("verb")) is not None
        anchored = _ANCHORED.search(clause, m.end("verb")) is not None
        if m.group("verb").lower() not in _NOT_VERBS and anchored and not gerund and not _REACTING.search(clause):
            return f"{be} {clause[:1].lower()}{clause[1:]}"
    return clause


# A bare predicate: an adjective by its form ("allergic", "intolerant", "vegetarian", "left-handed"), in the first
# two words after a degree word, or "a"/"an" and a noun ("a nurse"). Nothing else is given a verb: "Tea > coffee",
# "Two dogs, one cat" have none that can be put back faithfully. The word before the adjective has no apostrophe:
# "she's allergic to cats" is a subject and its verb, not a qualifier ("lactose intolerant").
_PREDICATE = _rx(
    r"^(?:(?:very|really|super|severely|mildly|slightly|mostly|pretty|quite|totally|fully|highly|extremely|also|"
    r"still|now|so|kinda|kind of)\s+)*(?:(?:a|an)\s+[\w'-]+|(?:[\w-]+\s+)?(?:\d+\s+)?[a-z]+(?:ic|ous|ive|ible|able|"
    r"ful|less|ish|ese|ian|ant|(?<!m)ent)|[a-z]+-[a-z]+ed)\b"
)
_ANY_VERB = _rx(r"\b(?:am|is|are|was|were|be|been|have|has|had|do|does|did|can|will|would|should)\b")
_ARTICLE = _rx(r"^(?:[a-z]+\s+)*?(?:a|an)\s")
# What may follow an adjective that is the predicate: nothing, punctuation, or a function word ("allergic to cats",
# "vegetarian since 2019", "pregnant with twins", "left-handed btw"). A content word after it means the adjective
# qualifies a noun ("shellfish allergy", "italian food"): a noun phrase, which "I'm" would turn into nonsense.
_AFTER_PREDICATE = _rx(
    r"^(?:\s*$|\s*[^\w\s]|\s+(?:to|of|since|for|with|about|from|in|on|at|by|as|than|and|but|or|so|because|though|"
    r"now|too|again|also|still|anyway|lol|haha|fyi|btw|tbh|af|these|this|all|most|like)\b)"
)


# A self-description in chat's shorthand: a noun phrase and "here" or "all the way" ("sesame allergy here", "mom of 3
# here", "tea person all the way", "night owl here"), what is left after it in brackets or after a comma.
_TAGGED = _rx(
    r"^(?P<np>(?!(?:it|this|that|there|nothing|same|me|who|what|everyone|anyone|someone|one|the|your|my)\b)"
    r"[\w'-]+(?:\s+(?!here\b)[\w'-]+){0,3}?)\s+(?:here|all the way|through and through)\b(?P<rest>\s*(?:[(,;:!.].*)?)$"
)
# Nouns of a condition one has, not is: "sesame allergy here" → "I have a sesame allergy"; the first ones take "a".
_COUNTABLE = _rx(r"\b(?:allergy|intolerance|disease|disorder|syndrome|condition)$")
_HAD = _rx(
    r"\b(?:allerg(?:y|ies)|intolerances?|diseases?|disorders?|syndrome|condition|diabetes|asthma|adhd|autism|"
    r"anxiety|depression|insomnia|migraines|arthritis|epilepsy|dyslexia|tinnitus|eczema)$"
)


_NOT_TAGS = frozenset("new back stuck lost done fine good ok okay right out over just also still hi hello".split())  # noqa: SIM905


def _tagged(clause: str) -> str | None:
    """A self-description in shorthand (see :data:`_TAGGED`) with its verb put back, or ``None``."""
    m = _TAGGED.match(clause)
    if m is None or _ANY_VERB.search(m.group("np")) or _FIRST.match(clause) or m.group("np").lower() in _NOT_TAGS:
        return None
    np, rest = m.group("np"), m.group("rest").rstrip()
    low = np.lower()
    if _HAD.search(low):
        countable = _COUNTABLE.search(low) is not None  # "a sesame allergy", but "asthma", "allergies"
        article = ("an " if low[0] in "aeiou" else "a ") if countable else ""
        return f"I have {article}{np}{rest}"
    if len(np.split()) == 1 and _PREDICATE.fullmatch(np):
        return f"I'm {np}{rest}"  # an adjective ("vegan here", "diabetic here")
    article = "" if low.startswith(("a ", "an ")) else "an " if low[0] in "aeiou" else "a "
    return f"I'm {article}{np}{rest}"


# A time clause after a predicate ("diabetic since I was 30", "vegetarian since we moved"): its verb is its own, not
# the predicate's.
_TRAILING_WHEN = _rx(r"\s+(?:ever\s+)?(?:since|when)\s+(?:i|we)\b.*$")


def restore_be(clause: str) -> str | None:
    """``clause`` with "I'm" put before a bare predicate ("lactose intolerant" → "I'm lactose intolerant", "allergic
    to cats", "a nurse"), or ``None`` when it does not start with one, or has a verb of its own. A self-description
    in shorthand ("sesame allergy here", "mom of 3 here") is given its verb ("I have a sesame allergy", "I'm a mom of
    3")."""
    if (tagged := _tagged(clause)) is not None:
        return tagged
    m = _PREDICATE.match(clause)
    if m is None or _ANY_VERB.search(_TRAILING_WHEN.sub("", clause)) or _FIRST.match(clause):
        return None
    if not _ARTICLE.match(m.group(0)) and not _AFTER_PREDICATE.match(clause[m.end() :]):
        return None  # an adjective before a noun ("shellfish allergy"): no predicate
    return f"I'm {clause[:1].lower()}{clause[1:]}"


def head_reading(clause: str) -> str:
    """What the capture head reads of a clause the rules refused: a bare predicate with the "I'm" chat left out put
    back ("allergic to shellfish" → "I'm allergic to shellfish"), so that whose it is is in the words the head reads
    (its embedding otherwise sits among "she's allergic to cats" and the like); any other clause as it is. The
    head is fitted on the same readings (``tests/capture/train_capture.py``)."""
    return restore_be(clause) or clause
