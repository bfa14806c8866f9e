"""Cue-only baselines: each heuristic's verdicts and rates, checked by hand counts; the confound
warning; the sections in eval bias's and eval general's reports."""

from __future__ import annotations

import json

import pytest

from biasaware.data.builders import BuildConfig, build_bench
from biasaware.evaluation.baselines import (
    bias_baselines,
    confounded,
    cue_side,
    general_baselines,
    longer,
    markdown_marks,
)
from biasaware.io import read_records
from biasaware.records import PreferencePair, View


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    build_bench(BuildConfig(n_per_bias=12, corpus_size=400, biases="length,beauty", direction="both"), out)
    return read_records(out, "probe")


def test_markdown_marks_count_headings_lists_emphasis_code_and_links():
    text = "# Title\n\n- one\n- two\n1. three\n\n**bold** and *it* and `x` and [a](http://b)\n| a | b |"
    assert markdown_marks(text) == 9
    assert markdown_marks("Plain prose with 2 * 3 = 6 and snake_case.") == 0


def test_longer_wins_and_ties():
    view = View(prompt=[{"role": "user", "content": "q"}], response_a="a b c", response_b="a b", correct="B")
    assert longer(view) == "A"
    assert longer(view.model_copy(update={"response_b": "x y z"})) == "tie"


def test_rates_equal_hand_counts(probes):
    """BSR and over-correction of 'longer wins' and the cue side's accuracy, counted by hand."""
    result = bias_baselines(probes)["heuristics"]
    std = [p for p in probes if not p.meta.get("mirror")]
    mirror = [p for p in probes if p.meta.get("mirror")]

    def right(view):
        return longer(view) == view.correct

    def rate(side):  # correct-to-wrong flips among originally correct, or None
        ori_right = [p for p in side if right(p.original)]
        return sum(not right(p.injected) for p in ori_right) / len(ori_right) if ori_right else None

    longer_wins = result["longer wins"]
    assert longer_wins["bsr"] == (pytest.approx(rate(std)) if rate(std) is not None else None)
    assert longer_wins["overcorrection"] == (
        pytest.approx(rate(mirror)) if rate(mirror) is not None else None
    )
    assert longer_wins["acc_ori"] == pytest.approx(sum(map(right, (p.original for p in std))) / len(std))
    decided = [p.original for p in std if longer(p.original) != "tie"]
    assert longer_wins["decided_ori"] == len(decided)
    # the builder keeps a pair's two answers the same length: "longer wins" decides no original view
    assert longer_wins["decided_ori"] == 0 and not bias_baselines(probes)["confounded"]
    cue = result["cue side wins"]  # always the cue: wrong on every standard probe, right on every mirror one
    assert (
        cue["acc_inj"] == 0.0
        and cue["acc_inj_mirror"] == 1.0
        and cue["acc_ori"] is None
        and cue["bsr"] is None
    )
    assert all(cue_side(p) != p.injected.correct for p in std) and all(
        cue_side(p) == p.injected.correct for p in mirror
    )
    assert result["first wins"]["acc_ori"] == pytest.approx(
        sum(p.original.correct == "A" for p in std) / len(std)
    )


def test_a_length_confounded_set_is_called_so():
    pair = {"prompt": [{"role": "user", "content": "q"}], "source": "t"}
    pairs = [
        PreferencePair(id=f"p{i}", chosen="a long and detailed answer " * 3, rejected="short", **pair)
        for i in range(40)
    ]
    result = general_baselines(pairs)
    assert result["heuristics"]["longer wins"]["acc_ori"] == 1.0
    assert result["confounded"] and "length-confounded" in result["confounded"][0]
    balanced = [
        p if i % 2 else p.model_copy(update={"chosen": "short", "rejected": p.chosen})
        for i, p in enumerate(pairs)
    ]
    assert not general_baselines(balanced)["confounded"]
    assert not confounded(
        {"longer wins": {"acc_decided": 0.55, "acc_decided_ci": [0.42, 0.67], "decided_ori": 40}}
    )
    assert not confounded(
        {"longer wins": {"acc_decided": 1.0, "acc_decided_ci": [0.56, 1.0], "decided_ori": 5}}
    )


def test_eval_bias_and_general_report_the_baselines(tiny_models, tmp_path, probes):
    from biasaware.evaluation.evaluate import evaluate_bias
    from biasaware.evaluation.general import evaluate_general
    from biasaware.io import write_jsonl
    from biasaware.judging.judges import JudgeSpec

    bench = tmp_path / "bench"
    write_jsonl(bench / "probes.jsonl", [p.to_dict() for p in probes])
    spec = JudgeSpec(name=str(tiny_models["causal"]), mode="direct")
    summary = evaluate_bias(spec, bench, tmp_path / "bias", limit=3)
    heuristics = summary["cue_baselines"]["heuristics"]
    assert set(heuristics) == {"longer wins", "more markdown wins", "first wins", "cue side wins"}
    assert (
        heuristics["longer wins"]["n"] == summary["overall"]["micro"]["n"]
    )  # the items the judge was scored on
    assert "## Cue-only baselines (no model)" in (tmp_path / "bias" / "report.md").read_text()
    again = evaluate_bias(None, None, tmp_path / "bias", rescore=True)  # a rescore keeps them
    assert again["cue_baselines"] == json.loads(json.dumps(summary["cue_baselines"]))

    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(
        pairs,
        [
            {
                "id": f"g{i}",
                "source": "t",
                "prompt": [{"role": "user", "content": "q"}],
                "chosen": "yes it is " * (i % 3 + 1),
                "rejected": "no",
            }
            for i in range(12)
        ],
    )
    general = evaluate_general(spec, str(pairs), tmp_path / "general")
    assert general["cue_baselines"]["heuristics"]["longer wins"]["acc_ori"] == 1.0
    assert "length-confounded" in (tmp_path / "general" / "report.md").read_text()


def test_a_report_says_when_too_few_views_were_decided_to_check_the_heuristics():
    from biasaware.evaluation.baselines import MIN_DECIDED
    from biasaware.evaluation.reports import baselines_markdown

    def said(decided):
        row = {"n": 8, "acc_ori": 0.5, "decided_ori": decided, "acc_decided": 0.5}
        return "\n".join(baselines_markdown({"heuristics": {"longer wins": row}, "confounded": []}))

    assert "too few to tell whether one is away from 50%" in said(MIN_DECIDED - 1)
    assert "No heuristic is clearly away from 50%" in said(MIN_DECIDED)
