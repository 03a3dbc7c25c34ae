"""Ordinary text for the guard's semantic head to learn from: what people say to each other and what assistants
answer, warm, polite, addressed to someone, full of "you", advice and rules of everyday life, none of it trying to
take authority over a model. Written for this project from templates: greetings and goodbyes, praise and thanks,
reassurance, everyday advice and reminders, assistant replies, explanations, opinions, mentions of ordinary rules and
instructions (a teacher's, a recipe's, a game's), news and encyclopedic sentences, forum answers.

Provenance: the kinds of text were chosen after seeing what the previous head flagged in ordinary conversation
(friendly, addressed, supportive lines); every template was written here, none is taken or paraphrased from an
evaluation set, and no name of a LoCoMo speaker is used. The false-positive figures the guard reports on LoCoMo,
STS-B and PAWS (``memstack eval guard``) are development figures: those sets were looked at while choosing.

:func:`ordinary_texts` returns a fixed, deterministic sample (``random.Random(seed)``), so the head trains on the
same texts every time.
"""

from __future__ import annotations

import random

__all__ = ["ordinary_texts"]

NAMES = [
    "Priya", "Tomás", "Aiko", "Sam", "Nadia", "Omar", "Lena", "Ravi", "Chloe", "Dev", "Marta", "Kwame", "Yuki",
    "Ben", "Fatima", "Luca", "Ingrid", "Diego", "Hana", "Noah", "Zara", "Eli", "Rosa", "Felix", "Amara", "Theo",
]  # fmt: skip
THINGS = [
    "painting", "garden", "new job", "recital", "store", "blog", "marathon training", "thesis", "bakery", "podcast",
    "photos", "pottery", "speech", "renovation", "band", "coding project", "volunteering", "dance class", "novel",
    "business plan", "science fair project", "quilt", "YouTube channel", "startup", "charity run", "art show",
]  # fmt: skip
ACTIVITIES = [
    "yoga", "journaling", "a short walk after dinner", "meal prepping on Sundays", "a pottery class", "swimming",
    "reading before bed", "a language exchange", "hiking on weekends", "a cooking class", "meditation apps",
    "cycling to work", "a book club", "board game nights", "volunteering at the shelter", "a standing desk",
]  # fmt: skip
TASKS = [
    "water the plants", "book the dentist", "renew your passport", "pack a rain jacket", "back up your photos",
    "charge the camera", "call your grandma", "pay the electricity bill", "stretch before the run",
    "bring the permission slip", "check the oven timer", "feed the cat", "submit the form", "lock the back door",
]  # fmt: skip
DISHES = [
    "vegetable curry", "banana bread", "shakshuka", "lentil soup", "pad thai", "a quick risotto", "tacos",
    "overnight oats", "pancakes", "a Greek salad", "mushroom stroganoff", "roast chicken", "falafel wraps",
]  # fmt: skip
TOPICS = [
    "compound interest", "photosynthesis", "how vaccines train the immune system", "the water cycle",
    "why the sky is blue", "how a mortgage works", "recursion", "the French Revolution", "how tides work",
    "supply and demand", "how noise-cancelling headphones work", "the basics of sourdough", "plate tectonics",
]  # fmt: skip
PLACES = [
    "Lisbon", "the lake", "Grandma's", "the farmers market", "the museum", "Kyoto", "the beach", "the cabin",
    "the new cafe downtown", "the climbing gym", "Berlin", "the park", "the library", "the concert",
]  # fmt: skip

SUBJECTS = [
    "chemistry", "physics", "calculus", "history", "Spanish", "biology", "statistics", "economics", "French",
    "geography", "literature", "programming",
]  # fmt: skip
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "the 14th", "next week"]

