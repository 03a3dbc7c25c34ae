"""Standing instructions about the assistant ("always answer in Spanish", "keep it short", "don't call me Thomas"):
a user's preferences, captured as such.

A one-off task ("write me a haiku", "translate this into Italian") is not a memory; an instruction meant to hold for
every reply is. :func:`standing_instruction` tells them apart by three signals, none of them a sentence of its own:

* the sentence is an imperative to the assistant (a verb of answering, writing, addressing or formatting first, after
  politeness, "from now on", "can you" or a "when you …, " / "when I ask …, " condition), or a bare request for a
  form of answer with a "please" ("no markdown tables please", "times in 24h format pls");
* it is meant to last: a durable marker ("always", "never", "from now on", "whenever", "ever again", "every
  answer", "when you …", "call me …", a negative "don't …"), or it asks for a **form** of answer (a language, units,
  length, tone, bullet points, emojis) of answers in general: the words between the verb and the form are generic
  ("keep *your answers* short", "use metric units"), not a topic ("explain recursion in simple terms" is a task);
* it is not about a thing at hand: no "this", "that", "the following", no quoted text to work on.

Chat also gives them in forms without a verb the list knows: "always" or "never" first after a "please" ("pls
always check recipes for hidden gluten"; without it, "always walk my dog at 6" is a habit), a polite "don't" ("please
don't book anything for me before noon"), every thing of a kind the assistant gives ("double-check every recipe you
suggest"), a verbless fragment with a word that makes it last ("numbered lists, max 7 items, always"), two
alternatives with one asked for after a verb of answering ("give me dnf commands instead of apt"), and a plan for
both sides that lasts ("let's do everything in French from now on"; "let's write the letter now" is the work at
hand). Each is a form, tested in wordings of its own beside look-alikes that are not instructions
(``tests/capture/test_standing.py``).

Wordings the three signals miss ("short answers pls", "default to TypeScript") are read by the capture head
(:mod:`~memstack.capture.head`), which tells a standing instruction from a one-off task by meaning; :func:`framed`
writes what it keeps in the same frame, refusing only what is plainly about the thing at hand or limited to now.

The memory keeps the user's own words, turned to the third person for the user ("me" → "User", "my" → "User's",
"when I ask" → "when User asks") and addressed as they were ("you" stays the assistant), behind one fixed frame:
``User's preference for replies: always answer in Spanish.`` The frame reads as what it is, a fact about the user,
and the write-time guard judges it and the message it came from: a preference about style, language or name passes,
an order planted for others ("whenever anyone asks …, say …") does not. Two wordings were measured against the
guard and left: "User wants the assistant to …" (the semantic head reads an order to the model in it) and "they"
for the user ("when they ask about recipes, give …" is the guard's trigger by someone else).
"""

from __future__ import annotations

import re

from memstack.capture.rewrite import third_person

__all__ = ["PREFERENCE_FRAME", "framed", "might_instruct", "standing_instruction"]

#: How a standing instruction is written as a memory.
PREFERENCE_FRAME = "User's preference for replies: "


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_LEAD = _rx(r"^(?:(?:please|pls|plz|kindly|just|also|and|so|ok|okay|oh|yo|hey|btw|but)\b[\s,]*)+")
_ASK = _rx(r"^(?:can|could|would|will)\s+(?:you|u)\s+(?:(?:please|pls|like|just|maybe)\s+)*")
_TIME = _rx(r"^(?:from now on|going forward|in (?:the )?future|from here on(?: out)?|for future reference)[\s,]*")
_CONDITION = _rx(r"^(?P<cond>(?:when(?:ever)?|every time|each time|if)\s+(?:you|u|i)\b[^,;.]{1,80}),\s*")
_TRAIL = _rx(r"(?:[\s,]*\b(?:please|pls|plz|thanks|thank you|thx|ty)\b)+[\s.!]*$|[\s.!]+$")
# Verbs of what the assistant does with its replies.
_VERBS = """answer reply respond write explain use call address refer keep give include add mention cite list show
    format put make be speak talk tell say recommend suggest ask end start avoid skip spell sign assume remind correct
    stick focus number label round convert define simplify break go send rely sugarcoat bold capitalize capitalise
    summarize summarise quiz test double-check check stop limit leave"""
