"""Text for language models: a built-in corpus our own code writes, and a reader for a user's file.

`builtin_corpus()` is English prose from a small story grammar with state: chapters that each follow one
day in order (dawn, morning, noon... night), paragraphs in which a townsperson goes somewhere, meets a
friend, asks a question and gets an answer, and does something with a thing; the friend of one paragraph
is the one who sets off in the next. It is generated offline from a fixed seed, so every machine trains
on the same text, and it stays learnable in a few hundred steps.

Why the state: a model that reads this text has to look back to continue it well. An answer repeats
what its question named ("Have you seen the map?" - "I left the map at the library"), the reply comes from
the other person in the scene, pronouns agree with the name they stand for and the day moves forward.
That context is what gives attention something to learn (heads that copy from earlier in the paragraph
need a previous-token head to find where to copy from), and it keeps greedy decoding from a trained toy
moving on rather than repeating the single likeliest sentence.
"""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path

CORPUS_SEED = 2017
MIN_CHARS = 320_000

# fmt: off
# (name, subject pronoun, object pronoun, possessive)
CAST = [
    ("Anna", "she", "her", "her"), ("Tom", "he", "him", "his"), ("Maya", "she", "her", "her"),
    ("Oliver", "he", "him", "his"), ("Lena", "she", "her", "her"), ("Samuel", "he", "him", "his"),
    ("Clara", "she", "her", "her"), ("Felix", "he", "him", "his"), ("Rosa", "she", "her", "her"),
    ("Jonas", "he", "him", "his"), ("Nora", "she", "her", "her"), ("Peter", "he", "him", "his"),
    ("Mrs. Hale", "she", "her", "her"), ("Mr. Brown", "he", "him", "his"), ("the old baker", "he", "him", "his"),
    ("the captain", "she", "her", "her"),
]
PLACES = [
    "the market", "the harbour", "the old mill", "the library", "the garden", "the station", "the forest",
    "the bridge", "the kitchen", "the hill above the town", "the river", "the lighthouse", "the school",
    "the church", "the bakery", "the square", "the orchard", "the post office", "the beach", "the farm",
    "the museum", "the hospital", "the theatre", "the village hall",
]
THINGS = [
    "a letter", "a lantern", "an apple", "a blue umbrella", "a map", "a small key", "a basket of bread",
    "a book", "a wooden box", "a bottle of milk", "a red scarf", "a violin", "a compass", "a jar of honey",
    "an old photograph", "a pair of boots", "a bunch of flowers", "a silver coin", "a kite", "a newspaper",
    "a fishing net", "a warm blanket", "a green hat", "a clock", "a pencil", "a bag of apples",
]
# One day in order; a chapter keeps a subset of these, still in order.
DAY = [
    "At dawn", "Early in the morning", "In the morning", "Before noon", "At noon", "After lunch",
    "In the afternoon", "Late in the afternoon", "In the evening", "Late in the evening", "That night",
]
MOVES = ["walked to", "ran to", "hurried to", "went back to", "wandered down to", "cycled to", "climbed up to",
         "drove to"]
ADVERBS = ["quietly", "slowly", "quickly", "carefully", "happily", "nervously", "suddenly", "gently"]
FEELINGS = ["happy", "tired", "worried", "curious", "cold", "hungry", "proud", "surprised", "calm", "sad",
            "excited", "angry"]
WEATHER = [
    "The sky was grey and the wind was cold.", "The sun was warm on the stones.",
    "It had started to rain again.", "A thin fog lay over the water.", "The air smelled of salt and smoke.",
    "Snow was falling softly on the roofs.", "The streets were wet and empty.",
    "Birds were singing in the trees.", "The clouds hung low over the hills.",
]
STANDING = ["quietly", "patiently", "alone", "in the shade", "with a smile"]
ERRANDS = ["buy some bread", "post a letter", "meet a friend", "look for {the_thing}", "return {the_thing}",
           "see the doctor", "watch the boats", "find {other}"]
REASONS = ["I lost {the_thing}", "the train is late again", "{other} did not write to me", "it has rained all week",
           "nobody came to {place2}", "I found {the_thing} at last", "{other} is coming home tomorrow"]
# (question, answer): the answer repeats what the question names, so a reader has to look back to say it.
EXCHANGES = [
    ("Have you seen {the_thing}?", "I left {the_thing} at {place2}"),
    ("Where is {other}?", "{other} is waiting at {place2}"),
    ("Are you going to {place2}?", "Yes, I am going to {place2} to {errand}"),
    ("Why are you so {feeling}?", "I am {feeling} because {reason}"),
    ("What did you bring for {other}?", "I brought {thing} for {other}"),
    ("Who told you about {place2}?", "{other} told me about {place2}"),
    ("Can you carry {the_thing} for me?", "I can carry {the_thing} as far as {place2}"),
    ("When will {other} come back?", "{other} will come back after {errand_time}"),
]
ERRAND_TIMES = ["dinner", "the storm", "the holidays", "the market closes", "the last train"]
ASK = ["asked", "whispered", "called"]
REPLY = ["answered", "replied", "said"]
# fmt: on

