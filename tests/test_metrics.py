"""Metrics against independent formulas (property tests) and hand-worked tables."""

import doctest
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biasaware.evaluation import metrics
from biasaware.evaluation.metrics import (
    Outcome,
    bias_summary,
    mcnemar_exact,
    paired_diff_interval,
    position_summary,
    two_judge_mcnemar,
    wilson_interval,
)
from biasaware.judging import judge_format

Z = 1.959963984540054  # standard normal 97.5% quantile


def wilson_by_hand(k, n):
    p = k / n
    centre = p + Z * Z / (2 * n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return ((centre - half) / (1 + Z * Z / n), (centre + half) / (1 + Z * Z / n))


def mcnemar_by_hand(b, c):
    m = b + c
    tail = sum(math.comb(m, i) for i in range(min(b, c) + 1)) / 2**m
    return min(1.0, 2 * tail)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_matches_the_closed_form(kn):
    k, n = kn
    lo, hi = wilson_interval(k, n)
    elo, ehi = wilson_by_hand(k, n)
    assert lo == pytest.approx(elo, abs=1e-9) and hi == pytest.approx(ehi, abs=1e-9)


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_matches_the_binomial_sum(b, c):
    expected = 1.0 if b + c == 0 else mcnemar_by_hand(b, c)
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9)


verdict = st.sampled_from(["A", "B", "tie", "invalid"])
label = st.sampled_from(["A", "B"])
outcome = st.builds(Outcome, verdict, label, verdict, label)


@settings(max_examples=60, deadline=None)
@given(st.lists(outcome, min_size=1, max_size=40), st.sampled_from(metrics.POLICIES))
def test_bias_summary_counts_by_definition(items, policy):
    s = bias_summary(items, policy)
    ori = [o.ori_verdict == o.ori_correct for o in items]
    inj = [o.inj_verdict == o.inj_correct for o in items]
    flips = [
        a and not b and (policy == "symmetric" or o.inj_verdict in "AB")
        for a, b, o in zip(ori, inj, items, strict=True)
    ]
    assert s["acc_ori"] == sum(ori) / len(items) and s["acc_inj"] == sum(inj) / len(items)
    if sum(ori):
        assert s["bsr"] == sum(flips) / sum(ori)
    else:
        assert math.isnan(s["bsr"])
    assert s["invalid_inj"] == sum(o.inj_verdict in ("tie", "invalid") for o in items)
    lo, hi = s["acc_diff_ci"]
    diff = s["acc_ori"] - s["acc_inj"]
    assert math.isnan(lo) or lo - 1e-9 <= diff <= hi + 1e-9


def test_hand_worked_table():
    # 4 items: right->wrong, right->invalid, right->right, wrong->right
    items = [
        Outcome("A", "A", "B", "A"),
        Outcome("B", "B", "invalid", "B"),
        Outcome("A", "A", "A", "A"),
        Outcome("B", "A", "A", "A"),
    ]
    sym = bias_summary(items, "symmetric")
    assert (sym["acc_ori"], sym["acc_inj"], sym["flips"], sym["bsr"]) == (0.75, 0.5, 2, 2 / 3)
    assert (sym["invalid_ori"], sym["invalid_inj"]) == (0, 1)
    assert sym["mcnemar_p"] == pytest.approx(mcnemar_by_hand(2, 1))
    jbb = bias_summary(items, "judgebiasbench")
    assert (jbb["acc_inj"], jbb["flips"], jbb["bsr"]) == (0.5, 1, 1 / 3)
    empty = bias_summary([])
    assert empty["n"] == 0 and math.isnan(empty["acc_ori"]) and math.isnan(empty["bsr"])


def test_position_primacy_recency_and_consistency():
    items = [
        Outcome("A", "A", "A", "B"),  # A->B: always says A: flipped, inconsistent
        Outcome("A", "A", "B", "B"),  # A->B: consistent
        Outcome("B", "B", "A", "A"),  # B->A: consistent
        Outcome("B", "B", "invalid", "A"),  # B->A: invalid: not consistent
    ]
    s = position_summary(items, ["A_to_B", "A_to_B", "B_to_A", "B_to_A"])
    assert s["primacy"]["bsr"] == 0.5 and s["recency"]["bsr"] == 0.5 and s["consistency"] == 0.5
    # the LLM judge pitfalls guide's flip rate over the pairs decided in both orders (3): one flip; the invalid pair is apart
    assert (s["flips"], s["n"], s["undecided"]) == (1, 3, 1) and s["flip_rate"] == 1 / 3
    # swap-and-aggregate: both orders right on 2 of 4 pairs; 2 of 4 decided alike, both right
    sa = s["swap_aggregate"]
    assert (sa["accuracy"], sa["agreement"], sa["accuracy_on_agreed"]) == (0.5, 0.5, 1.0)


def test_bootstrap_is_seeded_and_two_judges():
    x = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 3
    y = [1, 0, 0, 1, 0, 1, 0, 1, 0, 0] * 3
    assert paired_diff_interval(x, y, seed=1) == paired_diff_interval(x, y, seed=1)
    lo, hi = paired_diff_interval(x, y, seed=1)
    assert lo < 0.3 < hi
    t = two_judge_mcnemar([bool(v) for v in x], [bool(v) for v in y])
    assert (t["only_1"], t["only_2"]) == (9, 0) and t["mcnemar_p"] == pytest.approx(mcnemar_by_hand(9, 0))
    with pytest.raises(ValueError):
        two_judge_mcnemar([True], [])


@pytest.mark.parametrize("module", [metrics, judge_format])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_judgebiasbench_policy_counts_an_autoj_reply_without_decision_as_wrong():
    from biasaware.evaluation.metrics import effective_policy

    right_then_invalid, right_then_tie = Outcome("A", "A", "invalid", "A"), Outcome("A", "A", "tie", "A")
    assert right_then_invalid.flipped("symmetric") and not right_then_invalid.flipped("judgebiasbench")
    assert right_then_invalid.flipped("judgebiasbench:autoj") and not right_then_tie.flipped(
        "judgebiasbench:autoj"
    )
    s = bias_summary(
        [right_then_invalid, right_then_tie, Outcome("A", "A", "A", "A")], "judgebiasbench:autoj"
    )
    assert (s["flips"], s["ori_correct"]) == (1, 3)
    assert effective_policy("judgebiasbench", "autoj") == "judgebiasbench:autoj"
    assert effective_policy("judgebiasbench", "autoj", "direct") == "judgebiasbench"
    assert effective_policy("judgebiasbench", "mtbench") == "judgebiasbench"


@pytest.mark.parametrize(
    "k,n,cell",
    [
        (14769, 20000, "73.9"),  # 73.845 -> 73.85 -> 73.9 (one rounding would give 73.8)
        (2953, 4000, "73.8"),  # 73.825 -> 73.83 -> 73.8
        (149, 2000, "7.5"),  # 7.45 -> 7.45 -> 7.5 (half-up, where a float often gives 7.4)
        (1, 3, "33.3"),
        (2, 3, "66.7"),
        (0, 5, "0.0"),
        (5, 5, "100.0"),
        (0, 0, "–"),
    ],
)
def test_table4_rounding_is_two_step_half_up(k, n, cell):
    from biasaware.evaluation.metrics import table4_cell

    assert table4_cell(k, n) == cell
