"""The patterns behind :mod:`~memstack.capture.frames`: which wording names which attribute, and how.

Each entry of :data:`PREDICATES` is ``(slot, mode, pattern)``: a regular expression matched at the start of a
clause's predicate (after "user" and adverbs, lower case, "n't" expanded), whose optional ``v`` group is the value.
The other patterns read "user's …" clauses (favourites, dated events, something gone) and the wrappers that turn a
statement into its end ("no longer …", "stopped …") or into a switch ("switched from … to …"). Adding a wording is
one entry here plus a case in ``tests/capture/test_updates.py``.
"""

from __future__ import annotations

import re
from enum import StrEnum

from memstack import dates

__all__ = [
    "ADDITIVE",
    "ADVERBS",
    "AGAIN",
    "AGENT_MOVED",
    "ANYMORE",
    "ATTR_CHANGED",
    "ATTR_IS",
    "BORN",
    "COUNT",
    "DATE_START",
    "ELIDED",
    "END_WRAP",
    "EVENT_CANCELLED",
    "EVENT_HAS",
    "EVENT_MOVED",
    "EVENT_MOVED_BY",
    "EVENT_WHEN",
    "FAVOURITE",
    "FAVOURITE_OBJ",
    "FINISHED",
    "GAVE",
    "GOAL",
    "GONE",
    "GOODBYE",
    "HEALED",
    "INSTEAD",
    "INSTEAD_END",
    "JOB_IS",
    "LAST_DAY",
    "MONTH_NAMES",
    "NAMED_GONE",
    "NEW_HOME",
    "NOT_ENDING",
    "NOT_FOR_USER",
    "NOT_SINCE",
    "OFF_TABLE",
    "PARTNER_IS",
    "PREDICATES",
    "PREFERS",
    "PREF_NEG",
    "PREF_POS",
    "PROMOTED",
    "PROPOSED",
    "REALIZED",
    "SWITCH",
    "SWITCH_PLURAL",
    "TAKEN",
    "TEAM",
    "THE_CANCELLED",
    "TRADE",
    "Mode",
    "past",
]


class Mode(StrEnum):
    STATE = "state"  # holds: "lives in Paris"
    START = "start"  # began, or changed to: "moved to Berlin", "got promoted to senior developer"
    END = "end"  # stopped holding, or does not hold: "no longer plays tennis", "is single", "quit smoking"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


ADVERBS = r"(?:(?:just|finally|recently|now|also|still|actually|officially|already|currently|really|only|even|then|"
ADVERBS += r"eventually|happily|sadly|soon|somehow|newly|apparently|basically)\s+)*"
DIET_WORDS = r"vegetarian|vegan|pescatarian|pescetarian|keto|paleo|carnivore|flexitarian|plant[- ]based|omnivore"
FOODS = r"meat|fish|pork|beef|chicken|dairy|eggs|cheese|animal products|gluten|sugar|carbs|seafood|red meat"
OCCUPATIONS = """accountant actor actress analyst architect artist assistant attorney baker banker barista bartender
    carpenter cashier chef cleaner clerk coach consultant cook counselor counsellor dentist designer developer
    director doctor driver economist editor electrician engineer farmer firefighter freelancer hairdresser intern
    janitor journalist judge lawyer lecturer librarian manager mechanic musician nanny nurse officer paralegal
    paramedic pharmacist photographer physician physiotherapist pilot plumber police policeman policewoman
    professor programmer psychologist receptionist reporter researcher salesman saleswoman scientist secretary
    server soldier surgeon tailor teacher technician therapist translator tutor vet veterinarian waiter waitress
    writer ceo cto founder cofounder co-founder administrator supervisor executive recruiter marketer trainer
    mover caregiver midwife dietitian nutritionist optometrist radiographer courier realtor copywriter carer
    sonographer hygienist paramedic anesthetist anaesthetist doula"""
