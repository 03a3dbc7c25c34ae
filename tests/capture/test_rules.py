import pytest

from memstack.capture.rewrite import strip_preamble, third_person
from memstack.capture.rules import might_disclose, screen, statements
from memstack.types import Category


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("I'm a sophomore at UCLA.", Category.FACT),
        ("I prefer short explanations.", Category.PREFERENCE),
        ("I want to ace my physics final.", Category.GOAL),
        ("Visual explanations help me understand.", Category.LEARNINGSTYLE),
        ("Honestly, I can't stand horror movies.", Category.PREFERENCE),
        ("My sister is a lawyer in Boston.", Category.FACT),
    ],
)
def test_self_disclosure_is_kept_with_its_category(message: str, category: Category) -> None:
    (clause,) = screen(message)
    assert clause.category is category and clause.strength >= 0.7 and not clause.explicit


@pytest.mark.parametrize(
    "message",
    [
        "Can you explain how photosynthesis works?",
        "Write me a poem about the sea",
        "Please summarize this article for me.",
        "Hi there!",
        "Thanks so much!",
        "What's your name?",
        "Are you able to browse the web?",
        "Do you remember what I said?",
        "I'm so tired right now.",
        "I'm looking at this question and I'm stuck.",
        "I need you to fix my code.",
        "How do I center a div?",
        "I agree, that makes sense.",
        "I'm so happy for you!",
        "The mitochondria is the powerhouse of the cell.",
    ],
)
def test_questions_tasks_greetings_and_passing_states_are_dropped(message: str) -> None:
    assert screen(message) == []


def test_the_fast_path_needs_no_first_person_word() -> None:
    assert not might_disclose("What caused the French revolution?")
    # a task may look like a standing instruction to the fast path; the screen keeps nothing of it
    assert screen("Explain the French revolution in three bullet points.") == []
    assert might_disclose("My exam is on Friday")
    assert might_disclose("remember: the wifi password is on the fridge")


def test_explicit_requests_to_remember() -> None:
    (clause,) = screen("Please remember that I'm allergic to peanuts.")
    assert clause.explicit and clause.text == "I'm allergic to peanuts." and clause.category is Category.PREFERENCE
    (clause,) = screen("Don't forget my daughter's name is Ada")
    assert clause.explicit and clause.text.startswith("my daughter's name")


def test_only_the_disclosing_sentence_of_a_mixed_message_is_kept() -> None:
    clauses = screen("Hey! I just adopted a puppy named Biscuit. Any tips for house training? Thanks!")
    assert [c.text for c in clauses] == ["I just adopted a puppy named Biscuit."]


def test_a_bare_answer_to_a_question_about_the_user_is_considered() -> None:
    recent = (("assistant", "Nice photo! How long have you been married?"),)
    (clause,) = screen("5 years already!", recent)
    assert clause.reply_to == "How long have you been married?"
    assert screen("5 years already!") == []


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I'm a sophomore at UCLA", "User is a sophomore at UCLA"),
        ("My quiz is on Friday", "User's quiz is on Friday"),
        ("Visual explanations help me", "Visual explanations help User"),
        ("I really love hiking with my dog", "User really loves hiking with User's dog"),
        ("I study biology", "User studies biology"),
        ("I've been painting for years", "User has been painting for years"),
        ("I don't like spicy food", "User doesn't like spicy food"),
        ("I went to Rome", "User went to Rome"),
        ("We're moving to Lisbon", "User and others are moving to Lisbon"),
        ("I officially retired in May", "User officially retired in May"),  # any "-ly" adverb, not a verb
        ("I rarely drink coffee", "User rarely drinks coffee"),
        ("I apply for jobs daily", "User applies for jobs daily"),
        # a pronoun joined by a hyphen is part of a name or compound; a verb's prefix waits for its verb
        ("The CBT-I program worked", "The CBT-I program worked"),
        ("I take I-95 to work", "User takes I-95 to work"),
        ("I co-own a bakery", "User co-owns a bakery"),
        ("I re-did the deck", "User re-did the deck"),
    ],
)
def test_rewrite_is_about_user(sentence: str, expected: str) -> None:
    assert third_person(sentence) == expected


def test_preamble_is_stripped_but_names_in_sentences_stay() -> None:
    assert strip_preamble("Yeah, Mel! I love it.") == "I love it."
    assert strip_preamble("Oh well, Paris was lovely.") == "Paris was lovely."