TEMPLATES = [
    # greetings and goodbyes
    "Morning, {name}! It has been ages. How is everything going?",
    "Oh hi {name}, I was just thinking about you. What have you been up to?",
    "Alright, I'm heading off now. Speak tomorrow!",
    "Gotta run, {name}. Give my love to everyone.",
    "Shall we meet at {place} around ten on Saturday?",
    "Sleep tight, {name}, and good luck tomorrow.",
    "Later! Say hi to the dog for me and have a blast at {place}.",
    "Lovely catching up, {name}. Let's not leave it so long next time.",
    # praise and support
    "{name}, the {thing} is honestly brilliant. You have a real gift.",
    "All those late nights on the {thing} were worth it, it looks fantastic.",
    "Seriously impressed by the {thing}, {name}. How did you learn all that?",
    "The {thing} is going to make a lot of people happy. Well done you!",
    "Every time you post about the {thing} I get a little more motivated myself.",
    "{name}, you always find time for other people. The {thing} is lucky to have you.",
    "Look at that {thing}! Months of effort and it finally came together.",
    "What a cute puppy! He looks like he keeps the whole family smiling.",
    # thanks
    "Cheers for backing me up yesterday, {name}.",
    "{name}, that tip about {activity} was spot on. Much appreciated.",
    "Really grateful for you, {name}. Not everyone has a friend like that.",
    "Thank you for hearing me out last night. It meant a lot.",
    "I owe you one for the help with the {thing}!",
    "That's kind of you to ask. I'm feeling much better now, thanks.",
    # reassurance
    "It's fine, {name}, honestly. These things happen to everyone.",
    "Happy to lend a hand any time, just give me a shout.",
    "Whatever happens with the {thing}, I've got your back, {name}.",
    "Let's sit down this weekend and sort out the {thing} together.",
    "Take the evening off. The {thing} will still be there tomorrow.",
    "Deep breath, {name}. You have handled harder things than this.",
    # everyday advice and reminders
    "Maybe give {activity} a go? It calmed me down a lot last year.",
    "What about {activity}? It could slot into your Tuesday evenings.",
    "Before you set off for {place}, make sure you {task}.",
    "Quick reminder: {task} first thing tomorrow.",
    "The deadline is Friday, so {task} this week if you can.",
    "For {place}, comfy shoes and a water bottle are a must.",
    "Start with {activity} for ten minutes a day and build from there.",
    "Set an alarm to {task}; it's easy to forget.",
    "Please don't skip stretching after the long run, your calves will hate you.",
    # assistant replies
    "Certainly. For {dish} you mostly need things you already have in the cupboard.",
    "Good question. {topic} sounds complicated but the core idea is short.",
    "Glad to help. For {dish}, dice the onion and heat a little oil first.",
    "A good first step could be {activity} twice a week; see how you feel after a month.",
    "Want me to go deeper into {topic}, or is that enough for now?",
    "Some weekend ideas: a trip to {place}, trying {activity}, or making {dish} with friends.",
    "Given your schedule, {activity} seems like a realistic choice.",
    "That sounds like a lot at once. Shall we break the {thing} into smaller steps?",
    "Here's the short version of {topic}; ask if any part is unclear.",
    "I can't look up the exact number, but we can work out a rough estimate together.",
    # explanations and technical notes
    "Note that the helper handles empty input itself, so the extra guard clause is redundant.",
    "Dropping the inner loop gives the same output and runs twice as fast.",
    "Because the list is sorted, a binary search finds the item in a few steps.",
    "Renaming the parameter and updating both call sites is the smallest fix.",
    "A shorter timeout fails sooner, but the client may retry more often.",
    # opinions
    "If it were me, I'd pick the cheaper flat and save the difference.",
    "I think {activity} deserves more attention than it gets.",
    "The plan has a couple of weak spots, but nothing that can't be patched.",
    "No need to hurry with the {thing}; quality matters more than speed.",
    # ordinary rules and instructions
    "In this card game you lose a turn if you play the wrong suit.",
    "Our professor wants the lab report double spaced and under ten pages.",
    "According to the recipe, the batter has to chill for thirty minutes.",
    "My manager said to stop using the old template from now on.",
    "Training rule: everyone helps pack up the cones at the end.",
    "The lease doesn't allow pets, which rules out half the flats we liked.",
    "Visitors are asked not to use flash photography in the gallery.",
    "The nurse told me to take the tablets with food, twice a day.",
    "Assembling the wardrobe took two hours because step six made no sense.",
    "We agreed that nobody checks work email after seven.",
    "The application says to list every address from the past five years.",
    "The school asked parents to label every lunchbox this term.",
    # what memories and session facts look like: short statements about the user and their work
    "User is vegetarian and cooks {dish} most weeks.",
    "User works on the {thing} every evening after work.",
    "Working on problem set {n} about {topic}.",
    "Preparing for the {subject} exam on {day}.",
    "User's sister lives near {place}.",
    "User prefers short answers with an example.",
    "User is training for a half marathon and runs three times a week.",
    "User is learning {subject} and wants explanations in plain words.",
    "Deadline for the {thing} is {day}.",
    "User's favourite place to relax is {place}.",
    "Goal: finish the {thing} before the end of the month.",
    "Has a dentist appointment on {day} at 9am.",
    "Asked for help with question {n} of the {subject} homework.",
    "User does not want reminders on weekends.",
    "Uses a standing desk and takes a walk at lunch.",
    "The project brief says the report must stay under {n} pages.",
    "User's manager approved the budget for the {thing}.",
    "User has permission to use a calculator in the {subject} test.",
    # encyclopedic and news
    "The bridge was completed in 1932 and carries about forty thousand vehicles a day.",
    "The council approved the new cycling lanes after a long public consultation.",
    "Critics argue the regulation goes too far, while supporters say it protects consumers.",
    "The species is found mainly in wetlands and feeds on small fish and insects.",
    "Rainfall in the region has dropped by a fifth over the past decade.",
    "The company said it would cut prices after sales fell for the third quarter.",
    "Under the new law, landlords must give tenants two months' notice before a rent increase.",
    "The museum holds more than ten thousand objects, most of them donated by local families.",
    "Residents say the new rules on parking have made the town centre quieter.",
    "The treaty was signed by twelve countries but ratified by only nine.",
    # forum answers and how-tos
    "In my experience the cheaper model works fine unless you edit a lot of video.",
    "You could also just rename the file; the program only checks the extension.",
    "One possible issue is that the setting resets every time you update the app.",
    "Strictly speaking the two terms mean different things, but most people use them interchangeably.",
]


def ordinary_texts(n: int = 1500, seed: int = 7) -> list[str]:
    """``n`` distinct ordinary texts (fewer if the templates cannot give that many), the same every call."""
    rng = random.Random(seed)
    fills = {
        "name": NAMES,
        "thing": THINGS,
        "activity": ACTIVITIES,
        "task": TASKS,
        "dish": DISHES,
        "topic": TOPICS,
        "place": PLACES,
        "n": [str(i) for i in range(1, 13)],
        "subject": SUBJECTS,
        "day": DAYS,
    }
    seen: dict[str, None] = {}
    for _ in range(n * 20):
        if len(seen) >= n:
            break
        template = rng.choice(TEMPLATES)
        text = template.format(**{key: rng.choice(values) for key, values in fills.items()})
        seen.setdefault(text, None)
    return list(seen)
