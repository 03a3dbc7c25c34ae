"""What is said about the user but does not last (capture/passing.py), and the shorthand self-descriptions and
casual standing instructions that do: each family in several wordings, with hard negatives of the same form."""

import pytest

from memstack.capture.clauses import restore_be
from memstack.capture.instructions import standing_instruction
from memstack.capture.passing import passing_clause, passing_sentence
from memstack.capture.rules import screen


@pytest.mark.parametrize(
    "message",
    [
        # hypotheticals and musings
        "suppose I won the lottery tomorrow, what would you buy first?",
        "ok so let's say I moved to Norway, how bad are the winters",
        "if I were a cat I'd sleep all day honestly",
        "I'd open a bookshop if I had the savings",
        "I often wonder what it would be like to live on a boat. anyway, how do bilge pumps work",
        "in a parallel universe I'm a jazz drummer lol",
        # passing states
        "caught a nasty flu over the weekend, what helps with the aches?",
        "nursing a brutal hangover, send help",
        "so sleepy today, how do I get through a 3pm meeting",
        "I've got a splitting headache right now",
        # sarcasm
        "oh great, I just ADORE waking up at 5am on a sunday",
        "yeah right, I totally enjoy doing taxes on my birthday",
        "I just LOVE when my train is cancelled 🙃",
        # acquaintances' news
        "my colleague just got engaged to her girlfriend, what's a good card message?",
        "my neighbour is turning 80 next week, ideas for a small gift?",
        "my coworker's husband got laid off, how can I support her",
        "my classmate's cat had kittens yesterday!!",
        "my landlord apparently got married in Vegas",
    ],
)
def test_what_does_not_last_is_not_kept(message: str) -> None:
    assert screen(message, refused=[]) == []


@pytest.mark.parametrize(
    "message",
    [
        "my twin brother lives in Perth",
        "My flatmate Ola is coeliac so we keep a gluten-free shelf",
        "My best friend Sana just had a baby girl",
        "I have a cold plunge every morning",
        "I have chronic migraines",
        "I wonder less about money since I got the new job",
        "my manager Dev is based in Toronto",
        "I'd love to learn Portuguese before my trip",
        "so I just started a new job at a bakery!",
        "and my partner is from Quito",
    ],
)
def test_lasting_statements_of_the_same_form_are_kept(message: str) -> None:
    assert screen(message, refused=[]) != []


@pytest.mark.parametrize(
    ("sentence", "passing"),
    [
        ("say I quit my job, what then", True),
        ("imagine I had wings", True),
        ("I say what I think", False),
        ("oh sure, that went well", True),
        ("oh, I'm from Lyon", False),
    ],
)
def test_a_whole_sentence_can_be_hypothetical_or_sarcastic(sentence: str, passing: bool) -> None:
    assert passing_sentence(sentence) is passing


@pytest.mark.parametrize(
    ("clause", "passing"),
    [
        ("my friend's daughter won a scholarship", True),
        ("my friend's place is where I stay in Paris", False),
        ("my boss Lina got promoted", True),
        ("my boss Lina has been mentoring me since June", False),
        ("I've got a sore throat", True),
        ("I've got a sore knee from an old injury", False),
    ],
)
def test_a_clause_can_be_passing_or_someone_elses_news(clause: str, passing: bool) -> None:
    assert passing_clause(clause) is passing


@pytest.mark.parametrize(
    ("clause", "restored"),
    [
        ("peanut allergy here", "I have a peanut allergy"),
        ("gluten intolerance here, fyi", "I have a gluten intolerance, fyi"),
        ("dad of two here", "I'm a dad of two"),
        ("night owl here", "I'm a night owl"),
        ("cat person all the way", "I'm a cat person"),
        ("asthma here (mild)", "I have asthma (mild)"),
        ("type 2 diabetic", "I'm type 2 diabetic"),
        ("same here", None),
        ("new here", None),
        ("the keys here", None),
    ],
)
def test_a_shorthand_self_description_gets_its_verb(clause: str, restored: str | None) -> None:
    assert restore_be(clause) == restored


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        ("going forward weights in kilos please", "weights in kilos"),
        ("from now on distances in km", "distances in km"),
        ("no emojis in replies pls", "no emojis in replies"),
        ("no pork in any recipes please", "no pork in any recipes"),
    ],
)
def test_a_casual_standing_instruction_lasts_beside_a_task(sentence: str, kept: str) -> None:
    written = standing_instruction(sentence, lasting_only=True)
    assert written is not None and kept in written


