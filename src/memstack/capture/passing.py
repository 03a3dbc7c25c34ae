"""What a user says that is no durable fact about them, though it has the form of one.

The rules screen (:mod:`~memstack.capture.rules`) keeps first-person statements; four kinds of them tell nothing
lasting about the user, and each is recognised by its form, not by its topic:

* **a hypothetical or a musing**: the sentence sets up a world that is not the user's ("say I had a month off",
  "suppose I moved to Oslo", "if I were vegan, …", "I'd go back to school if I could", "sometimes I wonder what it'd
  be like to …"). What the user *does* want is said otherwise ("I want to become a baker");
* **a passing state**: an illness or a mood of the moment ("got a stinking cold", "nursing a hangover", "so tired
  today", "… rn"). A lasting condition is said without the article of one episode ("I have migraines", "I have
  asthma");
* **sarcasm**: the sentence is marked as meaning its opposite ("oh sure, I just LOVE …", "yeah right", "/s", an
  upside-down or eye-rolling face after praise); whatever it says, it is not a preference to keep, and its weekday is
  no date (after a plain report the same face is a sigh, and the report stands);
* **an acquaintance's news**: an event in the life of someone the user is not close to, or of someone of theirs
  ("my coworker just got engaged", "my boss is turning 50 on Monday", "my friend's son got into Oxford", "my
  neighbour's dog got diagnosed …"). A close relation's lasting fact stays ("my twin sister lives in Toronto"), and so
  does an acquaintance's lasting trait that shapes the user's days ("my roommate Jess is allergic to shellfish"):
  only *news* of the outer circle is dropped, since it says nothing that will still be true of the user's life.

:func:`passing_sentence` reads a whole sentence (sarcasm and hypotheticals colour every clause of it) and
:func:`passing_clause` one clause (a passing state, an acquaintance's news), after its subject is restored.
"""

from __future__ import annotations

import re