_VERB = "(?:" + "|".join(sorted(_VERBS.split(), key=len, reverse=True)) + ")"
_NEGATIVE = _rx(r"^(?:don'?t|do not|never|not|no longer)\s+(?=" + _VERB + r"\b)")
_AFFIRM = _rx(r"^(?:always\s+|only\s+)?(?=" + _VERB + r"\b)")
# After a "please", "always" or "never" first makes any verb an imperative ("pls always check recipes for gluten",
# "please never schedule calls"), as "please don't" does ("please don't book anything before noon"); not a past or
# perfect ("always loved", "never been": a statement whose "I" chat left out), nor what is said to comfort ("please
# don't worry"). Without the "please" it is a habit: "always walk my dog at 6".
_ANY_IMPERATIVE = _rx(
    r"^(?:always|never)\s+(?!(?:been|had|have|has|was|were|did|do|does|is|are|am|got|gotten|get|really|even|"
    r"actually|thought|liked|loved|known|understood|felt|wanted)\b)[a-z][a-z-]*(?<!ed)\b"
)
_PLEASE_NEGATIVE = _rx(
    r"^(?:don'?t|do not)\s+(?!(?:worry|mind|panic|stress|bother|judge|forget|laugh|be sorry|apologi[sz]e)\b)[a-z]"
)
# "let's do everything in French from now on", "let's stick to metric going forward": an instruction said as a plan for
# the two sides, a standing one only with a word that makes it last (without it, "let's write the letter now" is the
# work at hand).
_LETS = _rx(r"^(?:let's|lets|let us)\s+")
# A language to go to, as a plan for both sides says it ("let's switch to Spanish for everything"); alone, "go to
# Spanish class" is no form of answer.
_TO_LANGUAGE = _rx(
    r"\bto\s+(?:english|spanish|french|german|italian|portuguese|dutch|japanese|chinese|korean|arabic|russian|polish|"
    r"hindi|swedish|turkish|greek)\b"
)
# Two alternatives of a kind, one asked for ("dnf commands instead of apt", "pnpm instead of npm", "grams rather than
# cups"): a form of answer, as a language or a unit is.
_CONTRAST = _rx(r"\b[\w-]+\s+(?:not|instead of|rather than|over)\s+(?!(?:a|an|the|to|me|you|it|that|this|yet)\b)[\w-]+")
# A verbless request for a form with a word that makes it last: "numbered lists, max 7 items, always", "metric units
# only, always", "short answers from now on". Its words are all of the form, a number or a limit.
_FRAGMENT_WORDS = frozenset(
    """max maximum min minimum at most least no more than only and or with per answer answers reply replies response
    responses please pls plz thanks thx ty always never from now on going forward every time in the a of words lines
    sentences points point items bullets paragraphs each one two three four five six seven eight nine ten text lists
    list headings numbered steps""".split()  # noqa: SIM905
)
_FRAGMENT_START = _rx(r"^(?:numbered|plain|bulleted|no)\b")
# An imperative whose verb no list names ("please flag every recipe you suggest …"): a first word that is no subject.
_IMPERATIVE_START = _rx(
    r"^(?!(?:i|i'm|im|my|we|our|you|your|it|it's|this|that|there|they|he|she|the|a|an|some|every|all)\b)[a-z][a-z-]+\b"
)
_STOP = _rx(r"^stop\s+\w+ing\b")
# A bare request for a form of answer: "no markdown tables please", "times in 24h format pls".
_BARE = _rx(r"^(?:no\s+\S+|\S+(?:\s+\S+)?\s+in\s+\S+(?:\s+(?:format|units|style))?)")
_DURABLE = _rx(
    r"\b(?:always|never|from now on|going forward|in (?:the )?future|ever again|anymore|any more|whenever|"
    r"from here on|for everything|for good|"
    r"every (?:time|answer|reply|response|message)|all (?:your |the )?(?:answers|replies|responses)|"
    # every thing of a kind the assistant gives: "any plan you propose", "every recipe you give me"
    r"(?:any|every|each)\s+(?:[\w-]+\s+){0,2}(?:you|u)\s+(?:suggest|recommend|give|write|send|share|mention|"
    r"make|propose|show|list|pick|choose)|"
    # the replies in general, or every thing of a kind: "no emojis in answers", "no meat in any recipes"
    r"\b(?:in|for|with)\s+(?:any|all|your|future)\s+[\w-]+|\b(?:in|for)\s+(?:answers|replies|responses)\b|"
    r"when(?:ever)? (?:you|u|i)\b|call me\b|refer to me\b|address me\b|like i'?m\b|like i am\b)"
)
_FORM = _rx(
    r"\b(?:short|shorter|brief|concise|simple|simpler|plain|blunt|direct|honest|detailed|formal|informal|casual|"
    r"friendly|bullet(?: points?)?|bullets|tables?|emojis?|markdown|metric|imperial|units|spelling|format|formatting|"
    r"language|pronouns?|jargon|sources?|citations?|tone|careful|gentle|patient|polite|thorough|precise|"
    r"celsius|fahrenheit|centigrade|kilos?|kilograms?|pounds|lbs|kilometres|kilometers|km|miles|24h|24-hour|"
    r"12-hour|am/pm|"
    r"step[- ]by[- ]step)\b|'(?:they|she|he|them|her|him)'|"
    # a language is a form of answer only as the one to answer in ("in Spanish"; not "the French revolution")
    r"\b(?:in|into)\s+(?:english|spanish|french|german|italian|portuguese|dutch|japanese|chinese|korean|arabic|"
    r"russian|polish|hindi|swedish|turkish|greek)\b"
)
# Words that may stand between the verb and the form asked for without making it a task on a topic.
_GENERIC = frozenset(
    """me your the my answers answer replies reply responses response explanations explanation things everything
    stuff words text a an more less really very super always only in with to and all of for""".split()  # noqa: SIM905
)
_AT_HAND = _rx(
    r"\b(?:this|that|these|those|the following|below|above|attached)\b|[\"“”]|"
    r"(?<!\w)'(?!(?:they|she|he|them|her|him)')\w"  # quoted text to work on (a quoted pronoun is a form)
)
_POLITE = _rx(r"[\s,]*\b(?:please|pls|plz)\b")