@lru_cache(maxsize=1)
def builtin_corpus() -> str:
    """About 330k characters of generated English prose, identical on every call and every machine."""
    rng = random.Random(CORPUS_SEED)
    chapters: list[str] = []
    length = 0
    while length < MIN_CHARS:
        chapter = _chapter(rng, len(chapters) + 1)
        chapters.append(chapter)
        length += len(chapter) + 2
    return "\n\n".join(chapters) + "\n"


def read_text(path: str | Path) -> str:
    """A user's UTF-8 text file, newlines normalised to \\n and a leading BOM dropped."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"data: {path} does not exist")
    if path.is_dir():
        raise ValueError(f"data: {path} is a directory, not a text file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"data: {path} is not UTF-8 text (bad byte at offset {exc.start})") from None
    if not text.strip():
        raise ValueError(f"data: {path} is empty")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _chapter(rng: random.Random, number: int) -> str:
    """One day: paragraphs at times in order, each started by the previous paragraph's friend."""
    times = sorted(rng.sample(range(len(DAY)), rng.randint(5, 8)))
    hero = rng.choice(CAST)
    paragraphs = [f"Chapter {number}"]
    for t in times:
        friend = rng.choice([c for c in CAST if c is not hero])
        paragraphs.append(_paragraph(rng, DAY[t], hero, friend))
        hero = friend
    return "\n\n".join(paragraphs)


def _paragraph(rng: random.Random, time: str, hero: tuple, friend: tuple) -> str:
    place, thing = rng.choice(PLACES), rng.choice(THINGS)
    sentences = [f"{time}, {hero[0]} {rng.choice(MOVES)} {place}."]
    if rng.random() < 0.5:
        sentences.append(rng.choice(WEATHER))
    sentences.append(_meeting(rng, hero, friend, place))
    sentences += _exchange(rng, hero, friend, thing, place)
    sentences.append(_action(rng, hero, friend, thing))
    if rng.random() < 0.5:
        sentences.append(_ending(rng, hero, place, evening=DAY.index(time) >= DAY.index("In the evening")))
    return " ".join(_capitalise(s) for s in sentences)


def _meeting(rng: random.Random, hero: tuple, friend: tuple, place: str) -> str:
    options = [
        f"There {hero[1]} met {friend[0]}, who was {rng.choice(FEELINGS)}.",
        f"{friend[0]} was already there, standing {rng.choice(STANDING)} by the door.",
        f"{friend[0]} waved when {friend[1]} saw {hero[2]}.",
        f"{hero[1]} found {friend[0]} sitting on the steps of {place}.",
    ]
    return rng.choice(options)


def _exchange(rng: random.Random, hero: tuple, friend: tuple, thing: str, place: str) -> list[str]:
    """A question from one of the two and the other's answer, which repeats what the question named."""
    asker, answerer = (hero, friend) if rng.random() < 0.5 else (friend, hero)
    other = rng.choice([c for c in CAST if c is not hero and c is not friend])[0]
    fill = {"thing": thing, "the_thing": _definite(thing), "other": other, "feeling": rng.choice(FEELINGS),
            "place2": rng.choice([p for p in PLACES if p != place]), "errand_time": rng.choice(ERRAND_TIMES)}
    fill["errand"] = rng.choice(ERRANDS).format(**fill)
    fill["reason"] = rng.choice(REASONS).format(**fill)
    question, answer = (part.format(**fill) for part in rng.choice(EXCHANGES))
    return [f'"{_capitalise(question)}" {rng.choice(ASK)} {asker[0]}.',
            f'"{_capitalise(answer)}," {rng.choice(REPLY)} {answerer[0]}.']


def _action(rng: random.Random, hero: tuple, friend: tuple, thing: str) -> str:
    the_thing = _definite(thing)
    options = [
        f"{hero[0]} {rng.choice(ADVERBS)} gave {the_thing} to {friend[0]}.",
        f"{friend[0]} put {the_thing} in {friend[3]} bag, and they walked on together.",
        f"{friend[0]} showed {hero[2]} {thing}, and they both laughed.",
        f"They carried {the_thing} all the way back to {rng.choice(PLACES)}.",
        f"{hero[0]} thanked {friend[2]} and {rng.choice(ADVERBS)} took {the_thing} home.",
        f"Because it was late, {friend[0]} kept {the_thing} until the morning.",
    ]
    return rng.choice(options)


def _ending(rng: random.Random, hero: tuple, place: str, evening: bool) -> str:
    options = [
        f"When {hero[1]} finally went home, {hero[1]} felt {rng.choice(FEELINGS)}.",
        f"Later {hero[1]} would remember that day at {place} for a long time.",
        "Nobody spoke about it again.",
    ]
    if evening:
        options.append("Then the lights of the town came on, one by one.")
    return rng.choice(options)


def _definite(thing: str) -> str:
    """'a map' -> 'the map', 'an apple' -> 'the apple'."""
    return "the " + thing.split(" ", 1)[1]


def _capitalise(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]
