"""The `names` task: English greetings to German ones that must carry a person's name across.

Seed 002 (section 4, Tips 1) asks for a chat-bot that repeats a name it has never seen: "hello i am
<name>" -> "hallo ich bin <name>". Names are syllable combinations drawn by our code from a seeded RNG,
so there are far more of them than any vocabulary holds. The names fall into three disjoint sets:

- common names (COMMON_NAMES of them): frequent in training, so they enter the word vocabulary;
- rare names: each seen a few times in training, left out of the vocabulary (as See et al. 2017 leave
  out the rare words of their articles), so a model meets them only as <unk> and must learn to copy;
- held-out names: only in the validation split, never in training and never in the vocabulary.

Every validation pair names only held-out people, so its exact match is the held-out exact match.
Templates put the name first, in the middle or last, reorder around it, and one has two names.
"""

from __future__ import annotations

import random

NAME = "{}"
# (English, German); "{}" marks each name slot, filled left to right in both languages.
TEMPLATES: tuple[tuple[str, str], ...] = (
    ("hello i am {}", "hallo ich bin {}"),
    ("my name is {}", "mein name ist {}"),
    ("{} is my name", "{} ist mein name"),
    ("good morning {}", "guten morgen {}"),
    ("where is {} today", "wo ist {} heute"),
    ("{} says hello", "{} sagt hallo"),
    ("please call me {}", "nenn mich bitte {}"),
    ("is {} your friend", "ist {} dein freund"),
    ("thank you {} very much", "vielen dank {}"),
    ("i like {} a lot", "ich mag {} sehr"),
    ("{} and {} are friends", "{} und {} sind freunde"),
)
ONSETS = "b d f g h k l m n p r s t v w z br dr gr kr pr st tr sch".split()
VOWELS = "a e i o u ei au".split()
CODAS = ("", "", "n", "r", "l", "x", "m", "s")
SYLLABLES_RANGE = (2, 3)
COMMON_NAMES = 40
RARE_NAMES = 3000
HELD_OUT_NAMES = 300
TRAIN_SIZE = 10_000
VAL_SIZE = 500
COMMON_SHARE = 0.3  # of the training name slots filled with a common (in-vocabulary) name


def template_words() -> list[str]:
    """Every word of every template, English then German, in order of first use."""
    words = [w for en, _ in TEMPLATES for w in en.split() if w != NAME]
    return words + [w for _, de in TEMPLATES for w in de.split() if w != NAME]


def name_sets(seed: int) -> tuple[list[str], list[str], list[str]]:
    """(common, rare, held_out): disjoint name lists drawn by a seeded RNG, none a template word."""
    rng = random.Random(f"names:{seed}")  # a string seed hashes the same on every Python version
    taken = set(template_words())
    names: dict[str, None] = {}  # a dict keeps the draw order
    while len(names) < COMMON_NAMES + RARE_NAMES + HELD_OUT_NAMES:
        name = _name(rng)
        if name not in taken:
            names.setdefault(name, None)
    drawn = list(names)
    held_out = drawn[:HELD_OUT_NAMES]
    common = drawn[HELD_OUT_NAMES : HELD_OUT_NAMES + COMMON_NAMES]
    return common, drawn[HELD_OUT_NAMES + COMMON_NAMES :], held_out


def sentences(seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """(train pairs, val pairs, vocabulary words) as text; val names only held-out people."""
    common, rare, held_out = name_sets(seed)
    rng = random.Random(f"names-pairs:{seed}")

    def train_name() -> str:
        return rng.choice(common) if rng.random() < COMMON_SHARE else rng.choice(rare)

    train = [_fill(rng.choice(TEMPLATES), train_name) for _ in range(TRAIN_SIZE)]
    val = [_fill(rng.choice(TEMPLATES), lambda: rng.choice(held_out)) for _ in range(VAL_SIZE)]
    return train, val, template_words() + common


def _fill(template: tuple[str, str], draw) -> tuple[str, str]:
    english, german = template
    people = [draw() for _ in range(english.count(NAME))]
    return english.format(*people), german.format(*people)


def _name(rng: random.Random) -> str:
    count = rng.randint(*SYLLABLES_RANGE)
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(count))
