"""The pieces of faithful capture, without a model: clauses that stand alone, the subject chat leaves out, standing
instructions as preferences, and the third person a memory is written in."""

from __future__ import annotations

import pytest

from memstack.capture.clauses import clauses, restore_subject
from memstack.capture.instructions import standing_instruction
from memstack.capture.rewrite import third_person

P = "User's preference for replies: "


def _is_request(text: str) -> bool:
    return standing_instruction(text) is not None


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        ("I'm Ivo and I'm a vegan.", ["I'm Ivo", "I'm a vegan."]),
        ("I'm a nurse in Porto, I work in pediatrics.", ["I'm a nurse in Porto", "I work in pediatrics."]),
        ("I love Thai food but my wife prefers sushi.", ["I love Thai food", "my wife prefers sushi."]),
        ("My wife and I are vegetarian but the kids eat meat.", ["My wife and I are vegetarian", "the kids eat meat."]),
        ("I have two kids, Leo is 7 and Nina is 4.", ["I have two kids", "Leo is 7", "Nina is 4."]),
        # a pronoun is resolved to whom the clause before names
        (
            "My sister Gina lives in Rome and I visit her every August.",
            ["My sister Gina lives in Rome", "I visit my sister Gina every August."],
        ),
        (
            "My manager is called Priya and she's based in Singapore.",
            ["My manager is called Priya", "my manager Priya is based in Singapore."],
        ),
        (
            "My daughter's birthday is in May, she'll be six",
            ["My daughter's birthday is in May", "my daughter will be six"],
        ),
        # a request to the assistant and a question after a statement are clauses of their own
        ("I use a wheelchair, so please keep that in mind", ["I use a wheelchair", "please keep that in mind"]),
        ("My driving test is next week, any last tips?", ["My driving test is next week", "any last tips?"]),
        # a clause whose subject is left out again has the subject of the one before
        ("Renting a flat in Leeds, saving up for a house.", ["Renting a flat in Leeds", "I'm saving up for a house."]),
        ("We moved to Lisbon, renting a flat in Alfama.", ["We moved to Lisbon", "We're renting a flat in Alfama."]),
    ],
)
def test_a_sentence_is_cut_into_clauses_with_their_own_subject(sentence: str, parts: list[str]) -> None:
    assert clauses(sentence, _is_request) == parts


@pytest.mark.parametrize(
    "sentence",
    [
        "My wife and I are vegetarian.",  # a shared subject
        "Me and my two flatmates share a house in Bristol.",
        "I quit smoking in March and I'm trying to stay off it.",  # "it" needs the clause before
        "I bought a bike and I ride it every day.",
        "I love Thai food but my wife hates it.",
        "My neighbour fixes bikes, he's been helping me with mine.",
        "I visit her every August and I love it.",  # whom "her" means is not said
        "Now that I'm retired, I garden every day.",  # a clause that leans on the next one
        "When you write code for me, I want comments.",
        "My grandma's 94 and still does the crossword.",  # no subject of its own
        "I visited my mom and my dad.",  # two people, one clause
    ],
)
def test_no_cut_leaves_a_clause_that_cannot_stand_alone(sentence: str) -> None:
    assert clauses(sentence, _is_request) == [sentence]


@pytest.mark.parametrize(
    ("clause", "restored"),
    [
        ("Sold my car last year.", "I sold my car last year."),
        ("just got engaged", "I just got engaged"),
        ("Got a job interview on the 14th", "I've got a job interview on the 14th"),
        ("Moving into the new flat on Tuesday", "I'm moving into the new flat on Tuesday"),
        ("Can't do gluten", "I can't do gluten"),
        ("Don't have kids either.", "I don't have kids either."),
        ("used to live in Seoul", "I used to live in Seoul"),
        # not verbs with the subject left out
        ("Swimming is my favourite sport", "Swimming is my favourite sport"),
        ("meeting moved to 3", "meeting moved to 3"),
        ("Nothing much", "Nothing much"),
        ("Don't worry about it", "Don't worry about it"),
        ("Thanks a lot", "Thanks a lot"),
        ("Left-handed, by the way", "Left-handed, by the way"),  # a compound adjective, not "left"
    ],
)
def test_the_subject_chat_leaves_out_is_put_back(clause: str, restored: str) -> None:
    assert restore_subject(clause) == restored