@pytest.mark.parametrize(
    "message",
    [
        "Finally give me a checklist of the mechanisms to review before the exam.",
        "Finally, give me a checklist for my exam week.",
        "Lastly, send me a summary of my goals.",
        "Then walk me through my study plan for the week.",
        "Also make me a quiz on my weak topics.",
        "Now put together a schedule for my week.",
        "Next, remind me what my midterm covers.",
        "I need a checklist for my organic chemistry midterm.",
        "I'd like a summary of my notes from today.",
        "I'd love to see an example of my essay rewritten.",
        "I'd love to hear some tips.",
    ],
)
def test_requests_after_a_lead_in_or_for_a_deliverable_are_dropped(message: str) -> None:
    assert screen(message) == []


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("I'm vegetarian, by the way.", "I'm vegetarian"),
        ("I'm vegetarian btw", "I'm vegetarian"),
        ("My sister is a nurse, just so you know.", "My sister is a nurse"),
        ("I live in Lisbon lol", "I live in Lisbon"),
        ("Just so you know, I work night shifts.", "I work night shifts."),
        ("Finally, I got the job at the hospital!", "I got the job at the hospital!"),
        ("Now that I'm retired, I garden every day.", "Now that I'm retired, I garden every day."),
        ("I need a new laptop for my design work.", "I need a new laptop for my design work."),
        ("Review sessions help me learn.", "Review sessions help me learn."),
        ("Plus I give piano lessons on weekends.", "Plus I give piano lessons on weekends."),
    ],
)
def test_filler_and_lead_ins_are_not_part_of_the_fact(message: str, kept: str) -> None:
    (clause,) = screen(message)
    assert clause.text == kept


@pytest.mark.parametrize(
    "sentence",
    [
        "Did my first ever pull-up today, full dead hang",
        "Had to cancel my massage on Thursday, work emergency",
        "Can't stand horror films anymore",
        "Was promoted to team lead last week",
    ],
)
def test_an_auxiliary_not_followed_by_its_subject_starts_a_statement(sentence: str) -> None:
    assert statements(sentence) == [sentence]


@pytest.mark.parametrize(
    "sentence", ["Is it normal to feel this tired after a run", "did you see the game", "where do you live"]
)
def test_a_question_without_its_question_mark_is_still_a_question(sentence: str) -> None:
    assert statements(sentence) == []


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("also pregnant, due in may", "pregnant, due in may"),
        ("btw diabetic, so no sugar pls", "diabetic, so no sugar pls"),
        ("oh newly vegan, since last month", "newly vegan, since last month"),
        ("anyway retired, moved to the coast in june", "retired, moved to the coast in june"),
        # a capitalised name after a lead-in is someone addressed, and goes with it
        ("Yeah, Mel, I moved to Porto", "I moved to Porto"),
        ("hey Sam, my flight is tomorrow", "my flight is tomorrow"),
    ],
)
def test_a_word_after_a_lead_in_is_not_taken_for_a_name_addressed(message: str, kept: str) -> None:
    assert strip_preamble(message) == kept


@pytest.mark.parametrize(
    "message",
    [
        "also pregnant, due in may",
        "btw expecting twins, due in march",
        "fyi diabetic since the 3rd",
        "oh and vegetarian, starting next week",
        "btw allergic to penicillin, found out yesterday",
    ],
)
def test_a_self_description_before_its_date_keeps_whose_it_is(message: str) -> None:
    """The date fragment is not kept alone ("User said: due in May"): the description before it is the user's."""
    (clause,) = screen(message)
    assert not clause.said
    assert clause.text.startswith("I'm ")


@pytest.mark.parametrize(
    ("message", "word"),
    [
        ("celiac fyi", "celiac"),
        ("vegan btw", "vegan"),
        ("btw vegetarian", "vegetarian"),
        ("also left-handed", "left-handed"),
        ("oh and diabetic lol", "diabetic"),
        ("just so you know, colorblind", "colorblind"),
    ],
)
def test_one_word_after_a_discourse_marker_is_read_for_its_meaning(message: str, word: str) -> None:
    refused: list[str] = []
    screen(message, refused=refused)
    assert refused == [word]


@pytest.mark.parametrize("message", ["celiac", "vegan", "thanks", "nope", "whatever", "lol", "ok"])
def test_one_word_without_a_marker_is_not(message: str) -> None:
    refused: list[str] = []
    screen(message, refused=refused)
    assert refused == []


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        # an emoji ends a sentence as a full stop would: the question after it is a question, the fact a fact
        ("I've been vegan for a decade 🌱 any good tofu recipes?", "I've been vegan for a decade"),
        ("I'm a night owl 🦉 what's a good time to study?", "I'm a night owl"),
        # an ellipsis written as one character after a word ends a sentence too
        ("I've only been running for 3 weeks… is a 10k realistic?", "I've only been running for 3 weeks"),
    ],
)
def test_a_fact_before_a_question_is_its_own_sentence(message: str, kept: str) -> None:
    assert [c.text for c in screen(message)] == [kept]


def test_an_emoji_followed_by_a_word_that_carries_the_sentence_on_does_not_end_it() -> None:
    assert statements("I love my new flat 😍 and so does my cat") == ["I love my new flat 😍 and so does my cat"]


@pytest.mark.parametrize(
    ("sentence", "stripped"),
    [
        ("I drive a 2015 Golf if that matters.", "I drive a 2015 Golf"),
        ("I work four days a week, in case it helps", "I work four days a week"),
        ("type 2 diabetic, if that's relevant", "type 2 diabetic"),
        ("I'm a nurse, for context", "I'm a nurse"),
        # the hedge is the object of the words before it: a question, kept whole
        ("I wonder if that matters", "I wonder if that matters"),
        ("not sure if it helps", "not sure if it helps"),
    ],
)
def test_a_hedge_on_relevance_at_the_end_is_not_part_of_the_fact(sentence: str, stripped: str) -> None:
    assert strip_preamble(sentence) == stripped
