"""Each command's options are declared once (biasaware.options): the parser's flags, the values
handed to the library and the Python API's keywords all come from that declaration."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Literal

import pytest

from biasaware import options as o
from biasaware.cli import build_parser
from biasaware.errors import BiasAwareError
from biasaware.judging.judges import JudgeSpec


def leaf(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def commands():
    for stage, declared in o.BUILD_OPTIONS.items():
        yield ("build", stage), declared
    for stage, declared in o.EVAL_OPTIONS.items():
        yield ("eval", stage), declared
    for name in ("validate", "preflight", "models", "quickstart", "sweep", "release"):
        yield (name,), getattr(o, name.capitalize())


@pytest.mark.parametrize(
    ("path", "declared"), list(commands()), ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_every_declared_option_is_a_flag_with_its_declared_default(path, declared):
    parser = leaf(build_parser(), *path)
    by_dest = {a.dest: a for a in parser._actions}
    for item in o.declared(declared):
        action = by_dest[item.name]
        assert item.settings["help"].split(" (")[0] in action.help, item.name
        if not item.settings.get("positional"):
            assert action.default == (item.default if item.annotation is not bool else bool(item.default)), (
                item.name
            )


def test_the_judge_flags_are_the_judge_spec_fields():
    parser = leaf(build_parser(), "eval", "bias")
    dests = {a.dest for a in parser._actions}
    judge = {i.settings.get("dest", i.name) for i in o.declared(JudgeSpec)}
    assert judge <= dests
    assert {"api_key_env", "cache_dir"}.isdisjoint(dests)  # no flag: secrets' variable, caches
    general = {a.dest for a in leaf(build_parser(), "eval", "general")._actions}
    assert "pointwise" in dests and "pointwise" not in general
    preflight = {a.dest: a.default for a in leaf(build_parser(), "preflight")._actions}
    assert preflight["max_tokens"] == 128  # the battery's own budget


def test_values_hand_the_library_what_was_parsed_by_declared_name():
    args = build_parser().parse_args(
        ["eval", "bias", "--judge", "x", "--data", "d", "--out", "o", "--limit", "3", "--biases", "length"]
    )
    assert o.values(o.EvalBias, args, skip=("out", "data")) == {
        "seed": 0,
        "rescore": False,
        "policy": "symmetric",
        "biases": "length",
        "limit": 3,
    }
    args = build_parser().parse_args(
        ["build", "train", "--out", "o", "--negatives", "2", "--key-negatives", "0.5"]
    )
    values = o.values(o.BuildTrain, args)
    assert values["n_negatives"] == 2 and values["key_negatives"] == 0.5  # named as BuildConfig's settings


def test_a_path_option_reads_a_leading_tilde_as_a_shell_does(monkeypatch):
    """A quoted "~/x" (the shell leaves it) is the home folder's x, in every path option; other values stay."""
    monkeypatch.setenv("HOME", "/home/someone")
    args = build_parser().parse_args(
        ["eval", "bias", "--judge", "x", "--data", "~/bench", "--out", "~/runs/e", "--biases", "~length"]
    )
    assert (args.data, args.out, args.biases) == ("/home/someone/bench", "/home/someone/runs/e", "~length")
    args = build_parser().parse_args(["build", "train", "--out", "o", "--source", "~/pairs.jsonl"])
    assert (args.out, args.source) == ("o", "/home/someone/pairs.jsonl")
    args = build_parser().parse_args(
        ["build", "real", "--out", "o", "--source", "rm-bench=~/rm", "--real", "~/r"]
    )
    assert (
        args.source == ["rm-bench=~/rm"] and args.real == "/home/someone/r"
    )  # NAME=PATH: read by build real


def test_the_api_takes_the_declared_keywords_and_names_the_valid_ones():
    assert o.keywords(o.EvalBias, {"limit": 2, "seed": None}, "evaluate()") == {"limit": 2}
    with pytest.raises(
        BiasAwareError, match=r"evaluate\(\) takes no lmit; its options: seed, rescore, policy"
    ):
        o.keywords(o.EvalBias, {"lmit": 2}, "evaluate()")
    with pytest.raises(BiasAwareError, match="takes no out"):  # a CLI-only flag is no keyword
        o.keywords(o.EvalBias, {"out": "x"}, "evaluate()")


def test_a_new_option_is_one_field(monkeypatch):
    @dataclasses.dataclass
    class Wider(o.EvalBias):
        margin_of_error: float = o.option("a new option", 0.5)

    monkeypatch.setitem(o.EVAL_OPTIONS, "bias", Wider)
    args = build_parser().parse_args(["eval", "bias", "--out", "o", "--margin-of-error", "0.25"])
    assert o.values(Wider, args, skip=("out", "data"))["margin_of_error"] == 0.25
    assert o.keywords(Wider, {"margin_of_error": 0.1}, "evaluate()") == {"margin_of_error": 0.1}
    help_text = leaf(build_parser(), "eval", "bias").format_help()
    assert "--margin-of-error MARGIN_OF_ERROR" in help_text and "(default 0.5)" in help_text


def test_the_mechanism_reads_types_from_the_declaration():
    @dataclasses.dataclass
    class Tiny:
        path: str = o.option("where", positional=True)
        kind: Literal["a", "b"] = o.option("which", "a")
        count: int | None = o.option("how many", type=o.positive_int, stated=5)
        share: float = o.option("a share", 0.5)
        loud: bool = o.option("say more", False)
        hidden: int = 3  # no help: not an option

    parser = argparse.ArgumentParser()
    o.add_options(parser, Tiny)
    args = parser.parse_args(["p", "--kind", "b", "--count", "2", "--share", "0.1", "--loud"])
    assert (args.path, args.kind, args.count, args.share, args.loud) == ("p", "b", 2, 0.1, True)
    assert not hasattr(args, "hidden")
    text = parser.format_help()
    assert "how many (default 5)" in text and "say more (default off)" in text and "which (default a)" in text
    for bad in (["p", "--kind", "c"], ["p", "--count", "0"], ["p", "--share", "x"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)


def test_each_flag_is_named_as_the_setting_it_sets():
    """A build flag is a BuildConfig setting, a generative budget flag a Budget setting, a sweep flag
    a SweepSpec setting: a flag declared in the wrong place, or misnamed, fails here."""
    from biasaware.data.builders import BuildConfig
    from biasaware.experiments.generative import Budget
    from biasaware.experiments.sweep import SweepSpec

    cli_only = {"out", "config", "mirror", *o.Build.LLM_FLAGS}
    for stage in ("bench", "train", "traces"):
        names = {i.name for i in o.declared(o.BUILD_OPTIONS[stage])} - cli_only
        assert names <= set(BuildConfig.__dataclass_fields__), (
            stage,
            names - set(BuildConfig.__dataclass_fields__),
        )
    assert set(o.BUDGET_FLAGS) <= set(Budget.model_fields), set(o.BUDGET_FLAGS) - set(Budget.model_fields)
    sweep = {i.name for i in o.declared(o.Sweep)} - {"config", "out", "recipe_config"}
    assert sweep <= set(SweepSpec.model_fields), sweep - set(SweepSpec.model_fields)