__all__ = ["passing_clause", "passing_sentence"]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_LEAD = r"^(?:(?:so|ok(?:ay)?|and|but|like|hmm+|well|random(?: question)?|just)\b[\s,:]*)*"
_HYPOTHETICAL = _rx(
    _LEAD + r"(?:say|suppose|supposing|imagine|pretend|hypothetically|in theory|in another life|let's say|what if"
    r")\b[\s,]+(?:that\s+)?(?:i|i'd|i'm|we|my)\b|"
    r"\bif\s+(?:i|we)\s+(?:were|was|had|could|won|ever|suddenly|somehow|lived|moved|quit|became)\b|"
    r"\b(?:i|we)\s+(?:sometimes\s+|often\s+|always\s+|kinda\s+|kind of\s+)?(?:wonder|daydream|fantasi[sz]e)\s+"
    r"(?:what|if|whether|how|about)\b|"
    r"\bwhat\s+it(?:'d|’d|\s+would)\s+be\s+like\b|\bin (?:a|an)\s+(?:alternate|parallel|perfect|ideal)\s+(?:world|"
    r"universe|life)\b|"
    # a plan hedged both ways is no plan: "might take up climbing, or might not, who knows", "maybe spain next
    # summer, idk"
    r"\b(?:might|maybe|may|could)\b[^.!?]*?(?:\bor\s+(?:i\s+)?(?:might|may|could)?\s*not\b|\bidk\b|\bwho knows\b|"
    r"\bwe(?:'ll|’ll| will) see\b|\bno idea\b)"
)
_SARCASM = _rx(
    r"^(?:oh|ah)\s*,?\s+(?:sure|great|joy|yay|wonderful|fantastic|perfect|lovely|brilliant|fun|totally)\b|"
    r"\byeah,?\s+right\b|(?:^|\s)/s\b|\bsaid no one ever\b|"
    # an emphatic verb of liking in capitals ("I just LOVE …", "I absolutely ADORE …"): said with a sneer
    r"\b(?:just|absolutely|totally|really|sooo*|so)\s+(?-i:LOVE|ADORE|ENJOY|LIVE FOR)\b"
)
# An upside-down or eye-rolling face turns praise or an overclaim into its opposite ("best weekend ever 🙃", "love
# that for me 🙄", "sure, I'll DEFINITELY start running tomorrow 🙄");
# after a plain report it is a sigh, and the report stands ("fractured my ankle in june and still on crutches 🙄", "the
# holiday fund became a new boiler 🙃 so the trip is off").
_WRY = re.compile("[🙃🙄]")
_PRAISE = _rx(
    r"\b(?:love|loved|loving|adore|enjoy|enjoying|great|fantastic|wonderful|perfect|awesome|amazing|fun|favou?rite|"
    r"best|thrilled|can't wait|cannot wait|so happy|lucky|yay|nice|lovely|brilliant|excellent|glad|thanks|dream|"
    r"exactly what i needed|living the dream|"
    # an overclaim is praise of one's own plan: "I'm TOTALLY going to the gym at 5am, absolutely 🙄"
    r"totally|absolutely|definitely|obviously|of course|for sure|100%)(?!\w)"
)
_ILLNESS = (
    r"(?:cold|flu|headache|migraine|hangover|sore throat|cough|fever|stomach bug|tummy bug|bug|virus|"
    r"toothache|stomach ache|tummy ache|cramps|nosebleed|rash|sunburn|stiff neck|crick in my neck)"
)
_PASSING = _rx(
    r"\b(?:got|have|has|having|caught|catching|came down with|coming down with|fighting(?: off)?|nursing|"
    r"(?:i'm|im|i am)\s+(?:down|sick|in bed|off work)\s+with|battling|recovering from|with|for)\s+(?:a|an|the|this|"
    r"that|some)\s+(?:[\w-]+\s+){0,2}?" + _ILLNESS + r"\b(?!\s+(?:brew|shower|plunge|water|drink|beer|room|call|"
    r"feet|hands|heart|case|sore|war|front))|"
    r"\b(?:rn|atm|right now|at the moment|today|tonight|this morning|this afternoon|this evening)\b.*\b(?:tired|"
    r"exhausted|sleepy|hungover|sick|bored|stressed|grumpy|cranky|sore|achy|knackered|wiped)\b|"
    r"\b(?:tired|exhausted|sleepy|hungover|sick|bored|stressed|grumpy|cranky|sore|achy|knackered|wiped|"
    r"blocked|stuffed up|bunged up)\b.*\b(?:rn|atm|right now|at the moment|today|tonight|this morning|"
    r"this afternoon|this evening)\b|"
    r"^(?:(?:i'm|im|i am|feeling|feel)\s+)?(?:so|soo+|really|super|kinda|pretty|totally|very)\s+(?:tired|exhausted|"
    r"sleepy|hungover|sick|bored|stressed|grumpy|cranky|sore|knackered|wiped)\b|"
    # a night's sleep, a body's reaction to what was just said: "running on four hours of sleep", "my hands are
    # sweating just reading that"
    r"\brunning on (?:fumes|empty|caffeine|coffee|no sleep|little sleep|(?:[\w-]+\s+)?hours?(?: of sleep)?)\b|"
    r"\bjust (?:thinking|reading|looking|hearing|talking) (?:about )?(?:it|that|this)\b|"
    # what the user is for one day: "I'm a zombie today", "im useless this morning", "feeling human again tonight"
    r"^(?:i'm|im|i am|feeling|feel)\s+(?:(?:a|an|such a)\s+)?(?:(?:total|complete|absolute|bit of a)\s+)?[a-z-]+"
    r"(?:\s+again)?\s+(?:today|tonight|this morning|this afternoon|this evening|rn|right now|atm)\b"
)
# Someone the user is not close to: news of their life is not the user's.
_OUTER = (
    r"(?:neighbou?rs?|coworkers?|co-workers?|colleagues?|boss|manager|classmates?|acquaintances?|landlord|"
    r"landlady|teacher|professor|coach|doctor|dentist|therapist|mate|buddy|pal|friends?|"
    r"(?:best|close|old|good|childhood|school|uni|work)\s+(?:friend|mate|buddy|pal)s?)"
)
_WHOSE = r"^(?:my|our)\s+(?:new\s+|old\s+|former\s+|ex-)?"
# "my friend's son", "my neighbour's dog", "my coworker's wife": someone of an acquaintance, whatever is said of them.
_SECOND_DEGREE = _rx(_WHOSE + _OUTER + r"(?:'s|’s|s'|s’)\s+(?!(?:and|place|house|flat|home)\b)\w+")
# News: an event of a life, said of an acquaintance ("just got engaged", "is turning 50", "got promoted").
_NEWS = _rx(
    _WHOSE + r"(?!(?:best|close)\s)" + _OUTER + r"(?:\s+(?-i:[A-Z])[\w'-]+)?\s+(?:(?:just|finally|recently|"
    r"apparently|literally|also)\s+)*(?:got|gets|is getting|has got|was|were|has been|is turning|turns|turned|"
    r"had|has had|is having|is expecting|passed|won|lost|became|announced|quit|retired|left|moved|bought|"
    r"is moving|is retiring|is leaving|broke up|split up|"
    # away for a while: "my colleague Ana is out this week", "my boss is off sick"
    r"is (?:out|off|away|on leave|off sick|home sick|on holiday|on vacation))\b"
    r"(?:\s+(?:engaged|married|divorced|promoted|fired|hired|laid off|diagnosed|accepted|into|in|a|an|her|his|their|"
    r"the|twins|away|\d+))?"
)
_ASKING = _rx(r"[,;]\s*(?:how|what|why|which|any|should|can|could|would|do|does|is|are|ideas?|tips?)\b")
_USER = _rx(r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|us|our)\b")


def passing_sentence(sentence: str) -> bool:
    """Whether a whole sentence is a hypothetical, a musing or sarcasm (see the module docstring): none of its
    clauses is a fact to keep."""
    wry = _WRY.search(sentence) is not None and _PRAISE.search(sentence) is not None
    return _HYPOTHETICAL.search(sentence) is not None or _SARCASM.search(sentence) is not None or wry


def passing_clause(clause: str) -> bool:
    """Whether one clause (its subject restored) is a passing state, or an acquaintance's news that does not
    involve the user further (see the module docstring)."""
    if _PASSING.search(clause):
        return True
    clause = _ASKING.split(clause, maxsplit=1)[0]  # "…, how can I help her": the user asks, says nothing of self
    if _SECOND_DEGREE.match(clause):
        return not _USER.search(clause[clause.find(" ") + 1 :])
    if (news := _NEWS.match(clause)) is not None:
        return not _USER.search(clause[news.end() :])
    return False
