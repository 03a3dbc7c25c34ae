"""The cheap first stage of the offline classifier: regular expressions only, no model.

:func:`screen` splits a message into sentences and keeps the ones that look like durable self-disclosure, each with
a rule-based category guess and strength. Most chat messages (questions, task requests, greetings, remarks about
the assistant, passing states) leave nothing, and cost a few microseconds: one regular-expression search decides
that a message without any first-person word or "remember" needs no further work.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from memstack.capture.clauses import (
    clauses,
    drops_subject,
    names_someone,
    resolve_pronoun,
    restore_be,
    restore_subject,
)
from memstack.capture.instructions import might_instruct, standing_instruction
from memstack.capture.passing import passing_clause, passing_sentence
from memstack.capture.rewrite import strip_preamble
from memstack.dates import MONTH_NAMES, MONTHS, WEEKDAY_NAMES
from memstack.text import RELATION_WORDS
from memstack.types import Category

__all__ = ["Clause", "asks_for_work", "cued_predicate", "might_disclose", "screen", "starts_with_self", "statements"]


@dataclass(frozen=True, slots=True)
class Clause:
    text: str  # the sentence, interjections stripped
    explicit: bool  # "remember that …"
    category: Category | None  # the rule's guess; None leaves it to the exemplars
    strength: float  # rule evidence, 0..1
    reply_to: str | None = None  # the question this sentence answers, when it is a bare answer
    content: str | None = None  # the memory as the rule wrote it (a standing instruction), when it is not a rewrite
    said: bool = False  # a statement without a subject ("dentist tomorrow at 3"): kept as what the user said


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# One search over the whole message decides the no-save fast path.
_ANY_SELF = _rx(r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us|remember)\b|\bi[’']")
# Where a sentence ends: a full stop, "!" or "?"; an ellipsis written as one character after a word ("6 months
# though… is that realistic?"); a line break or ";"; a dash between spaces; and, as chat writes, an emoji followed by
# more words ("it's on 27 September 🏃 goal is sub-4 hours", "tea person all the way 🍵 whats a good oolong?"),
# unless a word that carries the sentence on follows it ("I love it 😍 and so do the kids").
_EMOJI = "\u2600-\u27bf\U0001f000-\U0001faff\ufe0f"
_SPLIT = re.compile(
    r"(?<=[.!?])\s+|(?<=\w…)\s+|\s*[\n;]\s*|\s+[-–—]+\s+|"
    rf"(?<=[{_EMOJI}])\s+(?=[\w'\"])(?!(?i:and|or|but|with|to|for|of|in|on|at|as|than|too|because)\b)"
)
_SUBJECT = _rx(r"\b(?:i|i'm|im|i've|i'd|i'll|my|we|we're|we've|our)\b|\bi[’'](?:m|ve|d|ll)\b")
_OBJECT = _rx(r"\b(?:me|myself|mine)\b")

_EXPLICIT = _rx(
    r"^(?:please\s+)?(?:remember|don'?t forget|do not forget|never forget|keep in mind|note|make a note|"
    # not "don't forget to call her": a reminder to do something, said to the other side
    r"save|store|for (?:future )?reference)(?:\s+(?:this|that|:))?[\s,:]+(?:that\s+)?(?!to\s)(?P<body>.+)$"
)
_TASK = _rx(
    r"^(?:please|pls|can you|could you|would you|will you|can u|i need you to|i want you to|i'd like you to|"
    r"i would like you to|help me|let's|let us|write|explain|give me|tell me|show me|make|create|summari[sz]e|"
    r"translate|list|generate|fix|find|calculate|draft|rewrite|check|describe|compare|suggest|recommend|draw|"
    r"convert|solve|define|quiz me|teach me|how do i|how can i|how should i|what should i|should i|do i|can i|"
    r"check (?:it|this|that) out|check out|take a look|look at|imagine|guess what|give|send|remind me|walk me through|"
    r"put together|prepare|outline|break (?:it |this |that )?down|go (?:through|over)|sum up|recap|proofread|"
    r"test me|keep (?:it|the answers?|your answers?|replies|them) (?:short|brief|simple)|make sure|focus on)\b"
)
# Words that lead into a request without changing it: "Finally give me …", "Then walk me through …".
_LEAD_IN = _rx(r"^(?:(?:and|so|then|now|next|also|finally|lastly|first|plus|ok(?:ay)?|alright)\b[\s,:]*)+")
_REQUEST = _rx(
    r"\b(?:i need|i want|i'd like|i would like|i'm looking for|im looking for)\s+(?:you|help|some help|to know|"
    r"to find out|an? (?:[\w-]+ )?(?:example|explanation|list|summary|answer|recipe|idea|suggestion)|"
    r"(?:[\w-]+ )?(?:ideas|suggestions|recommendations|recs|tips)|"
    r"advice|tips)\b|\bi (?:was|am) wondering\b|\bi have a question\b|"
    # Asking for something the assistant makes: "I need a checklist for my midterm", "I'd like a summary of my notes".
    r"\b(?:i need|i want|i'd like|i would like|i'd love|i would love|i could use|i'd appreciate)\s+(?:a|an|the|some|"
    r"your|another|more)\s+(?:[\w-]+\s+){0,2}?(?:checklist|outline|summary|recap|overview|breakdown|template|draft|"
    r"quiz|explanation|example|feedback|walkthrough|cheat ?sheet|study plan|step-by-step)s?\b|"
    # "I'd love to see a photo!", "I'd love to hear some tips": asking for the other side's things, not disclosure.
    r"^i(?:'d| would) love to (?:see|hear|read|check out|look at)\b"
)
_GREETING = _rx(
    r"^(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks?(?: you)?(?: so much)?|thx|ok(?:ay)?|"
    r"cool|great|nice|awesome|wow|lol|haha|bye|goodbye|see you|cheers|sure|yes|no|yep|nope)\b[\s\w,!.']{0,25}$"
)
_REACTION = _rx(
    r"^i(?:'m| am)?\s+(?:so |really |totally |truly |very |just )*(?:glad|happy|proud|sorry|thrilled|excited|"
    r"stoked|jealous|impressed)\s+(?:for|of|to hear|that you|about your|you)\b|"
    r"^i\s+(?:totally |completely |really |fully |so )*(?:agree|know(?! how)|see(?=\s*(?:$|[,.!?]|what|that|why|how|"
    r"where|your|it|now|so)\b)|understand|guess|bet|hope so|"
    r"think so|can imagine|can tell|feel you|hear you|get it|appreciate|admire|mean|swear(?!\s+by\b))\b|"
    r"^i\s+(?:can't|cannot|couldn't) (?:wait to (?:see|hear)|believe|imagine)\b|^(?:i hope|i wish) you\b"
)
_ABOUT_ASSISTANT = _rx(r"\b(?:you|your|you're|youre|yourself|u)\b")
_TEMPORARY = _rx(
    r"\b(?:right now|at the moment|atm|just now|for now|this (?:morning|afternoon|evening)|tonight)\b|"
    r"\bi(?:'m| am)\s+(?:so |really |a bit |kinda |pretty |super )*(?:tired|hungry|sleepy|bored|stuck|confused|"
    r"lost|thirsty|cold|hot|sick|late|on my way|in a hurry|waiting|typing|driving|eating|back|panicking|"
    r"freaking out|stressed(?: out)?|nervous|worried|anxious|upset|annoyed|frustrated|exhausted|done)\b|"
    r"\b(?:this|that) (?:question|problem|answer|essay|code|message|chat|conversation|page|exercise|reply)\b"
)
# A question without its "?": a wh-word (also as chat spells it with its "is": "whats", "hows"), or an auxiliary
# followed by its subject ("did you", "is it"). An auxiliary followed by anything else starts a statement whose "I"
# chat left out ("Did my first pull-up today", "Had to cancel the trip", "Can't stand horror films").
_AUX = r"(?:do|does|did|are|is|was|were|can|could|would|will|should|shall|may|might|have|has|had)"
_QUESTION_START = _rx(
    rf"^(?:what(?! a\b)|why|how|who|whom|which|whose|any|anything|ever|whats|hows|whos|wheres|whys)\b|"
    rf"^(?:when|where)\s+{_AUX}\b|"
    rf"^{_AUX}\s+(?:you|u|ya|i|he|she|it|we|they|there|anyone|anybody|someone|somebody|everyone|this|that|these|"
    r"those)\b"
)

_RELATIONS = "|".join(sorted(RELATION_WORDS, key=len, reverse=True))
_MONTHS = "|".join(MONTH_NAMES)
_WEEKDAYS = "|".join(WEEKDAY_NAMES)
# A habit is a fact about the user: "every six months", "on Saturdays", "twice a month", "every January".
_HABIT = _rx(
    rf"\b(?:every|each)\s+(?:other\s+|second\s+|\w+\s+)?(?:day|week|month|year|morning|evening|night|weekend|"
    rf"weekday|summer|winter|{_WEEKDAYS}|{_MONTHS})s?\b|\b(?:on|at)\s+(?:weekends|weekdays|(?:{_WEEKDAYS})s)\b|"
    r"\b(?:once|twice|\w+ times)\s+a\s+(?:day|week|month|year)\b|\b(?:daily|weekly|monthly|yearly|annually)\b"
)

_CUES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        Category.LEARNINGSTYLE,
        _rx(
            r"\b(?:i learn|learn(?:ing)? (?:best|better)|i understand (?:better|best)|helps? me (?:learn|understand|"
            r"remember|focus|study)|visual learner|step[- ]by[- ]step|hands-on)\b"
        ),
    ),
    (
        Category.PREFERENCE,
        _rx(
            r"\b(?:lov(?:e|es|ed)|lik(?:e|es|ed)|enjoy(?:s|ed)?|prefer(?:s|red)?|hat(?:e|es|ed)|dislike[sd]?|"
            r"can't stand|favou?rite|fan of|into|passionate about|passion|obsessed with|hooked on|hobby|hobbies|"
            r"allergic|vegetarian|vegan|my go-to|rather)\b"
        ),
    ),
    (
        Category.LEARNINGSTYLE,
        _rx(r"\b(?:explanations?|examples? (?:help|work)|diagrams?|flashcards?|analogies)\b"),
    ),
    (
        Category.GOAL,
        _rx(
            r"\b(?:want to|wanna|plan to|planning to|plan on|hope to|hoping to|goal|aim to|aiming|trying to|"
            r"working (?:on|toward|towards)|dream|aspire|going to|gonna|intend|determined to|saving (?:up )?for|"
            r"would like to|'d like to|thinking (?:about|of)|looking forward to|studying for|preparing for)\b"
        ),
    ),
    (
        Category.FACT,
        _rx(
            r"\b(?:i am|i'm|im|i work|i live|i study|i'm from|i grew up|i was born|i have|i've|i got|i moved|"
            r"i graduated|i teach|i own|i volunteer|i joined|i started|i adopted|i play|i used to|"
            r"my (?:name|pronouns|job|major|wife|husband|partner|boyfriend|girlfriend|kids?|children|son|daughter|"
            r"mom|dad|mother|father|sister|brother|family|dog|cat|pets?|friends?|parents|grandma|grandpa|home|house|city|"
            r"school|college|university|degree|birthday|age|team|band|car))\b|"
            # someone of the user's ("my cousin Arjun works at …"), the user with others ("we're Jewish"), a standing
            # "no" ("I don't eat meat on Fridays", "we don't do Christmas"; not a reaction: "I don't know")
            rf"\b(?:my|our) (?:[\w-]+ )?(?:{_RELATIONS})\b|^(?:we're|we are) (?:a |an |(?-i:[A-Z]))|"
            r"^we (?:have|own|live|rent) (?:a |an |two |three |\d|(?-i:[A-Z])|in )|\bi use (?:a|an)\b|"
            r"\b(?:i|we) (?:don't|do not|never|no longer|can't|cannot) (?:really |actually |even )?"
            r"(?!know|think|get|understand|mind|care|remember|see|agree|believe|mean|feel|want to|need to|have time|"
            r"wait|imagine|stand|tell|say|help)\w+"
        ),
    ),
    (Category.FACT, _HABIT),
)


# "I went / took / visited …": a personal event, worth keeping even without a category cue.
_EVENT = _rx(
    r"\b(?:i|we)\s+(?:just |recently |finally |also |actually )?(?:went|took|made|got|visited|attended|finished|"
    r"started|bought|read|watched|saw|met|joined|won|lost|ran|tried|learned|learnt|found|built|painted|wrote|"
    r"adopted|moved|graduated|volunteered|signed up|launched|released|received|completed|travell?ed|had|broke|hurt|"
    r"injured|sprained|fractured|quit|sold|left|retired|married|became|turned|switched|changed|used to)\b"
)
# News that changes what is known about the user ("I moved to Berlin", "Sam and I broke up", "I don't eat meat
# anymore"): as durable as a category cue, whatever the exemplars say (they are mostly about states).
_CHANGE = _rx(
    r"\b(?:i|we)(?:'ve|'d)?\s+(?:just |recently |finally |officially |have |had |packed up and |sold up and )?(?:moved|"
    r"relocated|emigrated|"
    r"immigrated|broke up|split up|"
    r"separated|divorced|got (?:married|engaged|divorced|hired|promoted|fired|laid off|a new job)|quit|stopped|"
    r"gave up|switched|transferred|retired|resigned|sold|cancell?ed|turned \d+|left (?:my|the|\w+)|"
    r"traded|swapped|replaced|got rid of|gave away|(?:finali[sz]ed|filed for) (?:our|my|the) divorce|"
    r"(?:pulled|dropped|backed) out of|withdrew from|accepted (?:an|the|a job) offer|made the move|"
    r"(?:cut|dyed|shaved|bleached) (?:my|our) (?:hair|head|beard)|"
    r"started (?:a new|eating|drinking|smoking|working|dating)|changed)\b|"
    r"\b(?:no longer|anymore|any more|any longer)\b|"
    r"\b(?:i'm|i am|we're|we are) (?:not|no longer)\b.*\b(?:anymore|now)\b|"
    r"\b(?:again|these days|nowadays|now)\b[.!]?$|\bnow\b(?=[,;]|\s+(?:live|work|study|eat|drive|use|have)\b)|"
    r"\b(?:i'm|i am) (?:now )?\d{1,3}(?: years old)?(?: now)?\b|"
    r"\b(?:my|our) (?:\w+ )?(?:[\w-]+ )?(?:got |was |has been )?(?:moved|rescheduled|"
    r"postponed|pushed back|cancell?ed|called off) (?:to|until)?\b|\b(?:passed away|died)\b|"
    r"\b(?:proposed|popped the question)\b|"
    # a state that changed, however it is told: something back in or out of the user's life ("burgers are back on my
    # menu", "dairy is off the table for me", "back to eating meat"), for good, or a first time in a new home or
    # without someone ("first weekend in my own flat", "first Thanksgiving without Grandma")
    r"\b(?:is|are|'s|'re)\s+(?:(?:officially|finally|now|definitely)\s+)?(?:back\s+(?:on|in)\s+(?:my|our)\b|"
    r"back\s+on\s+the\s+menu|off\s+the\s+(?:table|menu|list|cards)|out\s+for\s+good)|\bback\s+to\s+[a-z]+ing\b|"
    r"\bfor good\b|"
    r"\bfirst\s+[\w']+\s+(?:in\s+(?:my|our)\s+(?:new|own)|without)\b"
)
# A date in the sentence makes a dated event: a schedule if it lies ahead (decided once the date is resolved).
# Weekday and month names from memstack.dates: whole weekday names, months by their first three letters.
_WEEKDAY = "|".join(WEEKDAY_NAMES)
_MONTH = "(?:" + "|".join(sorted({name[:3] for name in MONTHS})) + ")[a-z]*"
_DATED = _rx(
    rf"\b(?:today|tonight|tomorrow|yesterday|next (?:week|month|year|weekend|{_WEEKDAY})|this (?:week|weekend|month)|"
    rf"(?:on |this |last )(?:{_WEEKDAY})|in (?:a|an|one|two|three|four|five|six|\d+) (?:days?|weeks?|months?)|"
    rf"{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH}|(?:in|next) (?:{_MONTHS})\b|"
    r"\bthe \d{1,2}(?:st|nd|rd|th)\b|\bday after tomorrow\b|\b(?:from today|from now(?! on))\b)"
)
# A first occasion without someone named ("first Thanksgiving without Grandma", "first summer without Dad"): see
# _clause.
_WITHOUT_SOMEONE = re.compile(r"(?i:\bfirst\s+[\w']+(?:\s+[\w']+)?\s+without\s+)[A-Z][a-z]+\b")
# What the thing at hand is for ("it's for a side character in my screenplay", "this is for my cousin's party"):
# about the request, not a fact of the user's life.
_PURPOSE = _rx(r"^(?:it|that|this)(?:'s|’s|\s+is|\s+was)\s+(?:just\s+|only\s+|mostly\s+)?for\b")
# Someone not named nor the user's own ("a friend coming over tomorrow is vegan", "someone at work …"), after an
# optional label ("quick q: …"): what is said of them is not the user's ("a friend and I …" is the user's too).
_ANYONE = _rx(
    r"^(?:[\w' -]{1,24}:\s*)?(?:(?:a|an|one|some)\s+(?:[\w-]+\s+)?(?:friends?|coworkers?|co-workers?|colleagues?|guy|"
    r"girl|woman|man|person|people|neighbou?rs?|students?|clients?|customers?|guests?|relatives?|cousins?|kid|lady|"
    r"dude)|someone|somebody|a few people)\b(?![\w' ]{0,24}\b(?:and|&)\s+(?:i|me|my)\b)"
)
# "Here's a pic from last Friday", "There's a party today": pointing at something, not the user's plan.
_POINTING = _rx(r"^(?:here|there|it|that|this|these|those|what)(?:'s|\s+is|\s+are|\s+was)\b")
# Second person inside a first-person sentence: usually about the other side ("I'm here for you").
_ADDRESSED = _rx(r"\b(?:you|your|you're|yours)\b")


def might_disclose(message: str) -> bool:
    """The no-save fast path: ``False`` means no sentence of ``message`` can be self-disclosure (nor a standing
    instruction, which may have no first-person word: "always answer in Spanish")."""
    return (
        _ANY_SELF.search(message) is not None
        or might_instruct(message)
        or drops_subject(message)  # "Flying to Nairobi in three days!"
        or _DATED.search(message) is not None  # "dentist tomorrow at 3"
        or _WITHOUT_SOMEONE.search(message) is not None  # "first Thanksgiving without Grandma"
    )


_SELF_FIRST = _rx(r"^(?:i|i'm|im|i've|i'd|i'll|my|we|we're|we've|our)\b|^i[’'](?:m|ve|d|ll)\b")


def starts_with_self(clause: str) -> bool:
    """Whether ``clause`` opens with the user as its subject ("I …", "my …", "we …")."""
    return _SELF_FIRST.match(clause) is not None


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or (_QUESTION_START.match(sentence) is not None and "." not in sentence)


def statements(message: str) -> list[str]:
    """The sentences of ``message`` that state something (interjections stripped): no questions, task requests,
    greetings or reactions."""
    out = []
    for raw in _SPLIT.split(without_material(message.strip())):
        sentence = strip_preamble(raw)
        if len(sentence) < 4 or _is_question(sentence) or _GREETING.match(sentence) or _REACTION.match(sentence):
            continue
        if _TASK.match(_LEAD_IN.sub("", sentence)) or _REQUEST.search(sentence):
            continue
        out.append(sentence)
    return out


def _category(sentence: str) -> Category | None:
    for category, pattern in _CUES:
        if pattern.search(sentence):
            return category
    return None


def _last_question(recent: tuple[tuple[str, str], ...]) -> str | None:
    """The other side's last message if it asked the user about themselves."""
    if not recent:
        return None
    text = recent[-1][1].strip()
    if not text.endswith("?"):
        return None
    question = _SPLIT.split(text)[-1]
    return question if _ABOUT_ASSISTANT.search(question) else None


