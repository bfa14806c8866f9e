"""The ``biasaware`` command's arguments: one parser per command and stage, made from the options
each declares in :mod:`biasaware.options`, with the descriptions below. The commands themselves
are in :mod:`biasaware.cli.commands`."""

from __future__ import annotations

import argparse
import difflib
import re
import sys

from biasaware import options as o
from biasaware.judging.judges import JudgeSpec
from biasaware.version import __version__

EPILOG = """pipeline:
  biasaware build bench|train|traces   data builders: inject the 12 biases, filter, write records
  biasaware build real --real PATH     real preference text and benchmarks, read from your copies
  accelerate launch -m biasaware.recipes.{sft,grpo,reward,policy_grpo} --config ...   training (TRL)
  biasaware eval bias|scoring|general|real|compare  evaluation: Acc_ori, Acc_inj, BSR, scoring bias, benchmarks, real text
  biasaware preflight --judge NAME     a gate before trusting a judge: exit 1 when a fail threshold is crossed
  biasaware sweep                      a recipe over a grid: train, evaluate, one table (JudgeBiasBench Table 6)
  biasaware release                    check a checkpoint against its report, write its model card
multi-GPU evaluation: torchrun --nproc_per_node N -m biasaware.cli eval bias ... (see docs/evaluation.md)
"""


BUILD_STAGES = {
    "bench": (
        "bias probes: one JSONL per bias, standard and mirror sides",
        "Inject each bias into base preference pairs and write OUT/<bias>.jsonl: standard probes carry the cue "
        "on the worse answer (cue-following, BSR), mirror probes on the better one (over-correction). "
        "Resumable: rerun the same command to continue; other settings are refused.",
    ),
    "train": (
        "bias-augmented training rows {prompt, chosen, rejected, bias_negatives}",
        "Write OUT/train.jsonl: each base pair with bias negatives (paper: the cue on the rejected side) or "
        "balanced rows (the cue on neither, either and both sides). Resumable.",
    ),
    "traces": (
        "teacher SFT traces: a reasoned verdict per probe",
        "Build probes as for the benchmark (from the training split) and have a teacher write a reasoned "
        "verdict for each; write OUT/traces.jsonl of SFT traces (the verdicts that match the label). Resumable.",
    ),
    "real": (
        "real preference text: AlpacaEval pairs split by instruction, real benchmarks, NullModel keys",
        "Read your copies of AlpacaEval's annotations and the real benchmarks (RM-Bench, Auto-J, PandaLM, "
        "JudgeBench, LLMBar, EvalBiasBench) in their upstream layouts and write OUT/train.jsonl, heldout.jsonl, "
        "masterkey-null.jsonl (NullModel's key; without NullModel's folder, none), bench/<source>.jsonl, the "
        "injected probes probes/ (the 12 biases) and keys/ (master keys) with the pairs they were made from "
        "(probe-pairs.jsonl, key-pairs.jsonl), manifest.json (counts, what was left out and why, each malformed row "
        "skipped, the length shortcut each set carries) and summary.json (the same without your paths) "
        "(docs/real.md). A rerun with the same settings reuses the folder.",
    ),
}


EVAL_STAGES = {
    "bias": (
        "bias sensitivity: Acc_ori, Acc_inj, BSR and over-correction per bias",
        "Judge the original and the injected view of every probe and report, per bias, category and "
        "overall: Acc_ori, Acc_inj, BSR (standard probes: the cue on the worse answer) and over-correction "
        "(mirror probes: the cue on the better one), with intervals. Resumable: rerun the same command; "
        "another judge, other settings or other probes in the same --out are refused.",
    ),
    "general": (
        "a general judge benchmark: accuracy over its pairs, both orders",
        "Judge a benchmark's pairs in both orders (reward models: once) and report accuracy per subset. "
        "Resumable as eval bias.",
    ),
    "scoring": (
        "scoring-bias probes (Li et al. 2025): rubric order, score ids, reference score; flip rate, MAD, correlations",
        "Score each response alone under the baseline prompt (rubric ascending, numeric ids, no reference) and "
        "under each --templates perturbation; report per template the flip rate and MAD against the baseline, "
        "Spearman and Pearson against gold scores where the data has them, the score distribution, the invalid "
        "rate and the verbosity correlation. Data: BiGGen-Bench, the Prometheus layout of FLASK, MT-Bench and "
        "Vicuna-Bench, or a generic JSONL. Resumable as eval bias.",
    ),
    "real": (
        "a judge on real text: RM-Bench hard/normal/easy, human labels, injected probes, master keys, beside cue-only judges",
        "Judge every set of a `biasaware build real` folder (RM-Bench hard, normal and easy; Auto-J and PandaLM "
        "human labels; LLMBar, JudgeBench, EvalBiasBench; held-out AlpacaEval; NullModel's master key) with the "
        "eval general protocol, and report each set's accuracy beside the cue-only judges (longer wins, in "
        "characters and words; more markdown wins) on the same pairs; then its injected probes (the 12 biases, "
        "both sides: BSR and over-correction) and the key battery against real reference answers with the eval "
        "bias protocol (docs/real.md). Resumable as eval bias.",
    ),
    "compare": (
        "finished `eval bias` or `eval real` runs: McNemar per bias or set on the shared probes or pairs, or "
        "several judges against a baseline",
        "Compare two judges on the probes both runs judged with the same content (standard and mirror "
        "probes separately); print the overlap and a table of per-bias McNemar tests. With --baseline, compare "
        "two or more judges against one of them, as the quickstart's tables do: one row per judge with Acc_ori, "
        "BSR and over-correction pooled over the biases both judged, and, where the runs judged master-key "
        "probes, false positives per key type and over both answer orders; p = McNemar exact against the "
        "baseline on the same probes. Two `quickstart --generative` studies are compared seed by seed; two or "
        "more `eval real` runs set by set on the pairs both judged, then on their probes.",
    ),
}


