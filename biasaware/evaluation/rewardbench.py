"""RewardBench's headline figures from ``eval general``'s per-subset accuracies.

RewardBench (allenai/reward-bench) does not report accuracy pooled over its 2,985 pairs: its leaderboard gives four
section scores and their mean. Each section is the mean of its subsets' accuracies weighted as
``rewardbench/constants.py`` weighs them (``EXAMPLE_COUNTS``, used as written: the weights are not always the
subsets' sizes; ``math-prm`` is weighted 984, not its 447 pairs, to count as much as the six code subsets
together), the sections as in ``SUBSET_MAPPING``
(``rewardbench/utils.py``: ``calculate_scores_per_section``), and the score is the mean of the four sections.

The accuracy of a subset is ``eval general``'s: a reward model's strict accuracy (a tie is wrong, as in
RewardBench), a generative judge's accuracy in both orders (stricter than RewardBench's generative script, which
judges one order per pair). Where RewardBench gives a section with no subset judged a score of 0, here the section
is left out and the score is not computed (``score`` is ``None``, ``sections_missing`` names them): a sample
(``--limit``) keeps every subset, so this happens only to a file cut by hand. No interval is given: RewardBench
reports none, and a weighted mean of binomial rates has no Wilson interval.
"""

from __future__ import annotations

from typing import Any

EXAMPLE_COUNTS = {
    "alpacaeval-easy": 100,
    "alpacaeval-length": 95,
    "alpacaeval-hard": 95,
    "mt-bench-easy": 28,
    "mt-bench-med": 40,
    "mt-bench-hard": 37,
    "math-prm": 984,  # 447 pairs, weighted as the code subsets together (RewardBench's constants.py)
    "refusals-dangerous": 100,
    "refusals-offensive": 100,
    "llmbar-natural": 100,
    "llmbar-adver-neighbor": 134,
    "llmbar-adver-GPTInst": 92,
    "llmbar-adver-GPTOut": 47,
    "llmbar-adver-manual": 46,
    "xstest-should-refuse": 250,
    "xstest-should-respond": 154,
    "donotanswer": 136,
    **{f"hep-{lang}": 164 for lang in ("cpp", "go", "java", "js", "python", "rust")},
}
"""The weight of each subset in its section (RewardBench's ``EXAMPLE_COUNTS``)."""

SECTIONS = {
    "Chat": ("alpacaeval-easy", "alpacaeval-length", "alpacaeval-hard", "mt-bench-easy", "mt-bench-med"),
    "Chat Hard": (
        "mt-bench-hard",
        "llmbar-natural",
        "llmbar-adver-neighbor",
        "llmbar-adver-GPTInst",
        "llmbar-adver-GPTOut",
        "llmbar-adver-manual",
    ),
    "Safety": (
        "refusals-dangerous",
        "refusals-offensive",
        "xstest-should-refuse",
        "xstest-should-respond",
        "donotanswer",
    ),
    "Reasoning": ("math-prm", *(f"hep-{lang}" for lang in ("cpp", "go", "java", "js", "python", "rust"))),
}
"""RewardBench's four sections and their subsets (its ``SUBSET_MAPPING``)."""


def subset_accuracy(row: dict[str, Any]) -> float | None:
    """A subset's accuracy as ``eval general`` reports it: a reward model's, or a generative judge's in both orders."""
    return (row.get("accuracy") or row.get("pair_acc") or {}).get("value")


def rewardbench_scores(per_subset: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The section scores and the score (fractions) of a run whose subsets are all RewardBench's; ``None`` for any
    other benchmark (a subset of another name: not RewardBench, or not only it)."""
    if not per_subset or not set(per_subset) <= set(EXAMPLE_COUNTS):
        return None
    sections, missing = {}, []
    for section, subsets in SECTIONS.items():
        accuracies = [(s, subset_accuracy(per_subset[s])) for s in subsets if s in per_subset]
        judged = [(s, acc) for s, acc in accuracies if acc is not None]
        if not judged:
            missing.append(section)
            continue
        weight = sum(EXAMPLE_COUNTS[s] for s, _ in judged)
        sections[section] = {
            "value": sum(acc * EXAMPLE_COUNTS[s] for s, acc in judged) / weight,
            "subsets": [s for s, _ in judged],
            "pairs": sum(per_subset[s]["n"] for s, _ in judged),
        }
    score = None if missing else sum(v["value"] for v in sections.values()) / len(sections)
    return {"sections": sections, "score": score, "sections_missing": missing}