OCCUPATION = "|".join(OCCUPATIONS.split())
EVENT_VERB = (
    r"(?:got |was |has been |have been |is |were |had been |had to be )?"
    r"(?:moved|rescheduled|postponed|pushed(?: back)?|"
    r"changed|delayed|brought forward|bumped|shifted|switched|put off)"
)
#: The whole month names (memstack.dates), as an alternation.
MONTH_NAMES = "|".join(dates.MONTH_NAMES)
DATE_START = r"(?=(?:on |for |at |in |to |until |till |next |this )?(?:\d|the \d|\w+day|\w+days|"
DATE_START += MONTH_NAMES + r"|tomorrow|next|mornings?|evenings?|afternoons?|nights?|weekends?))"


def _p(slot: str, mode: Mode, *pattern: str) -> tuple[str, Mode, re.Pattern[str]]:
    return slot, mode, re.compile("".join(pattern))


#: Predicate patterns (matched after "user " and adverbs): (slot, mode, pattern with an optional ``v`` group).
PREDICATES: tuple[tuple[str, Mode, re.Pattern[str]], ...] = (
    # residence
    _p(
        "residence",
        Mode.STATE,
        r"^(?:is |are )?(?:lives|live|living|resides|residing|stays|staying) (?:in|at|on) (?P<v>.+)",
    ),
    _p("household", Mode.STATE, r"^(?:is |are )?(?:lives|live|living|stays|staying) (?:with|alone)(?P<v>.*)"),
    _p("household", Mode.START, r"^(?:has |have )?(?:moved|is moving) in (?:together\b|with (?P<v>.+))"),
    _p("residence", Mode.STATE, r"^is (?:based|settled|located) (?:in|at|out of) (?P<v>.+)"),
    _p(
        "residence",
        Mode.START,
        r"^(?:has |have )?(?:finished |is done )?(?:moved|relocated|relocating|moving|emigrated|immigrated|",
        r"settled|made the move)(?: back| away| over| out| house| home| abroad| down| up| across| off campus|",
        r" out of (?:the |a |user's )?[\w-]+| away from [\w-]+)?(?: from .+? to| to| into|",
        r" in) (?P<v>.+)",
    ),
    _p(
        "residence",
        Mode.START,
        r"^(?:has )?(?:moved|relocated) (?P<v>further out|away|house|abroad|out(?! of)|home)\b",
    ),
    _p("residence", Mode.END, r"^(?:moved|has moved) out of (?P<v>.+)"),
    _p(
        "home",
        Mode.STATE,
        r"^(?:rents|is renting|shares) (?P<v>(?:a |an |the )?(?:[\w-]+ ){0,3}(?:apartment|flat|house|condo|studio|",
        r"room|place|loft)\b.*)",
    ),
    # job
    _p("job", Mode.STATE, r"^(?:works|is working) as (?P<v>.+)"),
    _p("employer", Mode.STATE, r"^(?:works|is working) (?:at|for) (?P<v>.+)"),
    _p("job", Mode.STATE, r"^is (?:employed|hired) as (?P<v>.+)"),
    _p("employer", Mode.STATE, r"^is (?:employed|hired) (?:at|by|with) (?P<v>.+)"),
    _p("employer", Mode.STATE, r"^teaches (?:at|in) (?P<v>.+)"),
    _p("job", Mode.STATE, rf"^is (?:a|an) (?P<v>(?:[\w-]+ ){{0,3}}(?:{OCCUPATION})s?)\b"),
    _p(
        "job",
        Mode.END,
        r"^is (?P<v>unemployed|jobless|out of work|between jobs|retired|",
        r"looking for (?:a )?(?:job|work))\b",
    ),
    _p(
        "job",
        Mode.START,
        r"^(?:started|starts|began|begins|is starting|got|landed|accepted|took|has|",
        r"took on) (?:a |an |the )?(?:new |first |full-time |part-time )?(?:job|position|role|",
        r"gig|career)(?: (?:as|at|with|in) (?P<v>.+))?",
    ),
    _p("job", Mode.START, r"^(?:got|was|has been) (?:hired|offered a job|taken on)(?: (?:as|at|by|with) (?P<v>.+))?"),
    _p(
        "job",
        Mode.START,
        r"^(?:accepted|took|signed) (?:a |an |the )?(?:job |work )?(?:offer|contract|position)(?: (?:from|at|with) ",
        r"(?P<v>.+))?",
    ),
    _p("job", Mode.START, r"^(?:got |was |has been )?promoted(?: to (?P<v>.+))?"),
    _p(
        "job",
        Mode.START,
        r"^(?:starts|started|begins|began|is starting) (?:work|working|a job) (?:at|with|for) (?P<v>.+)",
    ),
    _p("job", Mode.START, r"^(?:now works|works now) (?:as|at|for) (?P<v>.+)"),
    _p("job", Mode.START, r"^(?:changed|switched) (?:jobs|careers|employers)(?: to (?P<v>.+))?"),
    _p(
        "job",
        Mode.START,
        r"^joined (?P<v>(?:a|an|the)? ?(?:[\w-]+ ){0,3}(?:startup|start-up|company|firm|agency|",
        r"corporation|bank|consultancy|practice|studio|lab)\b.*)",
    ),
    _p(
        "job",
        Mode.END,
        r"^(?:quit|left|lost|resigned from|was fired from|got fired from|was laid off from|",
        r"got laid off from) (?:user's |the )?(?:job|position|role)(?: (?:at|with|",
        r"as) (?P<v>.+))?",
    ),
    _p(
        "job",
        Mode.END,
        r"^(?:retired|resigned|got laid off|was laid off|got fired|was fired|got let go|",
        r"was let go)(?: from (?P<v>.+))?\b",
    ),
    # partner
    _p(
        "partner",
        Mode.STATE,
        r"^is (?P<s>dating|seeing|going out with|in a relationship with|married to|engaged to|",
        r"together with) (?P<v>.+)",
    ),
    _p("partner", Mode.STATE, r"^is (?:happily )?(?P<v>married|engaged|in a relationship)\b"),
    _p(
        "partner",
        Mode.STATE,
        r"^has a (?:boyfriend|girlfriend|partner|husband|wife|fiance|fiancee)(?: (?:named|",
        r"called) (?P<v>.+))?",
    ),
    _p("partner", Mode.END, r"^is (?P<v>single|divorced|separated|widowed|a widow|a widower)\b"),
    _p("partner", Mode.START, r"^(?:got|is getting) (?P<s>married|engaged)(?: to (?P<v>.+))?"),
    _p("partner", Mode.START, r"^(?:started|starts|began) (?:dating|seeing|going out with) (?P<v>.+)"),
    _p("partner", Mode.START, r"^(?:married|proposed to) (?P<v>.+)"),
    _p(
        "partner",
        Mode.END,
        r"^(?:broke up|split up|split|separated|got divorced|divorced|got separated|",
        r"ended things|called it quits|called off (?:the|user's) engagement|(?:finali[sz]ed|filed for|got|went ",
        r"through) (?:the |a |user's )?divorce)(?: (?:with|",
        r"from) (?P<v>.+))?",
    ),
    # diet
    _p("diet", Mode.STATE, rf"^is (?:a |an )?(?:strict |committed |mostly )?(?P<v>{DIET_WORDS})\b"),
    _p(
        "diet",
        Mode.STATE,
        r"^(?:follows|is on|keeps|eats|has) (?:a |",
        r"an )?(?:strict )?(?P<v>[\w-]+(?: [\w-]+)?) diet\b",
    ),
    _p("diet", Mode.STATE, rf"^eats (?P<v>{FOODS})\b"),
    _p(
        "diet",
        Mode.START,
        r"^(?:went|gone|has gone|became|become|turned|is going|is now|switched to being|switched to) (?:a |",
        rf"an )?(?:fully )?(?P<v>{DIET_WORDS})\b",
    ),
    _p("diet", Mode.START, rf"^(?:started|starts|is|began) (?:eating|having) (?P<v>{FOODS})\b"),
    _p("diet", Mode.START, rf"^(?:eats|is eating) (?P<v>{FOODS}) again\b"),
    _p("diet", Mode.STATE, rf"^(?P<v>{DIET_WORDS})$"),
    # school
    _p(
        "school",
        Mode.STATE,
        r"^(?:studies|is studying|majors in|is majoring in) (?P<v>.+? (?:at|in) .+)",
    ),
    _p(
        "school",
        Mode.STATE,
        r"^(?:is doing|is pursuing|is working on|is working towards|is studying for|is enrolled in) ",
        r"(?P<v>(?:a |an |user's )?(?:[\w'-]+ )?(?:degree|master's|masters|phd|doctorate|ba|bsc|mba|diploma)\b.*)",
    ),
    _p(
        "school",
        Mode.STATE,
        r"^(?:attends|goes to|is (?:enrolled|a student) (?:at|in)) (?P<v>.*(?:university|",
        r"college|school|academy|institute|uni)\b.*)",
    ),
    _p(
        "school",
        Mode.STATE,
        r"^is (?:a|an) (?P<v>(?:[\w-]+ ){0,3}(?:student|freshman|sophomore|undergrad|",
        r"undergraduate|pupil|phd candidate|grad student|schooler))\b",
    ),
    _p(
        "school",
        Mode.START,
        r"^(?:transferred|switched|moved) (?:schools )?to (?P<v>.*(?:university|college|school|",
        r"academy|institute|uni|program)\b.*)",
    ),
    _p("school", Mode.START, r"^transferred(?: from .+?)? to (?P<v>.+)"),
    _p(
        "school",
        Mode.START,
        r"^(?:starts|started|begins|began|is starting|will start) (?P<v>college|university|uni|",
        r"grad school|high school|medical school|law school|a (?:master's|masters|phd|",
        r"degree).*)\b",
    ),
    _p("school", Mode.START, r"^(?:got into|was accepted (?:to|into|at)|enrolled (?:at|in)) (?P<v>.+)"),
    _p(
        "school",
        Mode.END,
        r"^(?:graduated|dropped out|finished school|finished college|",
        r"finished university)(?: (?:from|of) (?P<v>.+))?",
    ),
    # commute
    _p(
        "commute",
        Mode.STATE,
        r"^(?:usually |always |now )?(?P<v>bikes|cycles|walks|drives|runs|commutes|skates|",
        r"takes (?:the|a) (?:bus|train|tube|subway|metro|ferry|tram)|rides (?:a|",
        r"user's) \w+) to (?:work|school|the office|campus|class|college)\b",
    ),
    _p("commute", Mode.STATE, r"^(?:commutes|gets|goes) (?:to (?:work|school|the office|campus) )?by (?P<v>\w+)"),
    # working from home is how the user gets to work now, unless only on some days
    _p(
        "commute",
        Mode.START,
        r"^(?:works|is working|went|has gone|is going|is now) (?:fully |full-time |permanently )?",
        r"(?P<v>from home|remotely|remote)\b(?!.*\b(?:on \w+days?|some days|once|twice|sometimes|occasionally|",
        r"days a week|a week)\b)",
    ),
    # hair: "has long hair" → "cut user's hair really short", "dyed user's hair red"
    _p("hair", Mode.STATE, r"^has (?P<v>(?:[\w-]+ ){1,3})hair\b"),
    _p(
        "hair",
        Mode.START,
        r"^(?:cut|dyed|shaved|bleached|coloured|colored|got) user's (?:hair|head)(?: cut)?(?: off)? ",
        r"(?:really |very |super |all )?(?P<v>[\w-]+(?: [\w-]+)?)",
    ),
    # pregnancy: "is expecting" → "had the baby", "gave birth"
    _p("pregnancy", Mode.STATE, r"^is (?:expecting|pregnant)\b"),
    _p("pregnancy", Mode.END, r"^(?:gave birth|had (?:the|a|user's|our) (?:baby|twins)\b(?! shower))"),
    # age
    _p("age", Mode.STATE, r"^is (?:now )?(?P<v>\d{1,3})(?: years old| years of age| yo)?(?: now| already| today)?\s*$"),
    _p("age", Mode.STATE, r"^is (?P<v>\d{1,3}) years old\b"),
    _p("age", Mode.START, r"^(?:turned|just turned|is turning) (?P<v>\d{1,3})\b"),
    # pay: "earns 48,000 dollars a year", "is on 55k a year now" (a number with a unit of money or time)
    _p(
        "salary",
        Mode.STATE,
        r"^(?:earns?|makes?|is on|is paid|gets paid|takes home|is earning|is making) (?:about |around |roughly )?",
        r"(?P<v>[$£€]?\d[\d,.]*k?)(?= (?:a|per|an|every) (?:year|month|hour|week)\b| ?k\b| dollars| pounds| euros|",
        r" bucks| an hour| a year)",
    ),
)
# "user has 3 kids", "user has two cats now"
COUNT = _rx(
    r"^(?:has|have) (?P<n>\d+|two|three|four|five|six|seven|eight|nine|ten|one) (?:\w+ )?"
    r"(?P<k>kids|children|sons|daughters|cats|dogs|pets|siblings|brothers|sisters|grandchildren|grandkids|cars|jobs|roommates|horses|birds|fish)\b"
)
# "user's favourite band is arctic monkeys", "user's favourite food is tacos now"
FAVOURITE = _rx(
    r"^user's (?:all[- ]time |current |new |absolute )?favou?rite (?P<k>[\w ]+?) (?:(?:these days|nowadays|right now|"
    r"now|at the moment|of all time) )?(?:is|are|has become|became|would be|has to be) (?:now )?(?P<v>.+)"
)
FAVOURITE_OBJ = _rx(r"^(?P<v>.+?) (?:is|are) (?:now )?user's (?:new )?favou?rite (?P<k>\w+)")
# "user's dentist appointment is on 12 june", "user's book club meets on tuesdays"
EVENT_WHEN = _rx(
    rf"^user's (?P<k>(?:[\w'-]+ ){{0,4}}?[\w'-]+) (?:is|are|was|will be|falls|happens|takes place|meets|starts|"
    rf"is scheduled|is planned|is booked|is set|are scheduled|are on)(?: (?:for|on|at|in))? {DATE_START}(?P<d>.+)"
)
EVENT_MOVED = _rx(
    rf"^user's (?P<k>(?:[\w'-]+ ){{0,4}}?[\w'-]+) {EVENT_VERB}(?: back| forward)? (?:to|until|till|for) "
    rf"{DATE_START}(?P<d>.+)"
)
EVENT_MOVED_BY = _rx(
    r"^(?:moved|rescheduled|postponed|pushed back|pushed|delayed|changed|shifted|put off|switched|bumped) "
    r"(?:user's |the |our )?(?P<k>(?:[\w'-]+ ){0,4}?[\w'-]+)(?: back| forward)? (?:to|until|till) "
    rf"{DATE_START}(?P<d>.+)"
)
EVENT_HAS = _rx(
    r"^(?:has|goes to|attends|has got) (?:a |an |the |user's )?(?P<k>(?:[\w-]+ ){0,2}?[\w-]+) "
    rf"(?:on|every|at|next|this) {DATE_START}(?P<d>.+)"
)
EVENT_CANCELLED = _rx(
    r"^user's (?P<k>(?:[\w'-]+ ){0,4}?[\w'-]+) (?:got|was|has been|is) (?:cancelled|canceled|called off|scrapped)\b"
)
GONE = _rx(
    r"^user's (?P<v>(?:[\w-]+ ){0,3}?[\w-]+) (?:passed away|died|was put down|was put to sleep|ran away|is gone|"
    r"was stolen|got stolen|was totalled|got totalled|was written off|got written off|broke down for good|got sold|"
    r"is over|is no more|ran away)\b"
)
# "whiskers passed away": one word naming a pet or person (not "robert's father …")
NAMED_GONE = _rx(
    r"^(?P<v>[a-z][\w-]*) (?:has )?(?:passed away|died|ran away|was put down|was put to sleep|went missing|"
    r"was stolen|got stolen|did not make it|is no longer with us)\b"
)
JOB_IS = _rx(r"^user's (?:job|occupation|profession|employer|position|role|title) is (?P<v>.+)")
PARTNER_IS = _rx(
    r"^user's (?:boyfriend|girlfriend|partner|husband|wife|fiance|fiancee|spouse) is (?:named |called )?(?P<v>[\w'-]+)$"
)
LAST_DAY = _rx(r"\buser's (?:last|final) day (?:at|with) (?P<v>.+)")
PREF_POS = _rx(
    r"^(?:loves|likes|enjoys|adores|prefers|really likes|(?:come|came|grown|grew|learned|learnt) to (?:love|like|"
    r"enjoy|appreciate)|is (?:a (?:huge |big )?fan of|into|obsessed with|"
    r"passionate about|crazy about))\s+(?P<v>.+)"
)
PREF_NEG = _rx(
    r"^(?:hates|dislikes|detests|loathes|can not stand|does not like|does not enjoy|does not care for|"
    r"is not (?:a fan of|into)|is sick of|is tired of|has gone off|gone off|went off|has lost interest in|"
    r"lost interest in|"
    r"got bored of|is over)\s+(?P<v>.+)"
)
# End wrappers: "no longer X", "does not X anymore", "stopped X", "quit X", "gave up (on) X", "cancelled X", …
END_WRAP = _rx(
    r"^(?:is no longer|no longer|is not|does not|do not|can not|will not|has not|never|is not going to|"
    r"does not want to|decided not to|(?:has )?cut out|ditched|dumped|deleted|has stopped|stopped(?! by| at| over)|"
    r"has quit|quit|gave up(?: on)?|traded in|traded away|"
    r"has given up(?: on)?|"
    r"had to (?:rehome|give up|give away|sell|put down|quit|stop|cancel|leave|pull out of|withdraw from|drop out of|"
    r"back out of)|rehomed|put down|pulled out of|withdrew from|backed out of|bowed out of|"
    r"stepped down (?:from|as)|stepped away from|"
    r"given up(?: on)?|dropped out of|cancelled|canceled|called off|scrapped|sold|got rid of|gave away|rehomed|"
    r"left|ended(?! up)|finished with|is done with|is finished with|moved on from|used to|no more|is off(?! to))"
    r"\s+(?P<rest>.+)"
)
# "is not gonna give up on …", "will never stop …": a negated ending goes on (no end)
NOT_ENDING = _rx(
    r"^(?:is not|will not|does not|do not|can not|never)\s+(?:\w+ )?(?:going to |gonna |want to )?"
    r"(?:give up|giving up|stop|stopping|quit|quitting)\b"
)
ANYMORE = _rx(r"\s*(?:,\s*)?\b(?:anymore|any more|any longer|at all|now)\b")
AGAIN = _rx(r"\b(?:again|back to|once more|resumed|is back)\b")
# "too" adds only at the end of its clause ("learning spanish too"), not before a word ("too expensive")
ADDITIVE = _rx(
    r"\b(?:also|too(?=\s*(?:[,.!?;]|$))|as well|another|second|additionally|in addition|besides|on top of)\b"
)
SWITCH = _rx(
    r"^(?:has |have )?(?:switched|changed|swapped|converted|upgraded|downgraded|moved over)(?: over)?(?: from "
    r"(?P<from>.+?))? to (?P<v>.+)"
)
# "switched teams", "changed banks": a switch whose new value the next clause may name
SWITCH_PLURAL = _rx(
    r"^(?:has |have )?(?:switched|changed|swapped) (?P<v>teams|clubs|schools|banks|gyms|doctors|dentists|phones|"
    r"cars|sides|providers|churches|classes|majors|bands|agencies|firms|companies|carriers|plans)\b"
)
# "changed user's major to computer science"
ATTR_CHANGED = _rx(
    r"^(?:has |have )?(?:changed|switched|updated) user's (?P<k>[\w' ]{1,30}?) (?:from (?P<from>.+?) )?to (?P<v>.+)"
)
# "user's major is economics": a named attribute with one value ("a …", "named …" describe, they do not name)
ATTR_IS = _rx(
    r"^user's (?P<k>[\w' ]{1,30}?) (?:is|are) (?:now )?(?!a |an |named|called|very|so |really|not|also|too|on |in |"
    r"at |from |going|getting|still|just|being|always|never|back|gone|over|done)(?P<v>.+)"
)
# "the coldplay concert got cancelled": an event in the user's own message
THE_CANCELLED = _rx(
    r"^(?:the|our) (?P<v>(?:[\w'-]+ ){0,4}?[\w'-]+) (?:got|was|has been|is|were|have been) (?:cancelled|canceled|"
    r"called off|scrapped)\b"
)
# "prefers coffee over tea": the preferred and the other
PREFERS = _rx(r"^(?:prefers|would rather have|likes) (?P<v>.+?) (?:over|to|more than|rather than|instead of) (?P<o>.+)")
# "plays for the riverside rovers": the team
TEAM = _rx(r"^(?:plays|is playing)(?: \w+)? for (?:the )?(?P<v>.+)|^is on (?:the )?(?P<w>.+? team)\b")
# "is on a mac now instead of the windows laptop": a switch naming what it replaced
# (not a one-off: "had tea instead of coffee this morning")
INSTEAD = _rx(
    r"^(?!.*\b(?:today|tonight|this morning|this afternoon|this evening|yesterday|last night|for once|for a change|"
    r"for lunch|for dinner|for breakfast)\b)(?P<v>.+?),? (?:now )?instead of (?P<from>.+)"
)
# "finished the data science course": the thing finished, up to "of" ("the third module of …" is a part of it)
FINISHED = _rx(r"^(?:finished|completed|wrapped up|submitted|defended|handed in) (?P<v>.+?)(?=\s+of\b|,|\s+and\b|$)")
# "gave user's old samsung to user's brother": something of the user's given away
GAVE = _rx(r"^(?:gave|handed|passed|sold) (?P<v>user's .+?) (?:to|away)\b")
# "leo proposed": the user is engaged to whoever proposed (the memories name them)
PROPOSED = _rx(r"^(?P<v>[a-z][\w-]*) (?:proposed|popped the question)\b")
# Someone else, one or two words, before what they did to the user's things: "the airline", "someone", "they"
_AGENT = r"^(?:(?:the |a |some |user's )?[\w'-]+(?: [\w'-]+)? )?"
# "the airline moved user's flight to june 4": someone else moved the user's event
AGENT_MOVED = _rx(
    _AGENT + r"(?=(?:moved|rescheduled|postponed|pushed back|pushed|delayed|changed|shifted|bumped|put off) user's )"
)
# "someone stole user's road bike": something of the user's gone, taken or wrecked by someone else
TAKEN = _rx(
    _AGENT + r"(?:stole|nicked|took|wrecked|totall?ed|crashed|destroyed) "
    r"(?P<v>user's (?:[\w'-]+ ){0,3}?[\w'-]+)(?= from| at| in| outside| on| while| last| this|,|$)"
)
# "they made user store manager", "the board promoted user to head of sales": a new job given by someone else
PROMOTED = _rx(
    _AGENT + r"(?:made|promoted|appointed|named) user (?:to |as )?(?:a |an |the )?"
    rf"(?P<v>(?:[\w'-]+ ){{0,2}}(?:{OCCUPATION}|head|lead|director|chief|supervisor|partner)\b.*)"
)
# "the movers dropped the boxes at user's new place in chicago": a move told by what happened at the new home
NEW_HOME = _rx(r"\buser's new (?:place|home|house|flat|apartment|condo|digs) (?:is )?in (?P<v>[\w' -]+)")
# "textbooks do not do it for user anymore": the subject is what the user no longer likes
NOT_FOR_USER = _rx(r"^(?P<v>.+?) (?:just |really )?(?:does|do) not (?:do it|work|cut it|stick) for user(?![\w'])")
# "we had to say goodbye to biscuit at the vet": a pet or person, named in one word, gone
GOODBYE = _rx(
    r"^(?:had to )?(?:say|said) goodbye to (?P<v>[a-z][\w-]*)(?=$|,| at | this | last | yesterday| today| on )"
)
# "berlin is off the table this year": a plan that is not happening
OFF_TABLE = _rx(
    r"(?:^|, |so |and )(?P<v>(?:[\w'-]+ ){0,3}?[\w'-]+) (?:is|are) (?:off the table|not happening|a no-go)\b"
)
# "user has realized video tutorials do not stick …": what was realized is a clause of its own
REALIZED = _rx(r"^user (?:has |have )?(?:just |finally )?(?:realized|realised|noticed|figured out) (?:that )?(?=\w)")
# "has not set foot in a gym since january": something not done since a time (an ending, not a plain "not")
NOT_SINCE = _rx(
    r"^has not (?:set foot in|touched|had|been to|used|played|opened|smoked|eaten|drunk) "
    r"(?:a |an |the |user's |any )?(?P<v>.+?) (?:since|for (?:weeks|months|years|ages))\b"
)
# "wrist is fully healed": a condition that ended (said of the body part; the adverb keeps "is healed" out)
HEALED = _rx(
    r"(?:^|, |and |\s(?=user's ))(?:user's )?(?P<v>[a-z][\w-]*) (?:is|are) (?:now )?(?:fully|completely|totally|all) "
    r"(?:healed|recovered|better)\b"
)
# "booked mexico city for april instead": a switch whose origin is the memory it replaces
INSTEAD_END = _rx(r"^(?P<v>.+?),? instead$")
# "finally got rid of the civic": a clause whose subject ("I") was left out, as chat often does
ELIDED = _rx(
    r"^(?:just |finally |recently |already |officially )?(?=(?:got rid of|sold|quit|left|moved|started|stopped|"
    r"gave up|switched|cancell?ed|finished|broke up|transferred|retired|resigned|deleted|joined|bought|adopted|"
    r"ditched|dropped|traded|swapped|ran|completed)\b)"
)
# "wants to run a half marathon": a goal, reached when its verb comes back in the past ("ran a half marathon")
GOAL = _rx(
    r"^user (?:wants|plans|hopes|intends|aims|would like|is planning|is hoping|is aiming|has a goal) to "
    r"(?P<verb>[a-z]+) (?P<obj>.+)"
)
#: Past forms that are not "-ed" (for :data:`GOAL`: "wants to run" is reached by "ran").
IRREGULAR_PAST = {
    "run": "ran",
    "go": "went",
    "buy": "bought",
    "see": "saw",
    "take": "took",
    "get": "got",
    "write": "wrote",
    "make": "made",
    "do": "did",
    "read": "read",
    "swim": "swam",
    "build": "built",
    "find": "found",
    "fly": "flew",
    "ride": "rode",
    "win": "won",
    "meet": "met",
    "pay": "paid",
    "sell": "sold",
    "leave": "left",
    "learn": "learnt|learned",
    "begin": "began",
    "become": "became",
    "hold": "held",
    "give": "gave",
    "sing": "sang",
    "teach": "taught",
}


def past(verb: str) -> str:
    """The past form(s) of ``verb`` as a regular-expression alternation ("run" → "ran", "visit" → "visited")."""
    if verb in IRREGULAR_PAST:
        return IRREGULAR_PAST[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


# "user's daughter was born": the child as subject ends the user's pregnancy (frames.py)
BORN = _rx(r"\b(?:was|were) born\b")
TRADE = _rx(r"^(?:traded|swapped|exchanged|replaced)(?: in)? (?P<from>.+?) (?:for|with) (?P<v>.+)")