COMMANDS = {  # the commands without stages: help, description, options
    "validate": (
        "check a data file against the record contract",
        "Check every record of PATH; print one line per problem (file:line: field ...). Exit 0 when clean, 2 "
        "when not.",
        o.Validate,
    ),
    "preflight": (
        "a small fixed battery before trusting a judge: pass, warn or fail per bias; exit 1 on a fail",
        "Judge a fixed, seeded battery from the built-in corpus (the 12 biases and the injection probe in both "
        "directions, master-key probes, position in both orders, scoring-bias templates), grade every check against thresholds "
        "(defaults in biasaware/evaluation/preflight.py, overridable with --thresholds) and exit 0 (pass, warn or "
        "cannot tell), 1 (a fail threshold crossed) or 2 (usage error). Resumable: rerun the same command.",
        o.Preflight,
    ),
    "models": ("list or prepare the built-in offline models", None, o.Models),
    "quickstart": (
        "run a whole experiment: build, train, evaluate, report (built-in defaults; --real: your real text)",
        None,
        o.Quickstart,
    ),
    "sweep": (
        "train and evaluate a recipe over a grid of settings (JudgeBiasBench Table 6)",
        "Train each grid point through the real recipe, evaluate it on the bias benchmark in both directions (and "
        "general benchmarks), and write table.md, table.json and tradeoff.png. Resumable: rerun the same command. "
        "Settings: a YAML --config (biasaware/experiments/sweep.py, SweepSpec) and these flags.",
        o.Sweep,
    ),
    "release": (
        "check a checkpoint against its bias report and write a model card (optionally push to the hub)",
        "Refuse a report made from other weights, re-judge a few of its probes, and write a release folder (model "
        "files, README.md model card with the two-sided bias report, bias_report/, reproduce/). Uploads only with "
        "--push-to-hub (token from HF_TOKEN or the hub login; never printed). With --data, write a dataset card "
        "into a built folder instead, so that datasets.load_dataset(FOLDER) reads it.",
        o.Release,
    ),
}

STAGED = {  # the commands with stages: help, description, stages, options per stage
    "build": (
        "data builders: bias probes, bias-augmented training rows, teacher traces, real-text pairs",
        "Inject the 12 biases into base preference pairs and write records. `biasaware build STAGE --help` lists "
        "a stage's options.",
        BUILD_STAGES,
        o.BUILD_OPTIONS,
    ),
    "eval": (
        "evaluation: bias sensitivity (Acc_ori, Acc_inj, BSR), scoring bias, real text, general judge benchmarks, "
        "comparisons of runs",
        "`biasaware eval STAGE --help` lists a stage's options.",
        EVAL_STAGES,
        o.EVAL_OPTIONS,
    ),
}


def add_judge_options(parser, command: str, stage: str | None) -> None:
    """The judge's flags (:class:`~biasaware.judging.judges.JudgeSpec`) on eval stages and preflight;
    ``--pointwise`` only where pairs are judged as probes (eval bias, preflight)."""
    if command == "preflight":  # the battery runs in minutes on a CPU; raise --max-tokens to reason at length
        o.add_options(parser, JudgeSpec, defaults={"max_tokens": 128}, required=("name",))
    elif command == "eval" and stage != "compare":
        # scoring: each response with its own prompts (--templates), its score read by their own rule
        skip = (
            ()
            if stage == "bias"
            else ("pointwise", "template", "parse")
            if stage == "scoring"
            else ("pointwise",)
        )
        required = ("name",) if stage == "real" else ()
        o.add_options(parser, JudgeSpec, skip=skip, notes={"name": o.JUDGE_NOTE}, required=required)