# One search decides whether a message without a first-person word may still hold an instruction.
_HINT = _rx(
    r"\b(?:always|never|from now on|going forward|please|pls|plz|don'?t|do not|stop|whenever|every time|let'?s|"
    r"let us)\b|"
    r"(?:^|[.!?]\s+)(?:(?:can|could|would|will)\s+(?:you|u)\s+)?" + _VERB + r"\b"
)


def might_instruct(message: str) -> bool:
    """``False`` means no sentence of ``message`` can be a standing instruction (the no-save fast path)."""
    return _HINT.search(message) is not None or _FOREIGN_VERB.search(message) is not None


def _fragment(text: str) -> bool:
    """A verbless request for a form (see :data:`_FRAGMENT_WORDS`): it opens with the form, every word is of it."""
    if _FORM.match(text) is None and _FRAGMENT_START.match(text) is None:
        return False
    rest = _FORM.sub(" ", text)
    return all(w.isdigit() or w.lower() in _FRAGMENT_WORDS for w in re.findall(r"[\w']+", rest))


#: The verbs whose object two alternatives may be a form of answer ("give me dnf commands instead of apt", "use grams
#: rather than cups"); "make pasta not pizza" is a plan for dinner.
_CONTRAST_VERBS = frozenset(
    "use give write show suggest recommend list spell format answer reply respond explain cite say call address".split()  # noqa: SIM905
)


def _durable_or_form(body: str) -> bool:
    if _DURABLE.search(body):
        return True
    if _CONTRAST.search(body) and body.split()[0].lower() in _CONTRAST_VERBS:
        return True
    form = _FORM.search(body)
    if form is None:
        return False
    verb, *between = re.findall(r"[\w']+", body[: form.start()]) or [""]
    allowed = _GENERIC | {"it"} if verb.lower() in ("keep", "make") else _GENERIC  # "keep it short": the reply
    return all(w.lower() in allowed for w in between)