# A sentence that only elaborates the one before ("Keep it short. Like 2-3 sentences max.") belongs to it.
_ELABORATION = _rx(r"^(?:like|e\.?g\.?|i\.?e\.?|say|max|maximum|at most|no more than|tops)\b")


# A full stop that ends an abbreviation, not a sentence: "Dr. Okafor", "vs. the others".
_ABBREVIATION = _rx(r"\b(?:dr|mr|mrs|ms|prof|st|jr|sr|vs|etc|e\.g|i\.e|approx|no)\.$")
# Symbols around a sentence ("🌱 vegan since 2020 🌱", "🎉🎉 turning 30"): not words of it.
_SYMBOLS = re.compile(r"^[^\w'\"(]+|[^\w'\")?!.]+$")


# Text in quotes is what the user asks about ("rewrite 'hey guys, meeting moved to 3'"), not the user speaking.
_QUOTED = re.compile(r"(?<!\w)(['\"“‘])(?:(?!\1).){3,200}?\s(?:(?!\1).){0,300}?(?:['\"”’])(?!\w)")


# A request to transform a text ("Translate to French: …", "can you proofread this: …"): what follows the colon is the
# text to work on, to the end of the message, not the user speaking about themselves.
_MATERIAL = _rx(
    r"(?:^|(?<=[.!?\n]))\s*(?:(?:ok(?:ay)?|so|hey|hi|please|pls|plz)[\s,]+)*(?:(?:can|could|would|will) you\s+)?"
    r"(?:please\s+)?(?:translate|summari[sz]e|proofread|rewrite|re-?word|rephrase|paraphrase|shorten|simplify|"
    r"polish|edit|correct|fix|tidy|clean up|condense)\b[^:.!?\n]{0,80}:"
)


