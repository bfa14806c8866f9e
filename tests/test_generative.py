"""The generative two-sided experiment (biasaware/experiments/generative.py), its short judge format and the
cue-consistency reward."""

from __future__ import annotations

import pytest

from biasaware.errors import BiasAwareError
from biasaware.training.rewards import (
    accuracy_reward,
    cue_consistency_reward,
    format_reward,
    get_reward_funcs,
    swap_consistency_reward,
)

V = ["verdict"] * 16


def test_cue_consistency_hand_computed():
    # pair p: four cue placements, one completion each; pair q: two placements, two completions each
    completions = ["A", "B", "A", "A", "B", "B", "B", "A"]
    label = ["A", "B", "A", "A", "B", "B", "A", "A"]
    pair = ["p", "p", "p", "p", "q", "q", "q", "q"]
    placement = ["none", "chosen", "rejected", "both", "none", "none", "chosen", "chosen"]
    got = cue_consistency_reward(completions, label, pair, placement, template=V[:8])
    # p: every view right -> 1.0 each. q: the 'chosen' view has a wrong completion (B for A), so the
    # 'none' view's right completions earn nothing; in the 'chosen' view the wrong one earns nothing
    # and the right one earns 1.0 (its twin, the 'none' view, is right on every completion)
    assert got == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]


def test_cue_consistency_missing_twins_and_wrong_self():
    # r has one view only (its twins are in another batch): not applicable; s: both views right
    pairs, places = ["r", "s", "s"], ["chosen", "none", "rejected"]
    got = cue_consistency_reward(["A", "A", "B"], ["A", "A", "B"], pairs, places, template=V[:3])
    assert got == [None, 1.0, 1.0]
    # s: a wrong view earns nothing, and takes the reward from its right twin
    got = cue_consistency_reward(["A", "B", "B"], ["A", "A", "B"], pairs, places, template=V[:3])
    assert got == [None, 0.0, 0.0]
    # an unreadable reply is wrong, never guessed: it takes its twin's reward away too
    got = cue_consistency_reward(
        ["A", "Both are fine"], ["A", "A"], ["s", "s"], ["none", "both"], template=V[:2]
    )
    assert got == [0.0, 0.0]


def test_cue_consistency_counts_other_orders_as_twins():
    # the same placement in the other answer order is a twin too (the label differs)
    got = cue_consistency_reward(["A", "B"], ["A", "B"], ["p", "p"], ["none", "none"], template=V[:2])
    assert got == [1.0, 1.0]
    got = cue_consistency_reward(["A", "A"], ["A", "B"], ["p", "p"], ["none", "none"], template=V[:2])
    assert got == [0.0, 0.0]


def test_swap_consistency_keeps_its_rule_with_placements():
    # twins are the other order of the same placement only: 'chosen' has no other order here
    got = swap_consistency_reward(
        ["A", "B", "A"], ["A", "B", "A"], ["p", "p", "p"], ["none", "none", "chosen"], template=V[:3]
    )
    assert got == [1.0, 1.0, None]
    # the default judge format without a template column, as before
    fmt = "<think>x</think><answer>{}</answer>"
    assert swap_consistency_reward([fmt.format("A"), fmt.format("A")], ["A", "B"], ["p", "p"]) == [0.0, 0.0]


def test_rewards_read_each_template():
    assert accuracy_reward(["B", " B", "The better one is B"], ["B"] * 3, template=V[:3]) == [1.0, 1.0, 0.0]
    assert format_reward(["A", "<answer>A</answer>"], template=V[:2]) == [0.0, -0.5]
    assert "cue_consistency" in [
        f.__name__.removesuffix("_reward") for f in get_reward_funcs(["cue_consistency"])
    ]


def test_grpo_rows_keep_a_balanced_pair_together(tmp_path):
    from biasaware.data.builders import BuildConfig, build_train
    from biasaware.io import read_records
    from biasaware.training.judge_data import grpo_rows, verdict_rows

    build_train(BuildConfig(families="facts", cues="natural", augment="balanced", max_rows=6), tmp_path)
    rows = read_records(tmp_path / "train.jsonl", "train")
    data = grpo_rows(rows, "0:4", seed=1, template="verdict")
    assert len(data) == len(rows)
    # each base pair's four placements are adjacent, in blocks of four
    for i in range(0, len(data), 4):
        block = data[i : i + 4]
        assert len({d["pair_id"] for d in block}) == 1
        assert sorted(d["placement"] for d in block) == ["both", "chosen", "none", "rejected"]
    assert {d["template"] for d in data} == {"verdict"}
    assert data[0]["prompt"][-1]["content"].endswith("Better response:")
    sft = verdict_rows(rows, "verdict", seed=1, bias_ratio="0:4")
    assert [r["completion"][0]["content"] for r in sft] == [d["label"] for d in data]
    with pytest.raises(BiasAwareError, match="letter"):
        verdict_rows(rows, "default")


def test_compact_lm_head_gives_trl_numbers(tiny_models):
    """The CPU switch of biasaware.training.recipe.compact_lm_head_on_cpu scores only the labelled
    positions and returns the same log-probabilities as TRL's every-position path."""
    import torch
    from trl.trainer import utils as trl_utils

    from biasaware.judging.models import load_model
    from biasaware.training.recipe import compact_lm_head_on_cpu

    model, _ = load_model(str(tiny_models["causal"]), "causal")
    trl_utils.add_fused_lm_head(model, outputs=("log_probs",))
    ids = torch.randint(5, 200, (3, 12), generator=torch.Generator().manual_seed(0))
    labels = ids.clone()
    labels[:, :9] = -100  # the completion: the last 3 tokens
    original = trl_utils._use_triton
    try:
        full = model(input_ids=ids, labels=labels, fused_lm_head=True).log_probs
        assert compact_lm_head_on_cpu() and compact_lm_head_on_cpu()  # idempotent
        assert trl_utils._use_triton(torch.device("cpu"))
        compact = model(input_ids=ids, labels=labels, fused_lm_head=True).log_probs
    finally:
        trl_utils._use_triton = original
    assert torch.allclose(full, compact, atol=1e-5)
    assert compact[:, :8].abs().sum() == 0 and compact[:, 8:].abs().sum() > 0
