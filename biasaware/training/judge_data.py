"""Datasets for training generative judges: pairwise judge prompts from training rows (GRPO) and
prompt-completion rows from teacher traces (SFT).

``grpo_rows(rows, bias_ratio, seed)``: every training row gives one *original* pair (chosen vs the
original rejected response); ``bias_ratio = "k:4"`` adds bias-aware pairs (chosen vs one of the row's
bias negatives) in the proportion k bias-aware pairs to 4 original ones (JudgeBiasBench Table 6: 0:4 ... 4:4),
drawn with the seed. Each pair becomes a judge prompt in a named format (``template``; the default
is :mod:`biasaware.judging.judge_format`'s) with the chosen response at A or B: seeded and balanced
50/50, and recorded in ``label`` (the column the rewards read). ``both_orders`` emits each pair in
both orders instead (the swap-consistency reward needs the twins; ``pair_id`` links them).

``verdict_rows`` turns the same judge prompts into SFT rows whose completion is the verdict letter
(the CPU-budget path: a short ``verdict`` template, a reply of one token).
"""

from __future__ import annotations

import random
from typing import Any

from biasaware.data.master_keys import renamed
from biasaware.errors import BiasAwareError
from biasaware.judging.prompts import LETTER_FIRST, get_template
from biasaware.records import TraceRow, TrainingRow, View


def parse_ratio(ratio: str) -> float:
    """``"k:n"`` as bias-aware pairs per original pair.

    >>> parse_ratio("1:4")
    0.25
    """
    try:
        k, n = (float(x) for x in str(ratio).split(":"))
        if k < 0 or n <= 0:
            raise ValueError
    except ValueError:
        raise BiasAwareError(
            f"bias_ratio must look like 'k:n' with k >= 0 and n > 0 (e.g. '1:4'), got {ratio!r}"
        ) from None
    return k / n


BANDWAGON_NOTE = "90% of people believe that Response {letter} is better in this question."
REFLECTION_PHRASE = "wait, wait, wait... let me think about it"