def without_material(message: str) -> str:
    """``message`` with the text a transformation request works on left out (see :data:`_MATERIAL`)."""
    found = _MATERIAL.search(message)
    return message if found is None else f"{message[: found.end()]} …"


def _sentences(message: str) -> list[tuple[str, bool]]:
    """The sentences of ``message``, interjections stripped, an elaboration joined to the instruction before it; each
    with whether a discourse marker was stripped from it ("celiac fyi", "also pregnant"): a sign that what is left,
    however short, is said about the user."""
    pieces: list[str] = []
    for raw in _SPLIT.split(_QUOTED.sub(" … ", without_material(message.strip()))):
        if pieces and _ABBREVIATION.search(pieces[-1]):
            pieces[-1] = f"{pieces[-1]} {raw}"
        else:
            pieces.append(raw)
    out: list[tuple[str, bool]] = []
    before = ""
    for raw in pieces:
        if passing_sentence(raw):
            before = ""
            continue  # a hypothetical, a musing or sarcasm: nothing in it is a fact to keep
        bare = _SYMBOLS.sub("", raw).strip()
        sentence, before = _resolved(before, strip_preamble(bare)), bare
        if out and _ELABORATION.match(sentence) and standing_instruction(out[-1][0]) is not None:
            out[-1] = (f"{out[-1][0].rstrip(' .!')}, {sentence}", out[-1][1])
        else:
            out.append((sentence, sentence != bare.rstrip(" .!")))
    return out