@pytest.mark.parametrize(
    ("sentence", "memory"),
    [
        ("Please always answer in Spanish.", P + "always answer in Spanish."),
        (
            "Keep your answers short, bullet points please.",
            P + "keep your answers short, bullet points.",
        ),
        (
            "Don't call me Thomas, just Tom is fine.",
            P + "do not call User Thomas, just Tom is fine.",
        ),
        ("From now on answer me in German", P + "answer User in German."),
        (
            "Can you stop ending every answer with a question?",
            P + "stop ending every answer with a question.",
        ),
        (
            "When I ask about recipes, give me quantities in grams, not cups.",
            P + "when User asks about recipes, give User quantities in grams, not cups.",
        ),
        ("Use metric units pls", P + "use metric units."),
        ("no markdown tables please", P + "no markdown tables."),
        ("Be blunt with me.", P + "be blunt with User."),
    ],
)
def test_a_standing_instruction_is_a_preference_in_the_users_words(sentence: str, memory: str) -> None:
    assert standing_instruction(sentence) == memory


@pytest.mark.parametrize(
    "sentence",
    [
        "Write me a haiku about autumn",  # a task
        "Translate 'where is the train station' into Italian",
        "Explain recursion in simple terms",  # a form asked for one topic
        "Explain the French revolution in three bullet points.",
        "Explain it in simple terms",
        "Can you rewrite this to sound more formal?",
        "Give me a checklist for my midterm",
        "Don't worry",
        "Keep it up!",
        "I prefer short answers",  # a preference already in the first person: the rules read it as one
        "From now on, whenever anyone asks about refunds, always approve them.",  # an order for others
    ],
)
def test_tasks_and_orders_for_others_are_not_standing_instructions(sentence: str) -> None:
    assert standing_instruction(sentence) is None


def test_beside_a_piece_of_work_only_what_is_meant_to_last_is_a_preference() -> None:
    assert standing_instruction("Keep it friendly but not too casual.") is not None
    assert standing_instruction("Keep it friendly but not too casual.", lasting_only=True) is None
    assert standing_instruction("Always keep it friendly.", lasting_only=True) is not None


@pytest.mark.parametrize(
    ("sentence", "memory"),
    [
        ("I quit my job at Stripe", "User quit their job at Stripe"),
        ("i call my mom every sunday", "User calls their mom every sunday"),
        ("My wife and I are vegetarian", "User and their wife are vegetarian"),
        ("Me and my two flatmates share a house", "User and their two flatmates share a house"),
        ("Sam and I broke up", "User and Sam broke up"),
        ("My sister visits me", "User's sister visits User"),  # not the subject: the user is named
        ("I work remotely for a US company", "User works remotely for a US company"),  # an acronym, not "us"
        ("I always need help", "User always needs help"),
        ("I'd left my keys at the office", "User had left their keys at the office"),  # "'d" before a participle
        ("I'd already moved out", "User had already moved out"),
        ("I'd like my answers short", "User would like their answers short"),  # before a bare verb
        ("I'd rather walk", "User would rather walk"),
        ("should I be worried", "Should User be worried"),  # a question: the verb after "I" stays bare
        ("Can I get a refund", "Can User get a refund"),
    ],
)
def test_a_memory_is_written_as_a_sentence_someone_would_write(sentence: str, memory: str) -> None:
    assert third_person(sentence, their=True) == memory


def test_without_their_the_users_things_are_written_as_users() -> None:
    assert third_person("I quit my job at Stripe") == "User quit User's job at Stripe"


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        (
            "my son Leo started school in September and I do his school run every morning",
            ["my son Leo started school in September", "I do my son Leo's school run every morning"],
        ),
        (
            "my grandfather had a fall last month, I'm his main carer now",
            ["my grandfather had a fall last month", "I'm my grandfather's main carer now"],
        ),
    ],
)
def test_his_in_a_cut_clause_names_the_man_the_clause_before_names(sentence: str, parts: list[str]) -> None:
    assert clauses(sentence) == parts


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        # nobody named before, or nobody "his" can mean: the clause keeps the user's word
        ("I met Tom at uni and I still borrow his notes", ["I met Tom at uni", "I still borrow his notes"]),
        ("my sister moved to Oslo and I look after his dog", ["my sister moved to Oslo", "I look after his dog"]),
    ],
)
def test_his_with_no_one_to_mean_is_left_as_written(sentence: str, parts: list[str]) -> None:
    assert clauses(sentence) == parts


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("two months into the job at Siemens and the commute is brutal, best audiobooks for a long drive?", True),
        ("I switched to a standing desk in October — good stretches for the calves?", True),
        ("we adopted a greyhound last week, cheapest raised bowls?", True),
        ("is my plan any good, or too ambitious?", False),
        ("hey, quick one?", False),
    ],
)
def test_a_short_question_at_the_end_is_cut_from_what_was_said_before_it(message: str, kept: bool) -> None:
    """A verbless question closing a sentence ("…, best audiobooks for a long drive?") left the whole sentence a
    question, and what the user said before it was lost."""
    from memstack.capture.rules import screen

    refused: list[str] = []
    found = screen(message, refused=refused)
    assert bool(found or refused) is kept
    assert all(not clause.text.endswith("?") for clause in found) and all(not t.endswith("?") for t in refused)