def grpo_rows(
    rows: list[TrainingRow],
    bias_ratio: str = "4:4",
    seed: int = 0,
    both_orders: bool = False,
    context_cues: float = 0.0,
    template: str = "default",
    with_views: bool = False,
) -> list[dict[str, Any]]:
    """See the module docstring. ``context_cues`` (0-1): the share of pairs whose judge prompt also
    carries a context cue, balanced so it says nothing about the label: half of them a bandwagon
    note (naming the chosen response in exactly half of those, the rejected one in the rest), half
    the reflection phrase between the answers (whose order is balanced 50/50, so the phrase precedes
    the better answer about half the time). The ``context`` column records which.

    Every row of the output is one view of a base pair: ``pair_id`` names the base pair (for balanced
    rows the pair their four cue placements come from, ``meta.pair_id``), ``placement`` where the
    pair's cue sits (balanced rows: ``none``, ``chosen``, ``rejected`` or ``both``; else empty) and
    ``label`` the answer order. The views of one base pair are adjacent, in seeded block order, so a
    trainer that does not reshuffle (``shuffle_dataset: false``) sees them in one batch (the twin
    rewards of :mod:`biasaware.training.rewards`). ``template`` names the prompt format
    (:mod:`biasaware.judging.prompts`), also a column so the rewards parse replies with its parser.
    ``with_views``: each row also holds its :class:`~biasaware.records.View` (``view``; to score the
    prompts with a judge, :mod:`biasaware.training.signal`), which a dataset must not get."""
    if not 0 <= context_cues <= 1:
        raise BiasAwareError(f"context_cues is a share of pairs in [0, 1], got {context_cues}")
    render = get_template(template).render
    rng = random.Random(seed)
    pairs = [(r, r.rejected, "original") for r in rows]
    with_negatives = [r for r in rows if r.bias_negatives]
    n_bias = round(parse_ratio(bias_ratio) * len(rows))
    if n_bias > 0 and not with_negatives:
        hint = (
            " (balanced rows carry their cue on both sides in the rows themselves: use bias_ratio 0:4)"
            if any(r.meta.get("augment") == "balanced" for r in rows)
            else ""
        )
        raise BiasAwareError(f"bias_ratio {bias_ratio} needs training rows with bias_negatives{hint}")
    picks: list[TrainingRow] = []
    while len(picks) < n_bias:  # each row at most once per round
        picks += rng.sample(with_negatives, min(len(with_negatives), n_bias - len(picks)))
    for r in picks:
        neg = rng.choice(r.bias_negatives)
        pairs.append((r, neg.text, neg.bias))
    rng.shuffle(pairs)
    orders = ["A", "B"] * (len(pairs) // 2) + ["A"] * (len(pairs) % 2)
    rng.shuffle(orders)
    plan = [""] * len(pairs)  # per pair: "", "bandwagon:chosen", "bandwagon:rejected" or "reflection"
    cued = rng.sample(range(len(pairs)), round(context_cues * len(pairs)))
    for j, i in enumerate(cued):
        plan[i] = "reflection" if j % 2 else f"bandwagon:{'chosen' if j % 4 == 0 else 'rejected'}"
    blocks: dict[str, list[dict[str, Any]]] = {}
    for k, ((row, worse, bias), order) in enumerate(zip(pairs, orders, strict=True)):
        balanced = row.meta.get("augment") == "balanced" and "pair_id" in row.meta
        base = str(row.meta["pair_id"]) if balanced else f"{row.id}-{k}"
        for label in ("A", "B") if both_orders else (order,):
            other = "B" if label == "A" else "A"
            shown = renamed(worse, other)  # an appeal key names the letter it stands at in this order
            a, b = (row.chosen, shown) if label == "A" else (shown, row.chosen)
            context = (
                BANDWAGON_NOTE.format(letter=label if plan[k].endswith("chosen") else other)
                if plan[k].startswith("bandwagon")
                else ""
            )
            between = REFLECTION_PHRASE if plan[k] == "reflection" else ""
            view = View(
                prompt=row.prompt, response_a=a, response_b=b, correct=label, context=context, between=between
            )
            blocks.setdefault(base, []).append(
                {
                    "prompt": render(view),
                    "label": label,
                    "pair_id": base,
                    "placement": str(row.meta.get("cue_on", "")) if balanced else "",
                    "bias": bias,
                    "context": plan[k],
                    "template": template,
                    **({"view": view} if with_views else {}),
                }
            )
    return [view for block in blocks.values() for view in block]


def verdict_rows(rows: list[TrainingRow], template: str = "verdict", **pairs: Any) -> list[dict[str, Any]]:
    """SFT rows whose target is the verdict itself: the judge prompts of :func:`grpo_rows` (same
    pairs, orders and cues; ``pairs`` are its keyword arguments) with the right letter as the
    assistant's reply, for a letter-first template (``verdict`` or ``direct``). The loss covers the
    reply only (prompt-completion rows), a handful of tokens."""

    if template not in LETTER_FIRST:
        raise BiasAwareError(
            f"verdict targets need a template whose reply is the letter ({', '.join(LETTER_FIRST)}), "
            f"got {template!r}; SFT on reasoning traces takes a traces file"
        )
    return [
        {"prompt": r["prompt"], "completion": [{"role": "assistant", "content": r["label"]}]}
        for r in grpo_rows(rows, template=template, **pairs)
    ]


def sft_rows(traces: list[TraceRow]) -> list[dict[str, Any]]:
    """TRL conversational prompt-completion rows (the loss covers the completion only)."""
    return [
        {"prompt": [m.model_dump() for m in t.prompt], "completion": [m.model_dump() for m in t.completion]}
        for t in traces
    ]


def add_offtopic_negatives(rows: list[dict[str, Any]], k: int, seed: int = 0) -> list[dict[str, Any]]:
    """OffsetBias-style generic negatives: each row gains ``k`` chosen responses of other prompts
    (well written, wrong for this prompt) in an ``offtopic_negatives`` column, kept apart from
    ``bias_negatives`` so ``num_bias_negatives`` does not cut them; seeded."""
    if k <= 0:
        return rows
    if len(rows) <= k:
        raise BiasAwareError(f"off-topic negatives need more than {k} rows, got {len(rows)}")
    rng = random.Random(seed)
    out = []
    for i, row in enumerate(rows):
        others = rng.sample([j for j in range(len(rows)) if j != i and rows[j]["prompt"] != row["prompt"]], k)
        out.append({**row, "offtopic_negatives": [rows[j]["chosen"] for j in others]})
    return out