def _resolved(before: str, sentence: str) -> str:
    """``sentence`` with a leading "she" or "he" resolved to whom the sentence ``before`` names ("my niece Hana got
    in!" then "she starts in October"), as in a clause cut from one sentence, when the sentence says something that
    may last of its own (a category cue, a date, a change: "he's on insulin now"); "she brought cake" is left as said
    (a relation named is no cue of what is said of them)."""
    resolved = resolve_pronoun(before, sentence)
    if resolved == sentence:
        return sentence
    lasting = _category(sentence) or _DATED.search(sentence) or _CHANGE.search(sentence)
    return resolved if lasting else sentence


def _is_request(text: str) -> bool:
    return standing_instruction(text) is not None


def asks_for_work(sentence: str) -> bool:
    """A task request or a question for the assistant ("Can you help me write a note?"): a form asked for in the
    same message ("keep it friendly") is about that work, not every reply."""
    stripped = _LEAD_IN.sub("", sentence)
    return _is_question(sentence) or _TASK.match(stripped) is not None or _REQUEST.search(sentence) is not None


def screen(
    message: str,
    recent: tuple[tuple[str, str], ...] = (),
    *,
    limit: int | None = None,
    refused: list[str] | None = None,
) -> list[Clause]:
    """Sentences of ``message`` that may be durable facts about the user, with rule evidence: each split into the
    clauses that stand alone (:func:`~memstack.capture.clauses.clauses`: one fact per memory), standing
    instructions to the assistant as preferences. ``limit``: stop after that many clauses (the caller keeps no
    more; a 32,000-character message of short sentences is not read to its end).

    ``refused``: when given, the clauses the rules could not judge (no first-person subject) are appended to it (at
    most ``limit``, or 10), for a reader of meaning (:mod:`~memstack.capture.head`) to judge; questions, greetings
    and reactions are not, since no reading makes them a memory."""
    question = _last_question(recent)
    judged = might_disclose(message) or question is not None
    if not judged and refused is None:
        return []
    out: list[Clause] = []
    sentences = _sentences(message)
    asks: list[bool] = []

    def working() -> bool:  # read once, and only when an instruction needs it
        if not asks:
            asks.append(any(asks_for_work(s) and standing_instruction(s) is None for s, _ in sentences))
        return asks[0]

    for index, (sentence, marked) in enumerate(sentences):
        if limit is not None and len(out) >= limit:
            break
        if len(sentence) < 4:
            continue
        if judged and (m := _EXPLICIT.match(sentence)):
            body = m.group("body").strip()
            if len(body) >= 4 and not _is_question(sentence):
                out.append(Clause(body, True, _category(body), 1.0))
            continue
        parts = clauses(sentence, _is_request)
        about_user = len(parts) > 1 and _SUBJECT.search(restore_subject(sentence)) is not None
        # a clause cut from a durable statement is durable too ("I have two kids, Leo is 7 and Nina is 4"), and one
        # cut from news is news ("My insomnia is gone, I sleep through the night now")
        whole = restore_subject(sentence)
        inherited = 0.0
        if about_user:
            inherited = 0.85 if _CHANGE.search(whole) else 0.7 if _category(whole) is not None else 0.0
        for part in parts:
            reply = question if index == 0 and len(parts) == 1 else None
            clause = _clause(part, about_user, reply, working) if judged else None
            if clause is not None:
                out.append(replace(clause, strength=max(clause.strength, inherited)) if not clause.said else clause)
            elif (
                refused is not None
                and len(refused) < (limit or 10)
                and (text := _readable(part, short=marked and len(parts) == 1)) is not None
            ):
                refused.append(text)
    return out


