"""The headline figures three benchmarks' own tools report, from ``eval general``'s judgments.

``eval general`` reports accuracy per subset and pooled over every pair. The benchmarks' leaderboards report
other figures, so a judge compared with a leaderboard gets those too, computed as each tool computes them.

**RewardBench** (allenai/reward-bench) gives four section scores and their mean. Each section is the mean of its
subsets' accuracies weighted as ``rewardbench/constants.py`` weighs them (``EXAMPLE_COUNTS``, used as written: the
weights are not always the subsets' sizes; ``math-prm`` is weighted 984, not its 447 pairs, to count as much as the
six code subsets together), the sections as in ``SUBSET_MAPPING`` (``rewardbench/utils.py``:
``calculate_scores_per_section``), and the score is the mean of the four sections.

**RM-Bench** (THU-KEG/RM-Bench) gives four domains (chat, math, code, safety: its ``safety-refuse`` and
``safety-response`` files are one domain, as its ``scripts/utils.py`` splits by the domain's first word), each
domain's hard, normal and easy accuracy (the upper triangle, the diagonal and the lower triangle of the 3 x 3
matrix of chosen against rejected styles), a domain's score the mean of its three levels, each level's score the
mean over the domains, and the overall score the mean of the domains (the RM-Bench leaderboard's definition:
Overall = Domain Avg = Difficulty Avg). A level of a domain is scored on its pairs pooled, which is the matrix's mean
when every prompt is judged in every cell (a ``--limit`` sample or a pair left out, identical answers, makes the
cells unequal). ``eval general``'s own ``per_difficulty`` pools every domain's pairs instead, which weighs the
domains by their sizes.

**JudgeBench** (ScalerLab/JudgeBench) reports its four categories and the whole: each the accuracy over the pairs
whose ``source`` starts with ``mmlu-pro`` (knowledge), ``livebench-reasoning``, ``livebench-math`` or
``livecodebench`` (coding), a generative judge's by its two-order rule (``judgebench_acc``, its
``utils/metrics.py``), a reward model's strict (a tie wrong, where its reward-model script calls a tie B>A), as its
``run_judge.py`` computes them.

The accuracy of RewardBench and RM-Bench is ``eval general``'s: a reward model's strict accuracy (a tie is wrong,
as in both tools), a generative judge's accuracy in both orders (stricter than their generative scripts, which
judge one order per pair). Where a tool gives a part with no judged pair a score of 0, here the part is left out and the score it
feeds is not computed (``None``, the parts named in ``missing``). No interval is given: neither tool reports one,
and a mean of binomial rates has no Wilson interval.
"""

from __future__ import annotations

from typing import Any

from biasaware.data.upstream import RMBENCH_LEVELS

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


def judge_accuracy(part: dict[str, Any]) -> dict[str, Any]:
    """The judge's accuracy record of an ``eval general`` summary part: a reward model's strict accuracy, or a
    generative judge's in both orders."""
    return part.get("accuracy") or part["pair_acc"]


def rewardbench_scores(per_subset: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The section scores and the score (fractions) of a run whose subsets are all RewardBench's; ``None`` for any
    other benchmark (a subset of another name: not RewardBench, or not only it)."""
    if not per_subset or not set(per_subset) <= set(EXAMPLE_COUNTS):
        return None
    sections, missing = {}, []
    for section, subsets in SECTIONS.items():
        accuracies = [(s, judge_accuracy(per_subset[s])["value"]) for s in subsets if s in per_subset]
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
    return {"sections": sections, "score": score, "missing": missing}


RMBENCH_DOMAINS = ("chat", "math", "code", "safety")
"""RM-Bench's four domains; a pair's domain is the first of these its domain name starts with."""


def rmbench_scores(cells: dict[tuple[str, str], tuple[int, int]]) -> dict[str, Any] | None:
    """RM-Bench's leaderboard figures (fractions) from right and judged pairs per (domain name, level); ``None``
    when no domain name is one of RM-Bench's."""
    pooled: dict[str, dict[str, list[int]]] = {}
    for (name, level), (right, n) in cells.items():
        domain = next((d for d in RMBENCH_DOMAINS if name.startswith(d)), None)
        if domain is None:
            return None
        k_n = pooled.setdefault(domain, {}).setdefault(level, [0, 0])
        k_n[0] += right
        k_n[1] += n
    if not pooled:
        return None
    levels = RMBENCH_LEVELS
    domains, missing = {}, []
    for domain in RMBENCH_DOMAINS:
        got = {lv: k / n for lv, (k, n) in pooled.get(domain, {}).items() if n}
        if not got:
            missing.append(domain)
            continue
        whole = len(got) == len(levels)
        domains[domain] = {**got, "score": sum(got.values()) / len(levels) if whole else None}
        missing += [] if whole else [f"{domain} {lv}" for lv in levels if lv not in got]
    whole = len(domains) == len(RMBENCH_DOMAINS)  # a level's mean needs it in every domain
    by_level = {
        lv: sum(d[lv] for d in domains.values()) / len(domains)
        if whole and all(lv in d for d in domains.values())
        else None
        for lv in levels
    }
    overall = sum(d["score"] for d in domains.values()) / len(domains) if not missing else None
    return {"domains": domains, "levels": by_level, "score": overall, "missing": missing}


JUDGEBENCH_CATEGORIES = {
    "knowledge": "mmlu-pro",
    "reasoning": "livebench-reasoning",
    "math": "livebench-math",
    "coding": "livecodebench",
}
"""JudgeBench's categories by the prefix of a pair's ``source`` (its ``run_judge.py``)."""

UNNAMED_MODEL = "(none named)"
"""``judgebench_by_response_model``'s key for the pairs that name no response model."""


def judgebench_categories(subsets: list[str]) -> dict[str, list[str]] | None:
    """The subsets (JudgeBench's ``source`` values) of each of its categories; ``None`` unless every subset is one
    of JudgeBench's."""
    found: dict[str, list[str]] = {}
    for subset in subsets:
        category = next((c for c, p in JUDGEBENCH_CATEGORIES.items() if subset.startswith(p)), None)
        if category is None:
            return None
        found.setdefault(category, []).append(subset)
    return {c: found[c] for c in JUDGEBENCH_CATEGORIES if c in found} or None
