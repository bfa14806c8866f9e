"""GRPO rewards: table tests in TRL's call shape (conversational and standard completions)."""

import doctest

import pytest

from biasaware.errors import BiasAwareError
from biasaware.training import rewards
from biasaware.training.rewards import (
    accuracy_reward,
    format_reward,
    get_reward_funcs,
    swap_consistency_reward,
)

GOOD_A = "<think>B's citation is invented; A's arithmetic checks out.</think>\n<answer>A</answer>"
GOOD_B = "<think>A is off by one.</think><answer>B</answer>"
BARE_A = "<answer>A</answer>"  # right verdict, wrong format
JUNK = "I think A is better"  # no verdict at all


def conv(text):
    return [{"role": "assistant", "content": text}]


@pytest.mark.parametrize(
    "completion,label,accuracy,fmt",
    [
        (GOOD_A, "A", 1.0, 0.0),
        (GOOD_A, "B", 0.0, 0.0),
        (BARE_A, "A", 1.0, -0.5),
        (JUNK, "A", 0.0, -0.5),
        ("", "B", 0.0, -0.5),
        (GOOD_B + " trailing", "B", 0.0, -0.5),
    ],
)
def test_accuracy_plus_format_table(completion, label, accuracy, fmt):
    for c in (completion, conv(completion)):
        assert accuracy_reward([c], [label]) == [accuracy]
        assert format_reward([c]) == [fmt]
    # JudgeBiasBench eq. 9 with unit weights: the two summed
    assert accuracy + fmt in (1.0, 0.0, 0.5, -0.5)


def test_swap_consistency_needs_both_orders_right():
    completions = [GOOD_A, GOOD_B, GOOD_A, GOOD_A, GOOD_B]
    labels = ["A", "B", "A", "B", "A"]
    pair_ids = ["p1", "p1", "p2", "p2", "p3"]
    assert swap_consistency_reward(completions, labels, pair_ids) == [1.0, 1.0, 0.0, 0.0, None]


def test_registry_and_doctests():
    assert get_reward_funcs(["accuracy", "format"]) == [accuracy_reward, format_reward]
    with pytest.raises(BiasAwareError, match="unknown reward"):
        get_reward_funcs(["acc"])
    assert doctest.testmod(rewards).failed == 0