class Parser(argparse.ArgumentParser):
    """argparse's parser, with a usage error in two lines: the error, and where the options are listed
    (a stage's whole usage block, twenty lines, buried the one line that mattered). argparse says a
    missing required option before an unknown flag, so a typo (``sweep --confg x --out o``) would be said
    only after the user had added what it asked for: a missing option is said with the unknown flags given
    beside it, each with the option it likely meant."""

    def parse_known_args(self, args=None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)  # this parser's own arguments
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        if message.startswith("the following arguments are required"):
            given = getattr(self, "given", [])
            unknown = [
                t
                for t in (given[: given.index("--")] if "--" in given else given)
                if t.startswith("-")
                and not t[1:2].isdigit()  # a negative number is a value
                and t.split("=", 1)[0] not in self._option_string_actions
            ]
            if unknown:
                message = f"{unrecognized(self, unknown)}; {message}"
        choice = re.match(r"argument \S+: invalid choice: '(.*)' \(choose from (.*)\)$", message)
        if choice:  # a mistyped command, stage or value: the closest one
            valid = re.findall(r"'([^']*)'", choice.group(2))
            close = difflib.get_close_matches(choice.group(1), valid, n=1, cutoff=0.6)
            message += f"; did you mean '{close[0]}'?" if close else ""
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` lists its options)\n")


def closest_option(parser: argparse.ArgumentParser, token: str) -> str | None:
    """The option a mistyped flag most likely meant (``--learning-rat``: ``--learning-rate``), matched
    against each option's flags and its setting's name (``--n-per-bias``: ``--n``), else ``None``."""
    if token.startswith("-") and not token.startswith("--") and len(token) > 2:
        token = "-" + token  # one dash too few: -max-tokens
    if not token.startswith("--"):
        return None
    names: dict[str, str] = {}
    for action in parser._actions:
        for flag in action.option_strings:
            names[flag] = flag
        if action.option_strings and action.dest:
            names.setdefault("--" + action.dest.replace("_", "-"), action.option_strings[-1])
    found = difflib.get_close_matches(token.split("=", 1)[0], list(names), n=1, cutoff=0.75)
    return names[found[0]] if found else None


def refuse_unknown(parser: argparse.ArgumentParser, args: argparse.Namespace, unknown: list[str]) -> None:
    """Exit 2 on unrecognised arguments, said by the command or stage the typo was made in, each flag with
    the option it likely meant (:func:`closest_option`)."""
    own = parser_of(parser, args)
    own.error(unrecognized(own, unknown))


def unrecognized(parser: argparse.ArgumentParser, unknown: list[str]) -> str:
    """The unrecognised arguments as typed, then the option each misspelt flag likely meant (a hint
    between a flag and its value would read as part of the command)."""
    hints = [f"{t}: did you mean {o}?" for t in unknown if (o := closest_option(parser, t))]
    return f"unrecognized arguments: {' '.join(unknown)}" + (f" ({'; '.join(hints)})" if hints else "")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="biasaware",
        description="Build bias probes, train and evaluate LLM judges that resist judgment bias.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"biasaware {__version__}")
    add_common_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, (summary, description, stages, declared) in STAGED.items():
        p = sub.add_parser(command, help=summary, description=description)
        children = p.add_subparsers(dest="stage", metavar="STAGE", required=True)
        for stage, (stage_summary, stage_description) in stages.items():
            s = children.add_parser(stage, help=stage_summary, description=stage_description)
            o.add_options(s, declared[stage])
            add_judge_options(s, command, stage)
    for command, (summary, description, declared) in COMMANDS.items():
        p = sub.add_parser(command, help=summary, description=description)
        o.add_options(p, declared)
        add_judge_options(p, command, None)
    for command in leaf_parsers(parser):  # `biasaware eval bias ... -v` works as `biasaware -v eval ...`
        add_common_options(command, default=argparse.SUPPRESS)
    for p in [parser, *all_parsers(parser)]:  # `build train --n 3` must not pass for --negatives
        p.allow_abbrev = False
    return parser


def _children(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [child for a in actions for child in dict.fromkeys(a.choices.values())]


def all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every command and stage parser below ``parser``."""
    return [p for child in _children(parser) for p in (child, *all_parsers(child))]


def parser_named(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The parser of the command (and stage) the leading ``words`` name (``["eval", "bias", ...]``)."""
    for word in words:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if action is None or word not in action.choices:
            break
        parser = action.choices[word]
    return parser


def parser_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The command's or stage's own parser for parsed ``args``: the one whose usage an error shows."""
    return parser_named(parser, [str(getattr(args, dest, None)) for dest in ("command", "stage")])


def typed_dests(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> set[str]:
    """The settings (dests) of the command's or stage's own parser that ``argv`` names by one of their
    flags (``--max-tokens 512`` or ``--max-tokens=512``; abbreviations are off), whatever the value:
    a flag typed at its default value is typed all the same."""
    head = argv[: argv.index("--")] if "--" in argv else argv
    tokens = {t.split("=", 1)[0] for t in head}
    own = parser_of(parser, args)
    return {a.dest for a in own._actions if tokens.intersection(a.option_strings)}


def leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that run something: every command, or each stage of a command that has stages."""
    return [p for p in all_parsers(parser) if not _children(p)]


def add_common_options(parser, default=None) -> None:
    """-v, --debug and --progress: before the command, or (``default=SUPPRESS``) after it."""
    flag = {"default": False if default is None else default}
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the library's logs (default off; progress bars are --progress)",
        **flag,
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for user errors (default off)", **flag
    )
    parser.add_argument(
        "--progress",
        choices=["auto", "on", "off"],
        default=default,
        help="progress bars: auto (default: on a terminal only), on (in logs too), off",
    )