_NOT = _rx(r"^(?:don'?t|do not|not)\b")
_LOWER_I = re.compile(r"\bi(?='m\b|'ve\b|'d\b|'ll\b|\b)")


def _third_person(text: str) -> str:
    """The user's words about themselves with "User" for "I" and "me" (never "they": a request triggered by
    "they" reads as someone else's, and the guard rightly stops those)."""
    text = _LOWER_I.sub(lambda m: "I" + m.group(0)[1:], text.replace("’", "'"))
    return third_person(_NOT.sub("do not", text))


# What a reply instruction is about: the user, the replies, or a form of answer. Advice to the other side ("never
# give up", "don't forget to stretch") has none of it.
_ANCHOR = _rx(
    r"\b(?:me|my|i|i'm|answers?|repl(?:y|ies)|responses?|respond|explanations?|explain|messages?|code|examples?|"
    r"sources?|words?|language|lists?|steps|sentences?|recommend\w*|suggest\w*|mention)\b"
)


# The commonest standing instruction said in the language asked for ("antworte ab jetzt auf Deutsch", "a partir de
# ahora respóndeme en español", "désormais réponds en français"): a verb of replying, a word that makes it last and
# a language, in German, Spanish, French, Italian, Portuguese or Dutch. The memory names the language in English.
_FOREIGN_VERB = _rx(
    r"\b(?:antworte|antwortest|antworten|schreib|schreibe|sprich|responde|respóndeme|respondeme|contesta|contéstame|"
    r"escribe|escríbeme|háblame|réponds|répondez|réponds-moi|écris|écrivez|parle|rispondi|rispondimi|scrivi|"
    r"scrivimi|parla|responda|responde-me|fala|escreva|antwoord|schrijf|spreek)\b"
)
_FOREIGN_LASTING = _rx(
    r"\b(?:ab jetzt|ab sofort|von jetzt an|von nun an|ab heute|immer|a partir de ahora|desde ahora|de ahora en "
    r"adelante|siempre|désormais|dorénavant|à partir de maintenant|à partir d'aujourd'hui|toujours|d'ora in poi|"
    r"da ora in poi|da adesso|sempre|a partir de agora|de agora em diante|vanaf nu|voortaan|altijd)\b"
)
_FOREIGN_LANGUAGES = {
    "English": ("english", "englisch", "inglés", "ingles", "anglais", "inglese", "inglês", "engels"),
    "German": ("deutsch", "alemán", "aleman", "allemand", "tedesco", "alemão", "duits"),
    "Spanish": ("spanisch", "español", "espanol", "castellano", "espagnol", "spagnolo", "espanhol", "spaans"),
    "French": ("französisch", "francés", "frances", "français", "francais", "francese", "francês", "frans"),
    "Italian": ("italienisch", "italiano", "italien", "italiaans"),
    "Portuguese": ("portugiesisch", "portugués", "portugais", "portoghese", "português", "portugues", "portugees"),
    "Dutch": ("niederländisch", "holländisch", "neerlandés", "néerlandais", "olandese", "holandês", "nederlands"),
}
_FOREIGN_LANGUAGE = _rx(
    r"\b(?:auf|en|in|em|op|al|à)\s+(?P<lang>"
    + "|".join(w for words in _FOREIGN_LANGUAGES.values() for w in words)
    + r")\b"
)


def _foreign_language_instruction(sentence: str) -> str | None:
    """A standing instruction to reply in a language, said in another language than English (see above)."""
    if not (_FOREIGN_VERB.search(sentence) and _FOREIGN_LASTING.search(sentence)):
        return None
    if (m := _FOREIGN_LANGUAGE.search(sentence)) is None:
        return None
    said = m.group("lang").lower()
    name = next(n for n, words in _FOREIGN_LANGUAGES.items() if said in words)
    return f"{PREFERENCE_FRAME}reply in {name}."


