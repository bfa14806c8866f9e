"""GRPO prompts that carry signal: keep the prompts on which the judge being trained is not already
always right (or always wrong).

GRPO's advantage is a completion's reward minus its group's mean. A group whose completions all get
the same reward (every sampled verdict right, or every one wrong) has zero advantage and teaches
nothing. For a prompt on which the judge picks the right letter with probability ``p`` (its verdict
probability, renormalised over the two letters, read from the next-token logits as direct mode
reads it), a group of ``G`` sampled verdicts is uniform with probability ``p**G + (1 - p)**G``; its
*signal* is one minus that. A judge that is right on 95% of prompts at ``p`` near 1 leaves most
groups uniform (at ``p = 0.95`` and ``G = 4``, 81% of them).

:func:`select_by_signal` scores a pool of prompts with the checkpoint GRPO starts from (the first
``pool`` prompts of the seeded data, in whole blocks: the views of one base pair stay together for
the twin rewards) and keeps the blocks of highest mean signal until ``keep`` prompts are kept, in
their seeded order (ties: the earlier block). What it chose is recorded (``stats``): the pool and
kept sizes and, for each, the mean verdict probability and the expected share of uniform groups.

GRPO samples at a temperature ``T`` (TRL's ``temperature``, which also scales the log-probabilities it
trains), and a verdict sampled at ``T`` is right with probability ``p_T = p**(1/T) / (p**(1/T) + (1 -
p)**(1/T))`` (the two letters' logit gap divided by ``T``), so the expected share above is computed at
``p_T`` (the two letters' share of the first token is taken as whole: a hotter sampling also writes
other tokens, malformed verdicts, which this rate leaves out). A judge sure of most prompts (``p`` near
1 on a whole pool) leaves most groups uniform whatever prompts are kept; with a ``signal_target`` the
sampling temperature is the lowest of :data:`TEMPERATURES` at which the kept prompts' expected share
of groups with signal reaches the target (the highest if none does, said), chosen before training and
recorded; more completions per prompt (``num_generations``) reach it at a lower one. Greedy and
direct verdicts read the larger logit, which a temperature does not change.

In a multi-process run every process scores the same pool with the same weights and so keeps the
same prompts. Within one process a pool is scored once per checkpoint: two GRPO stages that start from
the same weights with the same prompts, device, dtype and template (the study's balanced and
balanced-acc arms) read the first one's verdict probabilities (:func:`verdict_probabilities`); direct
verdicts do not sample, so scoring again would give the same numbers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from biasaware.errors import BiasAwareError
from biasaware.judging.judges import JudgeSpec, load_judge
from biasaware.judging.models import model_identity
from biasaware.records import View


def group_signal(p: float, g: int) -> float:
    """The probability that ``g`` verdicts sampled at right-rate ``p`` are not all alike.

    >>> round(group_signal(0.95, 4), 4)
    0.1855
    >>> group_signal(1.0, 4)
    0.0
    """
    return 1.0 - p**g - (1.0 - p) ** g


# what a signal target may raise the sampling temperature to: not beyond 1.5, where a small judge's first token
# is still mostly a letter (one CPU-preset arm: format reward -0.03 at 1.5, -0.21 at 2, where most of the
# "signal" is malformed verdicts; docs/results/bench/grpo-signal-temperature.json)
TEMPERATURES = (1.0, 1.25, 1.5)


def tempered(p: float, temperature: float) -> float:
    """The right-rate of a verdict sampled at ``temperature`` from a judge right at ``p`` at 1.

    >>> round(tempered(0.9, 2.0), 4)
    0.75
    >>> tempered(1.0, 2.0), tempered(0.5, 3.0)
    (1.0, 0.5)
    """
    if temperature == 1.0 or p in (0.0, 1.0):
        return p
    right, wrong = p ** (1.0 / temperature), (1.0 - p) ** (1.0 / temperature)
    return right / (right + wrong)


def blocks_of(data: Sequence[dict[str, Any]]) -> list[list[int]]:
    """Runs of adjacent rows with one ``pair_id`` (a row without one is its own block)."""
    out: list[list[int]] = []
    for i, row in enumerate(data):
        key = row.get("pair_id")
        if out and key is not None and data[out[-1][-1]].get("pair_id") == key:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def choose(
    data: Sequence[dict[str, Any]],
    p_right: Sequence[float | None],
    keep: int,
    g: int,
    temperature: float = 1.0,
) -> tuple[list[int], dict[str, Any]]:
    """The indices of ``data`` (already cut to the pool; ``p_right`` aligned with it, ``None`` for a
    prompt that could not be scored: signal 0) to keep, and what was chosen (module docstring), for
    verdicts sampled at ``temperature``."""
    if keep < 1:
        raise BiasAwareError(f"select_prompts must be at least 1, got {keep}")
    if len(p_right) != len(data):
        raise BiasAwareError(f"{len(p_right)} verdict probabilities for {len(data)} prompts")
    signal = [0.0 if p is None else group_signal(tempered(p, temperature), g) for p in p_right]
    blocks = blocks_of(data)
    ranked = sorted(range(len(blocks)), key=lambda b: -sum(signal[i] for i in blocks[b]) / len(blocks[b]))
    chosen: list[int] = []
    count = 0
    for b in ranked:
        if count >= keep:
            break
        chosen.append(b)
        count += len(blocks[b])
    kept = sorted(i for b in chosen for i in blocks[b])

    def describe(ids: list[int]) -> dict[str, Any]:
        known = [p_right[i] for i in ids if p_right[i] is not None]
        return {
            "prompts": len(ids),
            "unscored": len(ids) - len(known),
            "mean_p_right": round(sum(known) / len(known), 4) if known else None,
            "expected_uniform_groups": round(1 - sum(signal[i] for i in ids) / len(ids), 4) if ids else None,
        }

    return kept, {
        "rule": "highest mean group signal, whole blocks",
        "generations": g,
        "temperature": temperature,
        "pool": describe(list(range(len(data)))),
        "kept": describe(kept),
    }


def pool_of(data: Sequence[dict[str, Any]], pool: int) -> int:
    """How many leading rows hold the first ``pool`` prompts, rounded up to a whole block."""
    n = 0
    for block in blocks_of(data):
        if n >= pool:
            break
        n += len(block)
    return n


def verdict_probabilities(
    model: str, views: Sequence[View], device: str = "auto", dtype: str = "auto", template: str = "verdict"
) -> tuple[list[float | None], str]:
    """P(the right letter) of each view, as direct mode reads a judge (``eval bias --mode direct``), and
    the dtype the judge ran in (``dtype`` resolved on ``device``). The same weights (by their hash), views,
    device, dtype and template scored earlier in this process give that scoring's numbers, without
    loading the judge (module docstring)."""

    key = _scoring_key(model, views, device, dtype, template)
    if key is not None and key in _SCORED:
        p_right, ran_in = _SCORED[key]
        print(
            "[train] GRPO prompts: the pool's verdicts as scored earlier in this run from the same weights",
            flush=True,
        )
        return list(p_right), ran_in
    judge = load_judge(
        JudgeSpec.create(name=model, mode="direct", template=template, device=device, dtype=dtype)
    )
    outs = judge.judge(list(views))
    ran_in = str(judge.dtype).removeprefix("torch.")
    del judge
    p_right = [
        None if o is None or o.scores is None else float(o.scores[v.correct])
        for o, v in zip(outs, views, strict=True)
    ]
    if key is not None:
        while len(_SCORED) >= SCORED_KEPT:
            _SCORED.pop(next(iter(_SCORED)))  # the oldest first
        _SCORED[key] = (tuple(p_right), ran_in)
    return p_right, ran_in


# verdict probabilities scored in this process (:func:`verdict_probabilities`), by :func:`_scoring_key`
_SCORED: dict[str, tuple[tuple[float | None, ...], str]] = {}
SCORED_KEPT = 4  # pools kept: a study's arms start from at most a few checkpoints at a time


def forget_scores() -> None:
    """Drop the verdict probabilities kept in this process (a benchmark that times each stage's own
    scoring, or weights known to change)."""
    _SCORED.clear()


def _scoring_key(model: str, views: Sequence[View], device: str, dtype: str, template: str) -> str | None:
    """What makes a scoring the same: the weights' hash (:func:`biasaware.judging.models.model_identity`;
    a model not on this disk is never reused), each view's content, the device, dtype and template."""
    identity = model_identity(model)
    if identity.get("weights_sha256") is None:
        return None
    digest = hashlib.sha256(json.dumps([identity, device, dtype, template], sort_keys=True).encode())
    for view in views:
        digest.update(view.model_dump_json().encode())
        digest.update(b"\0")
    return digest.hexdigest()


