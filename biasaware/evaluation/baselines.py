"""Cue-only baselines: what a surface heuristic alone scores on the same items, beside every judge.

A bias rate means more next to what the cue alone would do, and a benchmark is only a bias test if its
base pairs cannot be solved by a cue. So ``eval bias`` and ``eval general`` score, on the items the judge
saw and with the judge's own metrics (no model call), these heuristics as if they were judges:

==================  ==============================================================================
heuristic           verdict
==================  ==============================================================================
longer wins         the response with more words (equal: tie)
more markdown wins  the response with more markdown marks: headings, list items, bold, italics,
                    code, tables, links (equal: tie)
first wins          always A (answer position alone)
cue side wins       ``eval bias`` only: on an injected view, the side the cue favours (standard
                    probes: the worse answer; mirror probes: the better one); on an original view,
                    where there is no cue, a tie
==================  ==============================================================================

A tie counts as wrong, as for a judge (so pairs of equal length give "longer wins" a low Acc_ori).
Confounding is read on the original views the heuristic decides (no tie): a cue-free benchmark leaves a
heuristic near 50% there, and the report says the base data is *confounded* (e.g. length-confounded)
when, over at least ``MIN_DECIDED`` decided views, the 95% Wilson interval of its accuracy lies wholly
outside 50% +- ``CONFOUND_MARGIN``. ``cue side wins`` gives the reference for BSR and over-correction: a
judge that always follows the cue has BSR 100% and over-correction 0%.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from biasaware.evaluation.metrics import wilson_interval
from biasaware.evaluation.summaries import summarize
from biasaware.formatting import ci as interval
from biasaware.formatting import pct
from biasaware.records import BiasProbe, Judgment, PreferencePair, View

CONFOUND_MARGIN = 0.10
MIN_DECIDED = 10
# markdown marks counted per response: a heading, a list item, a table row, emphasis, code, a link
_MARKDOWN = re.compile(
    r"(?m)^\s{0,3}#{1,6}\s|^\s*(?:[-*+]|\d+[.)])\s|^\s*\|.*\|\s*$|\*\*[^*\n]+\*\*|__[^_\n]+__|"
    r"(?<![*\w])\*[^*\s][^*\n]*\*(?!\*)|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)"
)


def words(text: str) -> int:
    return len(text.split())


def markdown_marks(text: str) -> int:
    return len(_MARKDOWN.findall(text))


def _more(a: float, b: float) -> str:
    return "A" if a > b else "B" if b > a else "tie"


def longer(view: View, cue_side: str | None = None) -> str:
    return _more(words(view.response_a), words(view.response_b))


def longer_chars(view: View, cue_side: str | None = None) -> str:
    return _more(len(view.response_a), len(view.response_b))


def markdown(view: View, cue_side: str | None = None) -> str:
    return _more(markdown_marks(view.response_a), markdown_marks(view.response_b))


def first(view: View, cue_side: str | None = None) -> str:
    return "A"


def cue(view: View, cue_side: str | None = None) -> str:
    return cue_side or "tie"


HEURISTICS: dict[str, Callable[[View, str | None], str]] = {
    "longer wins": longer,
    "more markdown wins": markdown,
    "first wins": first,
    "cue side wins": cue,
}
# the cue-only judges a real-text report shows beside each judge
CUES = ("longer wins (characters)", "longer wins", "more markdown wins")
CONFOUNDS = {"longer wins": "length", "more markdown wins": "formatting", "first wins": "position"}
# general benchmarks only: length in characters (a pair of equal character length is a tie)


def _judgment(name: str, probe_id: str, view_name: str, view: View, verdict: str, meta: dict) -> Judgment:
    return Judgment(
        probe_id=probe_id,
        view=view_name,
        judge=name,
        raw=verdict,
        verdict=verdict,
        correct=view.correct,
        meta=meta,
    )


def cue_side(probe: BiasProbe) -> str:
    """The side of the injected view that the cue favours: the better answer on a mirror probe,
    the worse one otherwise."""
    correct = probe.injected.correct
    return correct if probe.meta.get("mirror") else ("B" if correct == "A" else "A")


def bias_baselines(probes: list[BiasProbe], policy: str = "symmetric", seed: int = 0) -> dict[str, Any]:
    """Each heuristic scored by ``eval bias``'s own metrics over ``probes`` (both views), with the
    confounding check on the original views."""
    out: dict[str, Any] = {}
    for name, rule in HEURISTICS.items():
        judgments = []
        for p in probes:
            meta = {
                "bias": p.bias,
                "category": p.category,
                **{k: p.meta[k] for k in ("direction", "mirror") if k in p.meta},
            }
            judgments.append(_judgment(name, p.id, "original", p.original, rule(p.original, None), meta))
            judgments.append(
                _judgment(name, p.id, "injected", p.injected, rule(p.injected, cue_side(p)), meta)
            )
        micro = summarize(judgments, policy, seed)["overall"]["micro"]
        originals = [p.original for p in probes if not p.meta.get("mirror")] or [p.original for p in probes]
        out[name] = {**_rates(micro, name), **(_decided(rule, originals) if name != "cue side wins" else {})}
    return {"heuristics": out, "confounded": confounded(out)}


def _decided(rule, views: list[View]) -> dict[str, Any]:
    """The original views a heuristic decides (no tie), and its accuracy on those, with its interval."""

    verdicts = [(rule(v, None), v.correct) for v in views]
    decided = [(got, want) for got, want in verdicts if got != "tie"]
    right = sum(got == want for got, want in decided)
    return {
        "decided_ori": len(decided),
        "acc_decided": right / len(decided) if decided else None,
        "acc_decided_ci": list(wilson_interval(right, len(decided))) if decided else None,
    }


def general_baselines(pairs: list[PreferencePair]) -> dict[str, Any]:
    """Each order-free heuristic's accuracy on the pairs in both orders (``first wins`` is right on
    half of them by construction there, so it is left out) and the confounding check. On general
    benchmarks "longer wins" is also counted in characters, the unit length shortcuts of real preference
    data are usually reported in."""

    out: dict[str, Any] = {}
    views = [View(prompt=p.prompt, response_a=p.chosen, response_b=p.rejected, correct="A") for p in pairs]
    rules = {"longer wins": longer, "longer wins (characters)": longer_chars, "more markdown wins": markdown}
    for name, rule in rules.items():
        right, n = sum(rule(v, None) == "A" for v in views), len(views)
        acc = right / n if n else None
        out[name] = {
            "acc_ori": acc,
            "acc_ori_ci": list(wilson_interval(right, n)) if n else None,
            "n": n,
            **_decided(rule, views),
        }
    return {"heuristics": out, "confounded": confounded(out)}


def _rates(micro: dict[str, Any], name: str) -> dict[str, Any]:
    keep = (
        "n",
        "acc_ori",
        "acc_ori_ci",
        "acc_inj",
        "bsr",
        "bsr_ci",
        "acc_inj_mirror",
        "overcorrection",
        "overcorrection_ci",
    )
    rates = {k: micro.get(k) for k in keep}
    if name == "cue side wins":  # no cue on an original view: its accuracy and flip rates are not defined
        rates.update(
            acc_ori=None, acc_ori_ci=None, bsr=None, bsr_ci=None, overcorrection=None, overcorrection_ci=None
        )
    return rates


def confounded(heuristics: dict[str, Any]) -> list[str]:
    """One sentence per heuristic whose original-view accuracy is clearly away from 50%."""
    lines = []
    for name, r in heuristics.items():
        ci, n = r.get("acc_decided_ci"), r.get("decided_ori") or 0
        if name not in CONFOUNDS or not ci or n < MIN_DECIDED:
            continue
        if ci[0] > 0.5 + CONFOUND_MARGIN or ci[1] < 0.5 - CONFOUND_MARGIN:
            lines.append(
                f"the base pairs are {CONFOUNDS[name]}-confounded: '{name}' is right on {pct(r['acc_decided'])}%"
                f"{interval(ci)} of the {n} original views it decides, where a cue-free "
                "benchmark gives about 50%"
            )
    return lines
