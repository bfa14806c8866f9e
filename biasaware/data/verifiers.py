"""Verifiers: does the better response still beat every worse one after injection?

Each verifier answers a list of :class:`Check` at once (so an LLM verifier can send them
concurrently) with ``True`` (order holds: keep), ``False`` (drop) or ``None`` (undecided: an LLM
call failed after its retries; the builder leaves the item for a rerun).

* ``rule``: the built-in corpus records the true and the false claim of every pair in ``meta``;
  the better text must state the true claim and every worse text the false one. No model.
* ``llm``: a judge model compares the better text with each worse text in BOTH orders, told to
  judge content only (correctness, completeness) and to ignore style; the order holds only when
  all verdicts pick the better text. A verdict that cannot be parsed counts as not holding
  (dropped, and counted in ``invalid``): the verifier must be sure, not guessed.
* ``fluency``: a causal language model's per-token likelihood: each rewritten text must read about as fluently as
  the text it was written from (:mod:`biasaware.data.fluency`; it checks fluency, not the quality order).
* ``none``: keeps everything; the manifest says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from biasaware.data.corpus import claim_verdict
from biasaware.judging.judge_format import JUDGE_SYSTEM, judge_messages, parse_judgment
from biasaware.judging.llm import any_text
from biasaware.records import PreferencePair, View

VERIFY_SYSTEM = (
    JUDGE_SYSTEM + "\nJudge the content only: is it correct, complete and responsive? Ignore length, "
    "formatting, tone, confidence, citations, flattery, emotional language and any statement of the "
    "writer's identity."
)


@dataclass
class Check:
    pair: PreferencePair
    better: str
    worse: list[str]
    found: dict = field(default_factory=dict)  # what a verifier measured, kept in the item's meta


class NoVerifier:
    name = "none"

    def judge(self, checks: list[Check]) -> list[bool | None]:
        return [True] * len(checks)


class RuleVerifier:
    name = "rule"

    def judge(self, checks: list[Check]) -> list[bool | None]:
        out: list[bool | None] = []
        for c in checks:
            claim, wrong = c.pair.meta["claim"], c.pair.meta["wrong_claim"]
            out.append(
                claim_verdict(c.better, claim, wrong) == "correct"
                and all(claim_verdict(w, claim, wrong) == "wrong" for w in c.worse)
            )
        return out


class LLMVerifier:
    name = "llm"

    def __init__(self, client):
        self.client = client
        self.invalid = 0  # verdicts read as invalid (not in the judge format), of ``verdicts`` read
        self.verdicts = 0

    @staticmethod
    def views(check: Check) -> list[View]:
        """Two views per worse text: the better one first, then second."""
        prompt = check.pair.prompt
        return [
            View(prompt=prompt, response_a=a, response_b=b, correct=correct)
            for w in check.worse
            for a, b, correct in ((check.better, w, "A"), (w, check.better, "B"))
        ]

    def judge(self, checks: list[Check]) -> list[bool | None]:
        views = [self.views(c) for c in checks]
        flat = [v for vs in views for v in vs]
        # a blank or garbled verdict is the verifier's answer (invalid: dropped), not a failed call
        replies = self.client.complete_many(
            [judge_messages(v, VERIFY_SYSTEM) for v in flat], check=any_text, desc="verifier"
        )
        out: list[bool | None] = []
        i = 0
        for vs in views:
            got = replies[i : i + len(vs)]
            i += len(vs)
            if any(r is None for r in got):
                out.append(None)
                continue
            verdicts = [parse_judgment(r).verdict for r in got]
            self.invalid += sum(v == "invalid" for v in verdicts)
            self.verdicts += len(verdicts)
            out.append(all(v == view.correct for v, view in zip(verdicts, vs, strict=True)))
        return out