# One word that may describe a person ("celiac", "vegan", "left-handed", "pregnant"): letters, a hyphen inside.
_ONE_WORD = re.compile(r"[A-Za-z]{4,}(?:-[A-Za-z]+)?")


def _readable(part: str, *, short: bool = False) -> str | None:
    """A refused clause worth a reading of its meaning: words (two or more), not a question, greeting or reaction,
    and without the user as a subject ("I …", "my …"): a first-person clause the rules refused was refused for what
    it is (a passing state, a reaction, a request), and the head is not asked to second-guess that. ``short``: the
    clause is a whole sentence that followed or preceded a discourse marker ("celiac fyi", "btw vegan", "also
    pregnant"), so one word is read too: a marker says the word is said about the user, where a word alone
    ("celiac", "thanks") may be anything."""
    text = strip_preamble(_SYMBOLS.sub("", part)).strip()
    if len(text.split()) < 2 and not (short and _ONE_WORD.fullmatch(text)):
        return None
    if len(text) < 4 or _is_question(text) or _GREETING.match(text) or _REACTION.match(text):
        return None
    if _SUBJECT.search(restore_subject(text)) or passing_clause(text):
        return None
    return text


def cued_predicate(text: str) -> Category | None:
    """The kind of fact a bare predicate is ("vegetarian since 2019", "allergic to penicillin", "a nurse on nights"),
    read with the "I'm" chat left out (:func:`~memstack.capture.clauses.restore_be`), when a category cue of the rules
    names it; ``None`` for a reaction ("hilarious", "so jealous": no cue) or a clause that is no bare predicate."""
    reading = restore_be(text)
    clause = None if reading is None else _clause(reading, False, None, lambda: False)
    return clause.category if clause is not None and not clause.said and clause.content is None else None


