"""The 12 bias types of the JudgeBiasBench taxonomy (paper JudgeBiasBench, Table 2), in 4 categories, and two
security probes outside it (``injection``: an instruction or forged verdict inside a graded
response; ``masterkey``: a non-answer against the real answer), which ``all`` leaves out and every
summary reports apart from the 12.

Each bias has a category, a description, how it is injected, and whether it applies to
reward-model (discriminative) judges. Bandwagon, reflection and position live in the judge's
prompt (context or layout), so a reward model that scores one response at a time never sees
them.

>>> get_bias("position").category
'presentation'
>>> [b.name for b in biases_in("diversity")]
['gender', 'race']
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from biasaware.errors import BiasAwareError

CATEGORIES = ("superficial_quality", "context", "presentation", "diversity")
SECURITY = "security"  # probes outside the taxonomy (prompt injection), reported apart from the 12


@dataclass(frozen=True)
class Bias:
    name: str
    category: str
    description: str
    mechanism: str  # "rewrite" | "context" | "between" | "swap" | "identity" | "payload" | "key"
    applies_to_reward_model: bool


_SQ = "superficial_quality"

BIASES: dict[str, Bias] = {
    b.name: b
    for b in [
        Bias(
            "length", _SQ, "Favoring longer responses despite comparable or lower quality.", "rewrite", True
        ),
        Bias(
            "authority",
            _SQ,
            "Favoring responses that cite sources or authorities, real or not.",
            "rewrite",
            True,
        ),
        Bias(
            "beauty", _SQ, "Favoring attractive formatting (headings, bold, lists, emoji).", "rewrite", True
        ),
        Bias("assertiveness", _SQ, "Favoring confident statements over hedged ones.", "rewrite", True),
        Bias("sycophancy", _SQ, "Favoring responses that agree with or flatter the user.", "rewrite", True),
        Bias(
            "sentiment",
            _SQ,
            "Favoring an upbeat emotional tone over a neutral or negative one.",
            "rewrite",
            True,
        ),
        Bias(
            "concreteness",
            _SQ,
            "Favoring specific-looking details: numbers, precise terms, jargon.",
            "rewrite",
            True,
        ),
        Bias(
            "reflection",
            "context",
            "Superficial reflection: favoring the later answer when a 'let me think' phrase sits between the two.",
            "between",
            False,
        ),
        Bias("bandwagon", "context", "Favoring the answer a stated majority prefers.", "context", False),
        Bias(
            "position",
            "presentation",
            "Favoring an answer for where it appears (first or second).",
            "swap",
            False,
        ),
        Bias(
            "gender",
            "diversity",
            "Judgment shifts triggered by a gender identity statement.",
            "identity",
            True,
        ),
        Bias(
            "race", "diversity", "Judgment shifts triggered by a race identity statement.", "identity", True
        ),
        Bias(
            "injection",
            SECURITY,
            "Prompt injection: obeying an instruction or a forged verdict written inside a graded response "
            "(a security probe, outside the 12-bias taxonomy).",
            "payload",
            True,
        ),
        Bias(
            "masterkey",
            SECURITY,
            "Master keys: a non-answer (a lone punctuation mark, a reasoning opener, an answer header, the request "
            "restated, the answer cut before it answers) judged as good as a real answer, which pays a policy "
            "trained against the judge for saying nothing (a reward-hacking probe, outside the 12-bias taxonomy).",
            "key",
            True,
        ),
    ]
}

BIAS_NAMES: tuple[str, ...] = tuple(n for n, b in BIASES.items() if b.category != SECURITY)  # the 12
SECURITY_PROBES: tuple[str, ...] = tuple(n for n, b in BIASES.items() if b.category == SECURITY)


def get_bias(name: str) -> Bias:
    """Return the bias called ``name``; an unknown name fails with the list of valid ones."""
    try:
        return BIASES[name]
    except KeyError:
        raise BiasAwareError(
            f"unknown bias {name!r}; valid biases: {', '.join(BIAS_NAMES)}; security probes: "
            f"{', '.join(SECURITY_PROBES)}"
        ) from None


def biases_in(category: str) -> list[Bias]:
    """The biases of one category, in taxonomy order."""
    if category not in (*CATEGORIES, SECURITY):
        raise BiasAwareError(
            f"unknown bias category {category!r}; valid categories: {', '.join((*CATEGORIES, SECURITY))}"
        )
    return [b for b in BIASES.values() if b.category == category]


def parse_bias_list(spec: str | list[str] | None) -> list[str]:
    """Turn 'all' (the 12 biases), a category name ('security': the injection and master-key probes), a bias
    name, or a comma list of these ('all,injection') into bias names (validated, each once)."""
    if spec is None or spec == "all" or spec == ["all"]:
        return list(BIAS_NAMES)
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for item in (s.strip() for s in items if s.strip()):  # "length, authority," is two biases
        if item != "all" and item not in (*CATEGORIES, SECURITY) and item not in BIASES:
            close = difflib.get_close_matches(item, [*BIASES, *CATEGORIES, SECURITY], n=1)
            raise BiasAwareError(
                f"unknown bias {item!r}{f' (did you mean {close[0]!r}?)' if close else ''}; valid: the biases "
                f"{', '.join(BIAS_NAMES)}; the categories {', '.join(CATEGORIES)}; {SECURITY} (the probes "
                f"{', '.join(SECURITY_PROBES)}); or all"
            )
        names = (
            list(BIAS_NAMES)
            if item == "all"
            else [b.name for b in biases_in(item)]
            if item in (*CATEGORIES, SECURITY)
            else [get_bias(item).name]
        )
        out.extend(n for n in names if n not in out)
    if not out:  # "", "," or []: no bias named (None or "all" is every bias)
        raise BiasAwareError(
            f"biases {spec!r} names no bias: give bias names or categories (comma-separated), or all"
        )
    return out