def select_by_signal(
    model: str,
    data: list[dict[str, Any]],
    views: list[View],
    keep: int,
    pool: int,
    generations: int,
    template: str,
    device: str = "auto",
    dtype: str = "auto",
    temperature: float = 1.0,
    signal_target: float = 0.0,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The kept rows of ``data`` (``views`` aligned with it) and what was chosen, for verdicts sampled at
    ``temperature``, or (a ``signal_target`` above 0) at the temperature the target picks, recorded as the
    stats' ``temperature``; see the module docstring."""
    if not 0.0 <= signal_target < 1.0:
        raise BiasAwareError(
            f"signal_target: a share of GRPO's groups, from 0 to below 1; got {signal_target!r}"
        )
    if keep < 1:  # 0 is no selection, taken by the recipe before this
        raise BiasAwareError(
            f"select_prompts: a number of prompts, at least 1 (or 0: no selection); got {keep}"
        )
    if pool < keep:
        raise BiasAwareError(f"select_pool ({pool}) must be at least select_prompts ({keep})")
    n = pool_of(data, pool)
    if n < keep:
        raise BiasAwareError(
            f"select_prompts {keep}: the training file gives only {len(data)} prompts; use more rows or fewer prompts"
        )
    p_right, ran_in = verdict_probabilities(model, views[:n], device, dtype, template)
    if signal_target:
        kept, stats = at_signal_target(data[:n], p_right, keep, generations, signal_target)
    else:
        kept, stats = choose(data[:n], p_right, keep, generations, temperature)
    return [data[i] for i in kept], {**stats, "dtype": ran_in}


def at_signal_target(
    data: Sequence[dict[str, Any]], p_right: Sequence[float | None], keep: int, g: int, target: float
) -> tuple[list[int], dict[str, Any]]:
    """:func:`choose` at the lowest of :data:`TEMPERATURES` whose kept prompts' expected share of
    groups with signal reaches ``target`` (the highest if none does: ``target_reached`` false)."""
    for temperature in TEMPERATURES:
        kept, stats = choose(data, p_right, keep, g, temperature)
        reached = 1.0 - stats["kept"]["expected_uniform_groups"] >= target
        if reached:
            break
    return kept, {**stats, "signal_target": target, "target_reached": reached}
