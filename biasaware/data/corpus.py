"""The built-in offline corpus: verifiable preference pairs whose correct answer is known.

Ten task families (arithmetic, multiplication, decimal comparison, capitals, alphabetical
sorting, letter counting, unit conversion, weekday arithmetic, linear equations, reversing a
word). For each item the generator computes the true answer and one plausible mistake (an
off-by-one, a carry slip, the "longer decimal is larger" error, a neighbouring country's
capital, one swapped pair, a wrong conversion factor, a sign error, ...).

How chosen and rejected are written: **with the same phrasing template, picked per item**, so
the two sides differ only in the claim. There is deliberately no length, tone or formatting
correlation with correctness: a judge can only win by checking the claim, which is what the
bias probes then test it on when a superficial cue is added to the wrong side. Each pair's
``meta`` carries the family and the two claims (``claim``, ``wrong_claim``); the rule-based
verifier (:func:`claim_verdict`) decides which side is right from them, so probes and
training rows built from this corpus are verified without a model.

Everything is drawn from one ``random.Random(seed)``: the same seed gives the same corpus.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from biasaware.data.facts import CAPITALS, FACT_FAMILIES, FACT_TEST_FAMILIES, fact_item
from biasaware.errors import BiasAwareError
from biasaware.records import PreferencePair

# The usual mistake: the biggest or best-known city instead of the capital.
FAMOUS_CITY = {
    "Canada": "Toronto",
    "Australia": "Sydney",
    "Brazil": "Rio de Janeiro",
    "Turkey": "Istanbul",
    "Switzerland": "Zurich",
    "India": "Mumbai",
    "Pakistan": "Karachi",
    "Nigeria": "Lagos",
    "Morocco": "Casablanca",
    "New Zealand": "Auckland",
    "Vietnam": "Ho Chi Minh City",
    "Israel": "Tel Aviv",
    "Bolivia": "La Paz",
    "Tanzania": "Dar es Salaam",
    "Myanmar": "Yangon",
    "South Korea": "Busan",
    "Germany": "Munich",
    "Italy": "Milan",
    "Spain": "Barcelona",
    "China": "Shanghai",
    "Japan": "Osaka",
    "Egypt": "Alexandria",
}
WORDS = (
    "apple banana cherry delta eagle falcon garden harbor island jungle kettle lemon mango nectar orange "
    "pepper quartz river silver timber umbrella violet walnut yellow zebra anchor basket candle dragon ember "
    "forest glacier hammer indigo jacket kitten ladder marble needle oyster pillow quiver rocket saddle tunnel "
    "velvet window almond bridge copper meadow parrot ribbon shadow thunder wizard"
).split()
LETTER_WORDS = (
    "banana bookkeeper mississippi committee balloon parallel occurrence assessment "
    "strawberry letter address coffee bottle success pepper grammar cinnamon tomorrow possession ".split()
)
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
UNITS = [  # (big, small, factor, wrong factor)
    ("hours", "minutes", 60, 100),
    ("minutes", "seconds", 60, 100),
    ("meters", "centimeters", 100, 1000),
    ("kilograms", "grams", 1000, 100),
    ("kilometers", "meters", 1000, 100),
    ("days", "hours", 24, 12),
    ("weeks", "days", 7, 5),
    ("liters", "milliliters", 1000, 100),
    ("feet", "inches", 12, 10),
]

# A family returns (question, (correct_claim, wrong_claim), [phrasing templates using {claim}]).
Item = tuple[str, tuple[str, str], list[str]]


def _addition(rng: random.Random) -> Item:
    a, b = rng.randint(12, 989), rng.randint(12, 989)
    wrong = a + b + rng.choice([-10, -1, 1, 10, 100])
    return (
        f"What is {a} + {b}?",
        (f"{a} + {b} = {a + b}", f"{a} + {b} = {wrong}"),
        ["{claim}.", "Adding the two numbers: {claim}.", "The sum is computed as {claim}."],
    )


def _multiplication(rng: random.Random) -> Item:
    a, b = rng.randint(3, 49), rng.randint(3, 29)
    wrong = a * b + rng.choice([a, -a, b, -b, 10])
    return (
        f"Calculate {a} times {b}.",
        (f"{a} × {b} = {a * b}", f"{a} × {b} = {wrong}"),
        ["{claim}.", "Multiplying gives {claim}.", "The product is {claim}."],
    )


def _decimals(rng: random.Random) -> Item:
    big = rng.randint(2, 9) / 10  # e.g. 0.7
    small = round(rng.randint(10, int(big * 100) - 1) / 100, 2)  # two decimals but smaller, e.g. 0.45
    if f"{small:.2f}".endswith("0"):
        small = round(small + 0.01, 2)
    x, y = (f"{big:.1f}", f"{small:.2f}") if rng.random() < 0.5 else (f"{small:.2f}", f"{big:.1f}")
    return (
        f"Which is larger, {x} or {y}?",
        (f"{big:.1f} is larger than {small:.2f}", f"{small:.2f} is larger than {big:.1f}"),
        ["{claim}.", "Comparing the two decimals, {claim}.", "{claim}, when compared digit by digit."],
    )


def _capitals(rng: random.Random) -> Item:
    country = rng.choice(sorted(CAPITALS))
    capital = CAPITALS[country]
    wrong = FAMOUS_CITY.get(country) if rng.random() < 0.6 else None
    wrong = wrong or rng.choice([c for k, c in sorted(CAPITALS.items()) if k != country])
    return (
        f"What is the capital of {country}?",
        (f"the capital of {country} is {capital}", f"the capital of {country} is {wrong}"),
        ["{Claim}.", "As far as geography goes, {claim}.", "{Claim}, which is where its government sits."],
    )


def _sorting(rng: random.Random) -> Item:
    words = rng.sample(WORDS, rng.randint(4, 6))
    good = sorted(words)
    bad = list(good)
    i = rng.randrange(len(bad) - 1)
    bad[i], bad[i + 1] = bad[i + 1], bad[i]
    return (
        f"Sort these words alphabetically: {', '.join(words)}.",
        (f"the sorted order is {', '.join(good)}", f"the sorted order is {', '.join(bad)}"),
        ["{Claim}.", "In alphabetical order, {claim}.", "{Claim}, going letter by letter."],
    )


def _letters(rng: random.Random) -> Item:
    word = rng.choice(LETTER_WORDS + WORDS)
    letter = rng.choice(sorted(set(word)))
    n = word.count(letter)
    wrong = n + rng.choice([-1, 1]) if n > 1 else n + 1
    q = f"How many times does the letter '{letter}' appear in the word '{word}'?"
    return (
        q,
        (
            f"the letter '{letter}' appears {n} times in '{word}'",
            f"the letter '{letter}' appears {wrong} times in '{word}'",
        ),
        ["{Claim}.", "Counting each position, {claim}.", "{Claim}, counting every occurrence."],
    )


def _units(rng: random.Random) -> Item:
    big, small, factor, wrong_factor = rng.choice(UNITS)
    n = rng.randint(2, 48)
    return (
        f"How many {small} are in {n} {big}?",
        (f"{n} {big} is {n * factor} {small}", f"{n} {big} is {n * wrong_factor} {small}"),
        ["{Claim}.", "Converting the units, {claim}.", "{Claim}, using the standard conversion."],
    )


def _weekdays(rng: random.Random) -> Item:
    start, n = rng.randrange(7), rng.randint(2, 60)
    right, wrong = DAYS[(start + n) % 7], DAYS[(start + n + rng.choice([-1, 1])) % 7]
    q = f"If today is {DAYS[start]}, what day of the week will it be in {n} days?"
    return (
        q,
        (f"in {n} days it will be {right}", f"in {n} days it will be {wrong}"),
        [
            "{Claim}.",
            "Counting forward through the week, {claim}.",
            "{Claim}, since the week repeats every 7 days.",
        ],
    )


def _equations(rng: random.Random) -> Item:
    a, x, b = rng.randint(2, 9), rng.randint(-12, 15), rng.randint(1, 40)
    c = a * x + b
    wrong = x + rng.choice([1, -1]) if (c + b) % a else (c + b) // a
    if wrong == x:
        wrong = x + 2
    return (
        f"Solve for x: {a}x + {b} = {c}.",
        (f"x = {x}", f"x = {wrong}"),
        ["{claim}.", "Isolating x, we get {claim}.", "Subtracting {b} and dividing by {a} gives {claim}."],
    )


def _reverse(rng: random.Random) -> Item:
    word = rng.choice(WORDS + LETTER_WORDS)
    rev = word[::-1]
    i = rng.randrange(len(rev) - 1)
    bad = rev[:i] + rev[i + 1] + rev[i] + rev[i + 2 :]
    if bad == rev:
        bad = rev[1:] + rev[0]
    return (
        f"Write the word '{word}' backwards.",
        (f"'{word}' backwards is '{rev}'", f"'{word}' backwards is '{bad}'"),
        ["{Claim}.", "Reading it from the last letter, {claim}.", "{Claim}, letter by letter."],
    )


REASONING_FAMILIES: dict[str, Callable[[random.Random], Item]] = {
    "addition": _addition,
    "multiplication": _multiplication,
    "decimals": _decimals,
    "capitals": _capitals,
    "sorting": _sorting,
    "letters": _letters,
    "units": _units,
    "weekdays": _weekdays,
    "equations": _equations,
    "reverse": _reverse,
}


def _fact(name: str) -> Callable[[random.Random], Item]:
    def make(rng: random.Random) -> Item:
        question, claims, templates, mistake = fact_item(name, rng)
        return question, claims, templates, {"mistake": mistake}

    return make


FAMILIES: dict[str, Callable[[random.Random], Item]] = {
    **REASONING_FAMILIES,
    **{name: _fact(name) for name in FACT_FAMILIES},
}
# ``families`` names a group or a comma list of family names
GROUPS = {"reasoning": tuple(REASONING_FAMILIES), "facts": tuple(FACT_FAMILIES), "all": tuple(FAMILIES)}


def _render(template: str, claim: str, question: str) -> str:
    nums = re.findall(r"\d+", question)
    text = template.replace("{Claim}", claim[:1].upper() + claim[1:]).replace("{claim}", claim)
    if "{a}" in text or "{b}" in text:  # equation template that names the coefficients
        text = text.replace("{a}", nums[0]).replace("{b}", nums[1])
    return text


# Held-out task families: ``build bench`` on the built-in corpus draws from TEST_FAMILIES and
# ``build train`` / ``build traces`` from the others, so a judge trained on built-in rows is
# evaluated on kinds of question it never saw (``--split all`` uses every family).
TEST_FAMILIES = ("multiplication", "sorting", "equations", *FACT_TEST_FAMILIES)
SPLITS = ("all", "train", "test")


def split_families(split: str = "all", families: str = "reasoning") -> tuple[str, ...]:
    """The family names of ``families`` (a comma list of groups of :data:`GROUPS` and family names)
    in ``split``.

    >>> split_families("test", "facts")
    ('book_authors', 'painters', 'organ_functions', 'young_animals')
    """
    if split not in SPLITS:
        raise BiasAwareError(f"the built-in corpus has splits {', '.join(SPLITS)}; got {split!r}")
    parts = [f.strip() for f in str(families).split(",") if f.strip()]
    names = tuple(dict.fromkeys(n for part in parts for n in GROUPS.get(part, (part,))))  # groups expand
    unknown = [f for f in names if f not in FAMILIES]
    if unknown or not names:
        raise BiasAwareError(
            f"unknown built-in task famil{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown) or repr(families)}; "
            f"valid: a comma list of groups ({', '.join(GROUPS)}) and families ({', '.join(FAMILIES)})"
        )
    chosen = tuple(f for f in names if split == "all" or (split == "test") == (f in TEST_FAMILIES))
    if not chosen:
        raise BiasAwareError(
            f"families {families!r} have no {split} families (held out: {', '.join(TEST_FAMILIES)})"
        )
    return chosen


def builtin_pairs(
    n: int = 2500, seed: int = 0, split: str = "all", families: str = "reasoning"
) -> list[PreferencePair]:
    """Generate ``n`` distinct verifiable pairs, spread evenly over the families of ``split``.

    A family that cannot produce a new pair in 1,000 draws in a row leaves the rotation; the
    others fill the count.
    """
    rng = random.Random(seed)
    names = list(split_families(split, families))
    seen: set[tuple[str, str]] = set()
    pairs: list[PreferencePair] = []
    misses = 0
    while len(pairs) < n:
        family = names[len(pairs) % len(names)]
        question, (claim, wrong), templates, *extra = FAMILIES[family](rng)
        if (question, wrong) in seen or claim == wrong:
            misses += 1
            if misses >= 1000:
                names.remove(family)
                misses = 0
                if not names:
                    raise BiasAwareError(
                        f"the built-in corpus ({split}) cannot produce {n} distinct pairs; "
                        f"it stopped at {len(pairs)}: lower corpus_size"
                    )
            continue
        misses = 0
        seen.add((question, wrong))
        template = rng.choice(templates)
        pairs.append(
            PreferencePair(
                id=f"builtin-{len(pairs):05d}",
                source="builtin",
                prompt=[{"role": "user", "content": question}],
                chosen=_render(template, claim, question),
                rejected=_render(template, wrong, question),
                meta={"family": family, "claim": claim, "wrong_claim": wrong, **(extra[0] if extra else {})},
            )
        )
    return pairs


def _normalize(text: str) -> str:
    text = re.sub(r"[*_#`>|]+", " ", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _has_claim(text: str, claim: str) -> bool:
    pattern = r"(?<![\w.'])" + re.escape(_normalize(claim)) + r"(?![\w]|\.\d)"
    return re.search(pattern, _normalize(text)) is not None


def claim_verdict(text: str, claim: str, wrong_claim: str) -> str:
    """Rule-based check of one response: ``correct``, ``wrong`` or ``unclear`` (both or neither).

    >>> claim_verdict("**12 + 30 = 42** ✓", "12 + 30 = 42", "12 + 30 = 43")
    'correct'
    >>> claim_verdict("12 + 30 = 420", "12 + 30 = 42", "12 + 30 = 43")
    'unclear'
    """
    right, wrong = _has_claim(text, claim), _has_claim(text, wrong_claim)
    if right and not wrong:
        return "correct"
    if wrong and not right:
        return "wrong"
    return "unclear"
