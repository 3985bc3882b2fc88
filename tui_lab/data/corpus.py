"""Text for language models: a built-in corpus our own code writes, and a reader for a user's file.

`builtin_corpus()` is English prose from a small story grammar: a cast of townspeople who go to places,
meet each other, talk, carry things about and notice the weather, in chapters of paragraphs. It is
generated offline from a fixed seed, so every machine trains on the same text, and it is varied enough
(a few hundred words, free combinations, dialogue with quotes and questions) that a character model has
spelling, word order and punctuation to learn, while staying learnable in a few hundred steps.
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
    ("Jonas", "he", "him", "his"), ("the old baker", "he", "him", "his"), ("the captain", "she", "her", "her"),
    ("Mrs. Hale", "she", "her", "her"), ("the young doctor", "he", "him", "his"),
]
PLACES = [
    "the market", "the harbour", "the old mill", "the library", "the garden", "the station", "the forest",
    "the bridge", "the kitchen", "the hill above the town", "the river", "the lighthouse", "the school",
    "the church", "the bakery", "the square", "the orchard", "the post office", "the beach", "the farm",
]
THINGS = [
    "a letter", "a lantern", "an apple", "a blue umbrella", "a map", "a small key", "a basket of bread",
    "a book", "a wooden box", "a bottle of milk", "a red scarf", "a violin", "a compass", "a jar of honey",
    "an old photograph", "a pair of boots", "a loaf of bread", "a bunch of flowers", "a silver coin",
    "a kite", "a cup of tea", "a newspaper", "a fishing net", "a warm blanket",
]
TIMES = [
    "In the morning", "At noon", "Late in the evening", "On Sunday", "After the rain", "Before breakfast",
    "That night", "The next day", "Early on Monday", "In the afternoon", "At dawn", "A week later",
    "When the bells rang", "Just before dark",
]
MOVES = ["walked to", "ran to", "hurried to", "went back to", "wandered down to", "cycled to", "climbed up to"]
ADVERBS = ["quietly", "slowly", "quickly", "carefully", "happily", "nervously", "suddenly", "gently"]
FEELINGS = ["happy", "tired", "worried", "curious", "cold", "hungry", "proud", "surprised", "calm", "sad"]
WEATHER = [
    "The sky was grey and the wind was cold.", "The sun was warm on the stones.",
    "It had started to rain again.", "A thin fog lay over the water.", "The air smelled of salt and smoke.",
    "Snow was falling softly on the roofs.", "The streets were wet and empty.",
    "Birds were singing in the trees.", "The clouds hung low over the hills.",
]
SAY_TO = ["said", "whispered", "called", "explained"]  # "... said Anna to Tom."
REPLY = ["answered", "replied", "laughed", "sighed"]  # "... replied Anna."
STANDING = ["quietly", "patiently", "alone", "in the shade", "with a smile"]
QUESTIONS = [
    "Where is {thing}?", "Have you seen {name}?", "Are you going to {place}?", "Why are you so {feeling}?",
    "What time is it?", "Can you help me?", "Did you bring {thing}?", "Who left {thing} at {place}?",
]
STATEMENTS = [
    "I left {thing} at {place}.", "{name} is waiting at {place}.", "We should go home before it gets dark.",
    "I am too {feeling} to walk any further.", "The train will be late today.",
    "There is {thing} on the table.", "Nobody has been to {place} since spring.", "I think it will rain.",
    "Let us meet at {place} tomorrow.", "You look {feeling} today.",
]
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
    paragraphs = [f"Chapter {number}"]
    paragraphs += [_paragraph(rng) for _ in range(rng.randint(6, 12))]
    return "\n\n".join(paragraphs)


def _paragraph(rng: random.Random) -> str:
    hero, friend = rng.sample(CAST, 2)
    place, thing = rng.choice(PLACES), rng.choice(THINGS)
    sentences = [f"{rng.choice(TIMES)}, {hero[0]} {rng.choice(MOVES)} {place}."]
    if rng.random() < 0.6:
        sentences.append(rng.choice(WEATHER))
    sentences.append(_meeting(rng, hero, friend, place))
    for _ in range(rng.randint(1, 3)):
        sentences.append(_dialogue(rng, hero, friend))
    sentences.append(_action(rng, hero, friend, thing))
    if rng.random() < 0.5:
        sentences.append(_ending(rng, hero, place))
    return " ".join(_capitalise(s) for s in sentences)


def _meeting(rng: random.Random, hero: tuple, friend: tuple, place: str) -> str:
    options = [
        f"There {hero[1]} met {friend[0]}, who was {rng.choice(FEELINGS)}.",
        f"{friend[0]} was already there, standing {rng.choice(STANDING)} by the door.",
        f"{hero[1]} looked for {friend[0]}, but {friend[1]} was not at {place}.",
        f"{friend[0]} waved when {friend[1]} saw {hero[2]}.",
    ]
    return rng.choice(options)


def _dialogue(rng: random.Random, hero: tuple, friend: tuple) -> str:
    speaker, other = (hero, friend) if rng.random() < 0.5 else (friend, hero)
    fill = {
        "thing": rng.choice(THINGS),
        "place": rng.choice(PLACES),
        "name": rng.choice(CAST)[0],
        "feeling": rng.choice(FEELINGS),
    }
    if rng.random() < 0.5:
        line = rng.choice(QUESTIONS).format(**fill)
        return f'"{_capitalise(line)}" {rng.choice(["asked", "whispered", "called"])} {speaker[0]}.'
    line = rng.choice(STATEMENTS).format(**fill)
    if rng.random() < 0.5:
        return f'"{_capitalise(line[:-1])}," {rng.choice(SAY_TO)} {speaker[0]} to {other[0]}.'
    return f'"{_capitalise(line[:-1])}," {rng.choice(REPLY)} {speaker[0]}.'


def _action(rng: random.Random, hero: tuple, friend: tuple, thing: str) -> str:
    options = [
        f"{hero[0]} {rng.choice(ADVERBS)} gave {thing} to {friend[0]}.",
        f"{hero[1]} found {thing} under the bench and put it in {hero[3]} bag.",
        f"{friend[0]} showed {hero[2]} {thing}, and they both laughed.",
        f"They carried {thing} all the way back to {rng.choice(PLACES)}.",
        f"{hero[0]} had lost {thing}, so {hero[1]} was {rng.choice(FEELINGS)} for the rest of the day.",
        f"Because it was late, {friend[0]} kept {thing} until the morning.",
    ]
    return rng.choice(options)


def _ending(rng: random.Random, hero: tuple, place: str) -> str:
    options = [
        f"When {hero[1]} finally went home, {hero[1]} felt {rng.choice(FEELINGS)}.",
        f"Later {hero[1]} would remember that day at {place} for a long time.",
        "Nobody spoke about it again.",
        "Then the lights of the town came on, one by one.",
    ]
    return rng.choice(options)


def _capitalise(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]
