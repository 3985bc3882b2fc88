"""Number words for 0..999 in English and German, one word-level token per space-separated part.

English: "three hundred twenty one" (no "and", no hyphens). German splits its compounds into parts so
a word vocabulary stays small and the reordering is visible token by token: units come before tens
("ein und zwanzig" = one-and-twenty), the reordering the 2017 paper's 'gesehen'/'seen' example shows.

Rules (chosen once, tested):
- 1 on its own, or as the last part after hundreds, is "eins" (101 = "ein hundert eins"); before "und"
  or "hundert" it is "ein" (21 = "ein und zwanzig", 100 = "ein hundert").
- Hundreds always say their count: 100 = "ein hundert", never a bare "hundert".
- The teens are single words, with German's contractions: "sechzehn", "siebzehn".
"""

from __future__ import annotations

# fmt: off
EN_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
EN_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
            "nineteen"]
EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

DE_UNITS = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"]
DE_TEENS = ["zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn",
            "neunzehn"]
DE_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]
# fmt: on

MAX_NUMBER = 999


def english_words(n: int) -> str:
    _check(n)
    hundreds, rest = divmod(n, 100)
    parts = [EN_UNITS[hundreds], "hundred"] if hundreds else []
    if rest or not hundreds:
        parts += _english_below_100(rest)
    return " ".join(parts)


def german_words(n: int) -> str:
    _check(n)
    hundreds, rest = divmod(n, 100)
    parts = [_german_unit_prefix(hundreds), "hundert"] if hundreds else []
    if rest or not hundreds:
        parts += _german_below_100(rest)
    return " ".join(parts)


def _english_below_100(n: int) -> list[str]:
    tens, units = divmod(n, 10)
    if n < 10:
        return [EN_UNITS[n]]
    if n < 20:
        return [EN_TEENS[units]]
    return [EN_TENS[tens]] + ([EN_UNITS[units]] if units else [])


def _german_below_100(n: int) -> list[str]:
    tens, units = divmod(n, 10)
    if n < 10:
        return [DE_UNITS[n]]
    if n < 20:
        return [DE_TEENS[units]]
    if units == 0:
        return [DE_TENS[tens]]
    return [_german_unit_prefix(units), "und", DE_TENS[tens]]  # units first: ein und zwanzig


def _german_unit_prefix(unit: int) -> str:
    """A unit that another part follows: 'eins' loses its s ('ein und zwanzig', 'ein hundert')."""
    return "ein" if unit == 1 else DE_UNITS[unit]


def _check(n: int) -> None:
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"number: must be between 0 and {MAX_NUMBER}, got {n}")