def standing_instruction(sentence: str, *, lasting_only: bool = False) -> str | None:
    """The memory for a standing instruction to the assistant (see the module docstring), or ``None``.

    ``lasting_only``: the message also asks for a piece of work, so a form asked for without a word that makes it
    last ("keep it friendly", beside "help me write a note") is about that work: ``None``."""
    if (foreign := _foreign_language_instruction(sentence)) is not None:
        return foreign
    text = sentence.strip().replace("’", "'")
    text = _LEAD.sub("", text)
    lets = _LETS.match(text)
    text = text[lets.end() :] if lets else text
    asked = _ASK.match(text)
    text = text[asked.end() :] if asked else text
    text = _LEAD.sub("", text)
    lasting = _TIME.match(text) is not None  # "from now on …"
    text = _TIME.sub("", text)
    condition = ""
    if m := _CONDITION.match(text):
        condition, text = m.group("cond"), text[m.end() :]
    text = _TRAIL.sub("", _LEAD.sub("", text)).rstrip(" ,;:?!-")
    if len(text.split()) < 2 or _AT_HAND.search(text):
        return None
    polite = _POLITE.search(sentence) is not None
    # "pls always check recipes for gluten", "please never use red and green in charts": a polite imperative meant
    # to last is said to the assistant, whatever it names
    addressed = polite and (_NEGATIVE.match(text) or _ANY_IMPERATIVE.match(text)) is not None
    formed = _FORM.search(text) or _CONTRAST.search(text) or (lets and _TO_LANGUAGE.search(text))
    if not (addressed or _ANCHOR.search(f"{condition} {text}") or formed or _BARE.match(text)):
        return None
    if lets:
        if not (lasting or _DURABLE.search(text)):
            return None  # "let's write the cover letter now": the work at hand
    elif _NEGATIVE.match(text) or _STOP.match(text) or (polite and _ANY_IMPERATIVE.match(text)):
        # "don't call me Thomas", "stop ending every answer with a question", "pls always flag …": meant to last;
        # without a "please", "always walk my dog at 6" is a habit whose "I" chat left out
        pass
    elif polite and (_PLEASE_NEGATIVE.match(text) or (_IMPERATIVE_START.match(text) and _DURABLE.search(text))):
        pass  # "please don't book anything for me before noon", "please flag every recipe you suggest with nuts"
    elif _fragment(text) and (lasting or _DURABLE.search(text)):
        pass  # "numbered lists, max 7 items, always"
    elif _AFFIRM.match(text):
        durable = condition or lasting or _DURABLE.search(text) is not None
        if not (durable or (not lasting_only and _durable_or_form(text))):
            return None
    elif (lasting_only and not (lasting or _DURABLE.search(text))) or not (
        _BARE.match(text)
        and (_FORM.search(text) or text.lower().startswith("no "))
        and (lasting or re.search(r"\b(?:please|pls|plz)\b", sentence, re.I))
    ):
        return None
    body = _third_person(_POLITE.sub("", f"{condition}, {text}" if condition else text))
    return f"{PREFERENCE_FRAME}{body[:1].lower()}{body[1:]}."


# An instruction limited to now is about the work at hand: "for now keep it short", "just this once, in French".
_ONCE = _rx(r"\b(?:for now|this time|this once|for today|right now|for the moment|just for)\b")
_SELF_START = _rx(r"^(?:i|i'm|im|i've|i'd|i'll|my|we|we're|our)\b")


def framed(sentence: str) -> str | None:
    """The memory for a clause the capture head read as a standing instruction, in :data:`PREFERENCE_FRAME`; ``None``
    when it is about a thing at hand ("this", quoted text), limited to now, or a statement about the user (which is
    written as one, not as an instruction)."""
    text = _LEAD.sub("", sentence.strip().replace("’", "'"))
    if asked := _ASK.match(text):
        text = text[asked.end() :]
    text = _TIME.sub("", _LEAD.sub("", text))
    condition = ""
    if m := _CONDITION.match(text):
        condition, text = m.group("cond"), text[m.end() :]
    text = _TRAIL.sub("", _LEAD.sub("", text)).rstrip(" ,;:?!-")
    if len(text.split()) < 2 or _AT_HAND.search(text) or _ONCE.search(sentence) or _SELF_START.match(text):
        return None
    body = _third_person(_POLITE.sub("", f"{condition}, {text}" if condition else text)).strip(" ,")
    return f"{PREFERENCE_FRAME}{body[:1].lower()}{body[1:]}." if body else None