@pytest.mark.parametrize("sentence", ["times in 24h format please", "no onions please", "no onions in this one pls"])
def test_a_form_for_the_work_at_hand_is_not_a_lasting_instruction(sentence: str) -> None:
    assert standing_instruction(sentence, lasting_only=True) is None


def test_pronouns_are_a_fact_about_the_user() -> None:
    (clause,) = screen("btw my pronouns are he/they", refused=[])
    assert clause.category is not None and clause.category.value == "fact"


@pytest.mark.parametrize(
    "message",
    [
        # a night's sleep, a body's reaction to what was just said
        "I'm running on four hours of sleep lol",
        "running on fumes today, need coffee",
        "my hands are sweating just reading that",
        "my stomach hurts just thinking about it",
        # an oath before a remark
        "I swear this town has more pigeons than people",
        # what the thing at hand is for
        "it's for a side character in the screenplay I'm writing",
        "this is for my cousin's birthday party",
        # an acquaintance away for a while
        "my colleague Ana is out this week because her son has measles",
        "my boss is off sick again",
    ],
)
def test_a_moment_an_oath_a_purpose_or_an_absence_is_not_kept(message: str) -> None:
    assert screen(message, refused=[]) == []


@pytest.mark.parametrize(
    "message",
    [
        "I run on coffee and spite",
        "my sister is away at uni in Leeds",
        "it's my birthday on Friday",
        "I've been thinking about it for years: I want to study law",
    ],
)
def test_lasting_statements_of_those_forms_are_kept(message: str) -> None:
    assert screen(message, refused=[]) != []


@pytest.mark.parametrize(
    "message",
    [
        # an overclaim with an eye-roll: the plan is the joke
        "yep I'm DEFINITELY doing my taxes this weekend, 100% 🙄 anyway what's a quick soup",
        "sure, I'll absolutely start flossing every night from now on 🙃",
        # a plan hedged both ways
        "might sign up for a pottery class in spring, or might not, who knows",
        "maybe I'll learn the cello next year idk",
        "could try intermittent fasting after christmas, we'll see",
        # a remedy for the ailment of the moment
        "took two aspirin for this migraine, can I have a coffee too?",
        "drinking ginger tea for a sore throat, does honey help",
        # what the user is for one day
        "I'm a total wreck this morning after the late shift",
        "im useless today, brain fog everywhere",
        "feeling human again tonight after that nap",
        # a question spelled without its apostrophe
        "whats the quickest way to descale a kettle",
        "hows compound interest actually calculated",
        # what is said of someone not named nor the user's
        "quick q: a guest coming saturday is gluten intolerant, any dessert ideas",
        "a coworker keeps microwaving fish at lunch, how do I bring it up politely",
        "someone in my building is learning the trumpet, send earplugs",
    ],
)
def test_more_of_what_does_not_last_is_not_kept(message: str) -> None:
    assert screen(message, refused=[]) == []


@pytest.mark.parametrize(
    "message",
    [
        "I'm absolutely going to run the Paris marathon in April, already registered",
        "I might move to Leeds next year for the job",
        "I take propranolol for migraines",
        "I'm a nurse on the night shift",
        "I'm vegetarian and my partner is vegan",
        "my friend Ana is gluten intolerant so I bake her special bread",
    ],
)
def test_lasting_statements_beside_those_forms_are_kept(message: str) -> None:
    assert screen(message, refused=[]) != []


def test_someone_with_the_user_is_the_users_news() -> None:
    assert screen("a friend and I started a running club on Sundays", refused=[]) != []
    assert screen("a colleague of mine and I are launching a podcast in March", refused=[]) != []