def _clause(text: str, about_user: bool, question: str | None, working: Callable[[], bool]) -> Clause | None:
    """One clause's evidence (``about_user``: it was cut from a sentence about the user, so a clause about "the kids"
    or "Leo" is the user's too; ``working``: the message asks for a piece of work, so only an instruction meant to
    last is a preference), or ``None``."""
    text = strip_preamble(_SYMBOLS.sub("", text))
    preference = standing_instruction(text, lasting_only=True)
    if preference is None and (form := standing_instruction(text)) is not None and not working():
        preference = form
    if preference is not None:
        return Clause(text, False, Category.PREFERENCE, 0.9, content=preference)
    if len(text) < 4 or _is_question(text):
        return None
    text = restore_subject(text)
    if _TASK.match(_LEAD_IN.sub("", text)) or _REQUEST.search(text) or _GREETING.match(text):
        return None
    if _REACTION.match(text) or _TEMPORARY.search(text) or passing_clause(text) or _PURPOSE.match(text):
        return None
    if _ANYONE.match(text):
        return None  # said of someone not named nor the user's: "a guest coming on Saturday is vegan"
    if not starts_with_self(text) and (be := restore_be(text)) is not None:
        text = be  # "diabetic since I was 30": the user's predicate, its "I'm" put back
    has_subject = _SUBJECT.search(text) is not None or (about_user and names_someone(text))
    if not has_subject and _ABOUT_ASSISTANT.search(text):
        return None  # about the other side, not the user
    if has_subject:
        category = _category(text)
        if category is None and _DATED.search(text):
            category = Category.SCHEDULE
        strength = 0.8 if category else 0.7 if _EVENT.search(text) else 0.55
        if _CHANGE.search(text):
            strength = max(strength, 0.85)
        if _ADDRESSED.search(text):
            strength -= 0.2
        return Clause(text, False, category, strength)
    if _OBJECT.search(text):
        category = _category(text)
        return Clause(text, False, category, 0.7 if category else 0.45)
    if question is not None and len(text.split()) >= 2:
        return Clause(text, False, None, 0.4, reply_to=question)
    if _WITHOUT_SOMEONE.search(text):
        # "first Thanksgiving without Grandma": someone gone from the user's life (a breakup, a death, a move), news of
        # the user's own even without "I"; kept in the user's words
        return Clause(text, False, Category.FACT, 0.8, said=True)
    if names_someone(text):
        return None  # news about someone else ("Robert passed away in February"): not the user's words about self
    if len(text.split()) >= 2 and _DATED.search(text) and not _POINTING.match(text):  # "dentist tomorrow at 3"
        if (be := restore_be(text)) is not None:
            # a self-description with its date ("pregnant, due in may", "diabetic since the 3rd"): the user's, with
            # its verb put back, not "User said: …" (which would keep the date and lose whose it is)
            return Clause(be, False, Category.SCHEDULE, 0.8)
        return Clause(text, False, Category.SCHEDULE, 0.8, said=True)
    return None
