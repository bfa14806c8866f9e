"""Each command's options, declared once.

A command's options are one dataclass here (the judge's are the fields of
:class:`~biasaware.judging.judges.JudgeSpec`): a field's name, type, default and ``help`` make
the ``biasaware`` parser's flag (:func:`add_options`), and the same declaration names the Python
API's keywords (:func:`keywords`) and hands a parsed command's values to the library
(:func:`values`), as ``transformers.HfArgumentParser`` does for the recipes. A new option is one
field here and the code that uses it.

The metadata of a field (:func:`option`) says what a type cannot: its help, a flag that is not
the field's name (``--n`` for ``n_per_bias``), an argparse type or action, and the default the
help states when the parser's default is ``None`` because the value is resolved later (a
``--config`` file's, the folder's). A help that states no default gets ``(default X)`` from the
field's default.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import typing
from dataclasses import dataclass
from typing import Any, Literal

from biasaware.data.builders import BuildConfig
from biasaware.data.real import FOLDER_NAMES, HELDOUT
from biasaware.data.upstream import ALPACA_MARGIN
from biasaware.devices import DEVICES, DTYPES
from biasaware.errors import BiasAwareError, check_count, check_seed
from biasaware.evaluation.preflight import PER_BIAS, SCORING_PAIRS
from biasaware.judging.llm import LLMSpec
from biasaware.records import RECORD_TYPES

# ----------------------------------------------------------------------------- argparse types


COUNT_MAX = 2**31 - 1  # a count beyond it is a typo (and overflows the libraries' int32 settings)


def positive_int(text: str) -> int:
    """An argparse type: a whole number (:func:`whole_int`) of at least 1 (``--limit 0`` used to mean "all")."""
    value = whole_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def whole_int(text: str) -> int:
    """An argparse type: a whole number in ASCII digits (a sign allowed; no underscore, exponent or other
    script), at most :data:`COUNT_MAX` either way."""
    digits = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", digits) or abs(int(digits)) > COUNT_MAX:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at most {COUNT_MAX}")
    return int(digits)


def finite_float(text: str) -> float:
    """An argparse type: a finite number (``nan``, ``inf`` and ``1e400`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def seed_value(text: str) -> int:
    """An argparse type: a seed (:func:`biasaware.errors.check_seed`: 0 to 2**32 - 1)."""
    try:
        digits = text.strip()
        if not (digits.isascii() and digits.isdigit()):  # no sign, underscore, exponent or other script
            raise ValueError
        return check_seed(int(digits))
    except (ValueError, BiasAwareError):
        raise argparse.ArgumentTypeError(f"{text!r}: a seed is a whole number from 0 to 4294967295") from None


# ----------------------------------------------------------------------------- the mechanism


def option(help: str, default: Any = None, **argparse_settings: Any) -> Any:
    """A declared option: its ``help`` and default, and what argparse needs beyond the field's
    type: ``flag`` (default ``--the-name``), ``positional``, ``type``, ``choices``, ``metavar``,
    ``nargs``, ``action``, ``required``, ``dest``, ``stated`` (the default the help names when the
    parser's is ``None``), ``cli_default`` (the parser's default, where it is not the field's: a
    judge's mode is read from its folder) and ``api=False`` for a flag with no Python API keyword.
    A pydantic model's fields (:class:`~biasaware.judging.judges.JudgeSpec`) say the same in their
    ``description`` (the help) and ``json_schema_extra``."""
    return dataclasses.field(default=default, metadata={"help": help, **argparse_settings})


@dataclass(frozen=True)
class Declared:
    """One option as declared: by a dataclass field or a pydantic field."""

    name: str
    annotation: Any
    default: Any
    settings: dict[str, Any]


def declared(options: type) -> list[Declared]:
    """The options a dataclass or a pydantic model declares, in order."""
    if dataclasses.is_dataclass(options):
        hints = typing.get_type_hints(options)
        return [
            Declared(f.name, hints[f.name], f.default, dict(f.metadata))
            for f in dataclasses.fields(options)
            if "help" in f.metadata
        ]
    found = []
    for name, info in options.model_fields.items():  # a pydantic model: help in its descriptions
        extra = dict(info.json_schema_extra or {})
        if extra.get("cli", True) and info.description:
            settings = {"help": info.description, **extra}
            if any(getattr(m, "ge", None) == 1 for m in info.metadata):
                settings["ge"] = 1
            found.append(
                Declared(name, info.annotation, None if info.is_required() else info.default, settings)
            )
    return found


def _choices(annotation: Any) -> tuple | None:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    if len(args) == 1 and typing.get_origin(args[0]) is Literal:  # Literal[...] | None
        return typing.get_args(args[0])
    return None


# options that name files or folders: "~/x" is read as a shell reads it (quoted, the shell leaves it)
PATHS = frozenset(
    ("out", "data", "source", "config", "real", "path", "checkpoint", "report", "bench", "runs")
    + ("recipe_config", "train_file", "baseline", "thresholds")
)


def user_path(value: str) -> str:
    """A path option's value with a leading ``~`` expanded (``~/runs``); anything else as given."""
    return os.path.expanduser(value)


def _type(item: Declared) -> Any:
    """The argparse type of a field: ``int`` with a lower bound of 1 is :func:`positive_int`; a path
    option's (:data:`PATHS`) :func:`user_path`."""
    plain = {a for a in (typing.get_args(item.annotation) or (item.annotation,)) if a is not type(None)}
    if plain == {int}:
        return positive_int if item.settings.get("ge") == 1 else whole_int
    if item.name in PATHS and (plain == {str} or plain == {list[str]}):
        return user_path
    return finite_float if plain == {float} else None


def argparse_settings(item: Declared, default: Any) -> dict[str, Any]:
    """What ``add_argument`` takes for one declared option."""
    settings = {
        k: v for k, v in item.settings.items() if k not in ("flag", "positional", "stated", "api", "ge")
    }
    if item.annotation is bool or item.settings.get("action") == "store_true":
        settings.setdefault("action", "store_true")
        # a `bool | None` flag defaults to None: not given, so the preset's value stands
        default = None if default is None and item.annotation is not bool else bool(default)
    elif "type" not in settings and "action" not in settings:
        choices = _choices(item.annotation)
        if choices is not None:
            settings.setdefault("choices", list(choices))
        elif _type(item) is not None:
            settings["type"] = _type(item)
    if item.settings.get("positional"):  # named in usage and errors as in the help: ACTION, PATH
        settings.setdefault("metavar", item.name.upper())
    if not item.settings.get("positional"):
        settings["default"] = default
        settings.setdefault("dest", item.name)
    elif settings.get("nargs") in (
        "*",
        "?",
    ):  # argparse counts a '*' positional without a default as required
        settings["default"] = default
    stated = item.settings.get("stated", default)
    if (
        not item.settings.get("positional")
        and "(default" not in settings["help"]
        and "required" not in settings["help"]
    ):
        shown = "on" if stated is True else "off" if stated is False else stated
        settings["help"] += " (default: none)" if stated is None else f" (default {shown})"
    return settings


def add_options(parser, options: type, *, skip=(), defaults=None, notes=None, required=()) -> None:
    """Add the declared ``options`` to an argparse ``parser``, less ``skip``: ``defaults`` replace
    declared defaults, a ``notes`` text ends an option's help in place of its default, and those in
    ``required`` are required of this command (argparse names every one missing at once)."""
    for item in declared(options):
        if item.name in skip:
            continue
        if item.name in required:
            item.settings.update(required=True, help=item.settings["help"] + " (required)")
        elif notes and item.name in notes:
            item.settings["help"] += f" ({notes[item.name]})"
        default = (defaults or {}).get(item.name, item.settings.get("cli_default", item.default))
        item.settings.pop("cli_default", None)
        if item.settings.get("positional"):
            parser.add_argument(item.name, **argparse_settings(item, default))
        else:
            flag = item.settings.get("flag", "--" + item.name.replace("_", "-"))
            parser.add_argument(flag, **argparse_settings(item, default))


def values(options: type, args: argparse.Namespace, *, skip=()) -> dict[str, Any]:
    """A parsed command's values of the declared ``options`` (those it has), by field name."""
    return {
        item.name: getattr(args, item.settings.get("dest", item.name))
        for item in declared(options)
        if item.name not in skip and hasattr(args, item.settings.get("dest", item.name))
    }


TYPED = "typed_flags"  # the parsed arguments' set of dests typed on the command line (the CLI sets it)


def given_flags(options: type, args: argparse.Namespace, names=None) -> list[str]:
    """The flags of the declared ``options`` (or of those among ``names``) a parsed command was
    given, as typed: those on its command line (``args.typed_flags``, set by the CLI), even at their
    default value; without that set, those whose value differs from the parser default (the declared
    one, or ``cli_default``)."""
    typed = getattr(args, TYPED, None)
    found = []
    for item in declared(options):
        dest = item.settings.get("dest", item.name)
        if (names is not None and item.name not in names) or item.settings.get("positional"):
            continue
        if not hasattr(args, dest):
            continue
        default = item.settings.get("cli_default", item.default)
        value = getattr(args, dest)
        if (dest in typed) if typed is not None else (value != default):
            flag = item.settings.get("flag", "--" + item.name.replace("_", "-"))
            found.append(flag if isinstance(value, bool) else f"{flag} {value}")
    return found


def keywords(options: type, given: dict[str, Any], what: str) -> dict[str, Any]:
    """The Python API's keywords for a command: those its options declare (less any marked
    ``api=False``), less those given as ``None`` (the default); an unknown one is a
    :class:`BiasAwareError` that lists the valid ones."""
    items = {i.name: i for i in declared(options) if i.settings.get("api", True)}
    unknown = [k for k in given if k not in items]
    if unknown:
        raise BiasAwareError(f"{what} takes no {', '.join(unknown)}; its options: {', '.join(items)}")
    return {k: keyword_value(items[k], v, what) for k, v in given.items() if v is not None}


def keyword_value(item: Declared, value: Any, what: str) -> Any:
    """A Python API keyword's value, checked by the rule its flag follows on the command line: a switch is
    ``True`` or ``False`` (a string such as ``"false"`` is refused, not read as true), a choice one of its
    choices, a seed :func:`~biasaware.errors.check_seed`'s and a count :func:`~biasaware.errors.check_count`'s
    (``scoring_max_tokens=0`` is refused, not run); a number is not a bool or a string."""
    kind = item.settings.get("type") or _type(item)
    if item.annotation is bool or item.settings.get("action") == "store_true":
        if not isinstance(value, bool):
            raise BiasAwareError(f"{what}: {item.name} is True or False; got {value!r:.80}")
    elif (choices := item.settings.get("choices") or _choices(item.annotation)) is not None:
        if value not in choices:
            raise BiasAwareError(f"{what}: {item.name} {value!r:.80}: one of {', '.join(map(str, choices))}")
    elif kind is seed_value:
        check_seed(value, f"{what}: {item.name}")
    elif kind is positive_int:
        check_count(value, f"{what}: {item.name}")
    elif kind in (whole_int, finite_float):
        number = int if kind is whole_int else int | float
        if isinstance(value, bool) or not isinstance(value, number):
            raise BiasAwareError(f"{what}: {item.name} is a number; got {value!r:.80}")
        try:
            kind(str(value))  # the flag's own bounds
        except argparse.ArgumentTypeError as exc:
            raise BiasAwareError(f"{what}: {item.name} {exc}") from None
    return value


# ----------------------------------------------------------------------------- shared options

DEVICE_HELP = f"where models run: {', '.join(DEVICES)}"
DTYPE_HELP = "model weights' dtype"


@dataclass
class Where:
    """Where models run."""

    device: str = option(DEVICE_HELP + " (default auto: the GPU when there is one)", "auto")
    dtype: str = option(
        DTYPE_HELP + " (default auto: bfloat16 on a GPU that supports it, float32 on the CPU)",
        "auto",
        choices=list(DTYPES),
    )


# ----------------------------------------------------------------------------- build


def _build(name: str) -> Any:
    return BuildConfig.__dataclass_fields__[name].default


@dataclass
class Build:
    """``build bench|train|traces``: unset flags take the ``--config`` file's value, else
    :class:`~biasaware.data.builders.BuildConfig`'s default (which the help states)."""

    out: str | None = option("output folder (required)", required=True, api=False)
    config: str | None = option(
        "YAML file of BuildConfig settings (biasaware/data/builders.py); flags override it", api=False
    )
    source: str | None = option(
        "base pairs: builtin, helpsteer3, gram, a hub name, or a local JSONL/Parquet file",
        stated=_build("source"),
    )
    split: str | None = option(
        "the source's split (default: train; builtin: test for bench, train otherwise). Builtin: test = held-out "
        "task families, train = the others, all"
    )
    families: str | None = option(
        "builtin source: task families: reasoning (arithmetic, sorting, ...), facts (single-fact questions a "
        "small encoder can learn), all, or a comma list",
        stated=_build("families"),
    )
    biases: str | None = option("all, a category, or a comma list of biases", stated=_build("biases"))
    rewriter: Literal["template", "llm"] | None = option(
        "who writes the superficial-bias rewrites", stated=_build("rewriter")
    )
    verifier: Literal["auto", "rule", "llm", "fluency", "none"] | None = option(
        "the filter that drops probes whose injection changed the answer's quality (rule, llm), or whose rewrite "
        "reads less fluently than the text it was written into (fluency: a causal LM's likelihood)",
        stated=_build("verifier"),
    )
    fluency_margin: float | None = option(
        "--verifier fluency: the largest fluency gap kept (nats per token: the written-in tokens' mean NLL minus "
        "the original text's)",
        metavar="NATS",
        stated=_build("fluency_margin"),
    )
    llm_backend: Literal["openai", "transformers", "vllm"] | None = option(
        "backend of the LLM roles", stated=LLMSpec.backend, api=False
    )
    llm_model: str | None = option(
        "model of the LLM roles: its name at the endpoint, or a local model", api=False
    )
    llm_base_url: str | None = option("OpenAI-compatible endpoint, e.g. http://localhost:8000/v1", api=False)
    concurrency: int | None = option(
        "LLM calls in flight",
        type=positive_int,
        stated=LLMSpec.concurrency,
        api=False,
    )
    seed: int | None = option("seed of every random choice", type=seed_value, stated=_build("seed"))
    device: str | None = option(
        "transformers/vllm LLM backend: auto, cpu, cuda, cuda:N or mps (default auto)", api=False
    )
    dtype: str | None = option(
        "transformers/vllm LLM backend: the weights' dtype (default auto)", choices=list(DTYPES), api=False
    )

    LLM_FLAGS: typing.ClassVar = {
        "llm_backend": "backend",
        "llm_model": "model",
        "llm_base_url": "base_url",
        "concurrency": "concurrency",
        "device": "device",
        "dtype": "dtype",
    }


def _key_types() -> Any:
    return option(
        "the master keys drawn (masterkey probes, key rows): battery (short non-answers, the default), junk "
        "instead (scrambled words and code-like symbols as long as the answer, a note to the grader), all (both), "
        "or a comma list of sets and types",
        stated=_build("key_types"),
    )


@dataclass
class BuildBench(Build):
    n_per_bias: int | None = option(
        "probes per bias and side", flag="--n", type=positive_int, stated=_build("n_per_bias")
    )
    direction: Literal["standard", "mirror", "both"] | None = option(
        "standard: the cue on the worse answer (cue-following); mirror: on the better one (over-correction); "
        f"both (default {_build('direction')})"
    )
    mirror: bool = option("the same as --direction mirror (default off)", False, api=False)
    key_types: str | None = _key_types()


@dataclass
class BuildTrain(Build):
    n_negatives: int | None = option(
        "bias negatives per row, paper augmentation",
        flag="--negatives",
        type=positive_int,
        stated=_build("n_negatives"),
    )
    cues: Literal["none", "natural"] | None = option(
        "natural: each pair's superficial cue sits on the chosen side at cue_rates (0.7), as in human preference "
        "data; none: no cue",
        stated=_build("cues"),
    )
    augment: Literal["paper", "balanced"] | None = option(
        "paper: bias negatives (the cue on the rejected side); balanced: the cue on neither, either and both "
        "sides, so it carries no label information",
        stated=_build("augment"),
    )
    key_negatives: float | None = option(
        "the share of pairs that also give a master-key row (rejected: a non-answer such as ':' or the answer cut "
        "before it answers); with --augment balanced also a short-correct row",
        metavar="SHARE",
        stated=_build("key_negatives"),
    )
    key_types: str | None = _key_types()
    max_rows: int | None = option("at most this many base pairs, sampled (default: all)", type=positive_int)


@dataclass
class BuildTraces(Build):
    n_traces_per_bias: int | None = option(
        "traces per bias", flag="--n", type=positive_int, stated=_build("n_traces_per_bias")
    )
    teacher: Literal["auto", "rule", "llm"] | None = option(
        "who writes the traces: auto (rule on the built-in corpus, whose answers it checks; an LLM on other "
        "sources), rule, llm",
        stated=_build("teacher"),
    )


@dataclass
class BuildReal:
    """``build real``: the real-text sources read from the user's copies."""

    out: str | None = option("output folder (required)", required=True)
    real: str | None = option(
        "folder with one sub-folder per source, each a copy of its public repository (or of the files it "
        f"needs): {', '.join(names[0] + '/' for names in FOLDER_NAMES.values())} (required unless every "
        "source is given by --source)",
        metavar="PATH",
    )
    source: list[str] | None = option(
        f"a source somewhere else (repeatable); NAME is one of {', '.join(FOLDER_NAMES)}",
        action="append",
        metavar="NAME=PATH",
    )
    seed: int = option(
        "seed of the split by instruction and of the injected probes and master keys (probes/, keys/)",
        0,
        type=seed_value,
    )
    heldout: float = option("share of AlpacaEval instructions held out, never trained on", HELDOUT)
    margin: float = option(
        "an AlpacaEval preference is a pair only this far from 1.5 or further; nearer (and 1.5 itself) is a tie, left out",
        ALPACA_MARGIN,
    )


BUILD_OPTIONS = {"bench": BuildBench, "train": BuildTrain, "traces": BuildTraces, "real": BuildReal}

# ----------------------------------------------------------------------------- eval


@dataclass
class Seeded:
    """What every judging command shares beyond the judge (:class:`JudgeSpec`'s fields)."""

    seed: int = option("bootstrap and sampling seed", 0, type=seed_value)


@dataclass
class Judged(Seeded):
    """A judging command whose one output folder can be scored again from its judgments."""

    rescore: bool = option("score --out/judgments.jsonl again, without a model", False)


@dataclass
class EvalBias(Judged):
    out: str | None = option(
        "output folder (judgments.jsonl, summary.json, report.md, sensitivity.png, accuracy.png; required)",
        api=False,
        required=True,
    )
    data: str | None = option(
        "probes: a folder from `biasaware build bench` or a probe file (required unless --rescore)", api=False
    )
    policy: Literal["symmetric", "judgebiasbench"] = option(
        "symmetric: a tie or invalid verdict is wrong on either view; judgebiasbench: an injected tie/invalid is "
        "not a flip",
        "symmetric",
    )
    biases: str | None = option("all, a category, or a comma list of biases (default all)")
    limit: int | None = option(
        "a seeded sample (--seed) of N probes per bias and side, drawn by base pair so a probe and its mirror stay "
        "together (default: all)",
        type=positive_int,
    )


@dataclass
class EvalGeneral(Judged):
    out: str | None = option(
        "output folder (judgments.jsonl, summary.json, report.md; required)", api=False, required=True
    )
    benchmark: str | None = option(
        "rewardbench, judgebench, rm-bench, llmbar (hub) or a local file/folder of RewardBench, JudgeBench, RMB, "
        "RM-Bench, LLMBar, EvalBiasBench, Auto-J, PandaLM, AlpacaEval annotations or biasaware pairs (required "
        "unless --rescore)",
        api=False,
    )
    split: str | None = option("split of a hub benchmark (default: the benchmark's own)")
    limit: int | None = option(
        "a seeded sample of N pairs (--seed), stratified by subset (default: all)", type=positive_int
    )


@dataclass
class EvalScoring(Judged):
    out: str | None = option(
        "output folder (judgments.jsonl, summary.json, report.md, score_tendency.png, stability.png; required)",
        api=False,
        required=True,
    )
    data: str | None = option(
        "items to score: a BiGGen-Bench JSON, a Prometheus-layout file (FLASK, MT-Bench, Vicuna-Bench) or a JSONL "
        "of {id, instruction, response, rubric, references, gold} (required unless --rescore)",
        api=False,
    )
    templates: str | None = option(
        "comma list of perturbed prompts, each parts joined by '+': desc, random, letter, roman, ref-1 to ref-5 "
        "(e.g. desc,roman,desc+letter) (default: desc, random, letter, roman and every ref-k all items have a "
        "reference for)"
    )
    reference_writer: str | None = option(
        "a model that writes the reference answers a ref-k template needs and the data lacks (generate-then-"
        "review, Li et al. 2025 fig. 4) (default: none; such a template is refused)"
    )
    reference_reviewer: str | None = option(
        "the model that accepts or rejects each draft (default: the writer)"
    )
    reference_backend: Literal["transformers", "openai", "vllm"] = option(
        "backend of the writer and reviewer", "transformers"
    )
    reference_base_url: str | None = option("OpenAI-compatible endpoint of the writer and reviewer")
    reference_attempts: int = option("drafts per item and level before giving up", 3, type=positive_int)
    limit: int | None = option("the first N items (default: all)", type=positive_int)


@dataclass
class EvalReal(Seeded):  # no --rescore: a rerun of the same command resumes each of its folders
    out: str | None = option(
        "output folder (real.json, report.md, and a folder per set; required)", api=False, required=True
    )
    data: str | None = option(
        "a folder written by `biasaware build real` (required)", api=False, required=True
    )
    probe_limit: int | None = option(
        "a seeded sample (--seed) of N injected probes per bias and side (default: all)", type=positive_int
    )
    limit: int | None = option(
        "a seeded sample (--seed) of at most N pairs per set, stratified by subset (default: all)",
        type=positive_int,
    )


@dataclass
class EvalCompare:
    runs: list[str] | None = option(
        "finished `eval bias` output folders: two, or with --baseline two or more; or two folders of "
        "`quickstart --generative --seeds`, the second compared with the first seed by seed; or two or more "
        "`eval real` folders, each against the first (or --baseline) set by set (required)",
        nargs="+",
        required=True,
        metavar="DIR",
    )
    baseline: str | None = option(
        "one of --runs: compare every run against it (default: none, the two-run comparison; eval real runs: the "
        "first)",
        metavar="DIR",
    )
    view: Literal["original", "injected"] | None = option(
        "which view's verdicts two eval bias runs are compared on (default: injected); not with --baseline or "
        "studies, which read both views"
    )
    out: str | None = option("also write the comparison to this JSON file", api=False)
    by_id: bool = option(
        "compare runs without fingerprint.json by probe id, unchecked (default: refused)", False
    )


EVAL_OPTIONS = {
    "bias": EvalBias,
    "general": EvalGeneral,
    "scoring": EvalScoring,
    "real": EvalReal,
    "compare": EvalCompare,
}
JUDGE_NOTE = "required unless --rescore"


@dataclass
class Preflight:
    out: str | None = option("output folder (default: runs/preflight/NAME)", api=False)
    thresholds: str | None = option("YAML or JSON file overriding the default thresholds")
    per_bias: int = option(
        "probes per bias and side in the battery; a verdict is decided by its 95%% interval, and too few probes "
        "give CANNOT TELL",
        PER_BIAS,
        type=positive_int,
    )
    families: str | None = option(
        "task families of the built-in corpus for the battery: facts, reasoning, all, or a comma list (default: "
        "facts for a reward model, which cannot do the multi-step reasoning items; all otherwise)"
    )
    scoring_pairs: int = option(
        "pairs whose two responses are scored under each scoring template", SCORING_PAIRS, type=positive_int
    )
    fail_on: Literal["fail", "warn"] = option(
        "exit 1 on a fail (default), or on a warning or a cannot-tell too", "fail"
    )
    seed: int = option("the battery's seed", 0, type=seed_value)
    scoring_max_tokens: int = option(
        "generation budget per score: the scoring prompt asks for feedback before the score",
        256,
        type=positive_int,
    )


# ----------------------------------------------------------------------------- other commands


@dataclass
class Validate:
    path: str = option(
        "JSONL, JSON, Parquet, a folder of them, a saved HF dataset, or a hub name", positional=True
    )
    kind: str = option(
        "record kind (default auto: guessed from the first record)", "auto", choices=["auto", *RECORD_TYPES]
    )
    split: str | None = option(
        "split of a hub or saved HF dataset (default: train); not for a file, read whole"
    )
    allow_empty: bool = option("exit 0 for a file with no records (default: exit 2)", False)


@dataclass
class Models(Where):
    action: Literal["list", "prepare"] = option(
        "list (default): the built-in models; prepare: load each once (offline check)",
        positional=True,
        nargs="?",
        cli_default="list",
    )
    names: list[str] | None = option(
        "built-in names to list or prepare (default: all)", positional=True, nargs="*"
    )


@dataclass
class Sweep:
    """``sweep``: the flags over a :class:`~biasaware.experiments.sweep.SweepSpec` file; each is
    named as the spec's setting (``--recipe-config`` is its ``config``)."""

    config: str | None = option(
        "sweep YAML: grid, recipe, data, bench, evaluation (default: none; flags only)", api=False
    )
    out: str | None = option("the sweep folder (required)", required=True, api=False)
    grid: list[str] | None = option(
        "a grid axis, repeatable; replaces the file's grid (default: the file's, else one point)",
        action="append",
        metavar="KEY=V1,V2",
    )
    seeds: str | None = option("training seeds, e.g. 0,1,2 (default 0)")
    recipe: Literal["reward", "sft", "grpo"] | None = option("the recipe to train (default reward)")
    recipe_config: str | None = option(
        "the recipe's base config (default recipes/configs/minilm-l6/reward_infonce.yaml)"
    )
    launch: str | None = option("python (default), inline (in this process), or an accelerate config file")
    bench: str | None = option(
        "a built benchmark folder (default: built into OUT/bench from the built-in corpus)"
    )
    train_file: str | None = option("fixed training rows (default: built per point from the build settings)")
    limit: int | None = option("probes per bias and side (default: all)", type=positive_int)
    general: list[str] | None = option(
        "a general benchmark to evaluate every point on, repeatable", action="append"
    )
    device: str | None = option("where the evaluations run (default auto)")
    dtype: str | None = option("the evaluations' dtype (default auto)")


@dataclass
class Release:
    checkpoint: str | None = option("the trained model folder (required unless --data)", api=False)
    report: str | None = option(
        "its `eval bias` output folder, or its `eval real` folder (its injected probes are then the bias "
        "report and its sets stand on the card) (required unless --data)",
        api=False,
    )
    data: str | None = option(
        "a `biasaware build` output folder: write its dataset card (README.md: configs, features, source license, "
        "how it was built) in place",
        api=False,
    )
    out: str | None = option("the release folder (default: CHECKPOINT-release next to it)", api=False)
    name: str | None = option(
        "the model's title and hub id in the card, e.g. you/judge-name (default: --push-to-hub, else the release "
        "folder's name)"
    )
    general: list[str] | None = option(
        "an `eval general` output folder of this checkpoint, repeatable", action="append"
    )
    bench: str | None = option(
        "the benchmark folder, when it moved since the report was made (default: the report's)"
    )
    probes: int = option("probes to re-judge at release, spread over the biases", 8, type=positive_int)
    license: str | None = option("license for the card (default: the base model's when known, else other)")
    push_to_hub: str | None = option(
        "upload to this hub model repo, owner/name (default: no upload)", metavar="NAME"
    )
    private: bool = option("create the hub repo private (default: public)", False)
    allow_weak_general: bool = option(
        "release a judge whose general accuracy was never measured (no --general) or is at chance; the card says "
        "so (default: refused)",
        False,
    )


@dataclass
class Budget:
    """The generative study's budget: each flag replaces its preset's value."""

    start_steps: int | None = option(
        "--generative (not with --real): SFT steps of the starting judge every arm starts from (default: the preset's; cpu 200 of 4 "
        "rows)",
    )
    sft_steps: int | None = option(
        "--generative: each arm's own SFT steps (default: the preset's; cpu 80 of 4 rows; with --real: gpu 240 of "
        "8, cpu 4 of 2)",
    )
    grpo_steps: int | None = option(
        "--generative: GRPO steps per arm (default: the preset's; cpu 12 of 16 completions; with --real: gpu 40 of "
        "64, cpu 1 of 4)",
    )
    grpo_lr: float | None = option(
        "--generative (not with --real): GRPO's learning rate (default: the preset's; cpu 5e-05, gpu 1e-05); a lower "
        "one keeps the sampled verdicts varied longer, so more of GRPO's groups carry signal (docs/generative.md)",
    )
    grpo_pool: int | None = option(
        "--generative (not with --real): prompts scored to choose GRPO's prompts of most signal from (default: the preset's; cpu "
        "192, gpu 3200)",
    )
    num_generations: int | None = option(
        "--generative (not with --real): completions sampled per prompt, GRPO's group size, at least 2 (default: the preset's; cpu 4, "
        "gpu 12); GRPO trains on as many prompts a step as the preset, the completions a step grow with the group; "
        "a larger group is mixed more often (docs/generative.md)",
        metavar="N",
    )
    grpo_temperature: float | None = option(
        "--generative (not with --real): GRPO's sampling temperature, above 0 and at most 2 (default: the preset's; cpu 1, gpu 1.5; a "
        "--grpo-signal-target chooses it instead); a hotter sampling keeps more of GRPO's groups mixed (docs/generative.md)",
    )
    grpo_signal_target: float | None = option(
        "--generative (not with --real): GRPO samples at the lowest temperature from 1 to 1.5 at which the chosen prompts' expected "
        "share of groups with signal reaches this share (default: the preset's; cpu 0, gpu 0: none, each samples at its --grpo-temperature)",
        metavar="SHARE",
    )
    trainable_layers: int | None = option(
        "--generative: top layers trained (default: the preset's; cpu 12 of 30, gpu all; with --real: cpu 4)",
    )
    bench_probes: int | None = option(
        "--generative (not with --real): benchmark probes asked per trained cue and side (default 55)"
    )
    sft_bench_probes: int | None = option(
        "--generative (not with --real): each arm's SFT checkpoint is scored on a fixed sample of the benchmark, this many probes per "
        "trained cue and side, paired there with its SFT+GRPO judge (default: the preset's; cpu 28, gpu 0: every "
        "probe)",
        metavar="N",
    )
    cue_rate: float | None = option(
        "--generative (not with --real): share of the natural training pairs with the cue on the chosen answer, from 0 to 1 "
        "(default 0.7)"
    )
    reward_probes: int | None = option(
        "--generative (not with --real): also score every judge on probes of position and master keys, this many a side, for what a "
        "judge used as a reward needs: position consistency, master-key false positives in both orders (default 0: "
        "none)",
        metavar="N",
    )
    both_orders: bool | None = option(
        "--generative (not with --real): GRPO's prompts in both answer orders in one batch, with a reward for the same answer in "
        "both (the swap-consistency reward; the balanced arms' cue-consistency reward covers the swapped order "
        "already); SFT unchanged (default off)",
        action="store_true",
    )
    key_negatives: float | None = option(
        "--generative (not with --real): share of training pairs that also give a master-key row (the chosen answer against a "
        "non-answer; on balanced rows also a short-correct row), in every judge's data, from 0 to 1 (default 0)",
        metavar="SHARE",
    )


BUDGET_FLAGS = tuple(item.name for item in declared(Budget))
REAL_BUDGET = ("sft_steps", "grpo_steps", "trainable_layers")  # what --real --generative takes


@dataclass
class Quickstart(Budget, Where):
    out: str | None = option(
        "output folder (default: runs/quickstart; runs/generative with --generative, runs/real with --real, "
        "runs/real-generative with both)"
    )
    seed: int | None = option("seed of every stage (default 0)", type=seed_value)
    seeds: str | None = option(
        "--generative or --real: training seeds run one after another, e.g. 0-9 or 0,1,2 (default 0); with two or "
        "more finished seeds in --out the study's aggregate is written"
    )
    generative: bool = option(
        "run the generative judge study instead (default: the reward-model experiment): per seed, SFT of "
        "smollm2-135m-instruct into a starting judge, then four arms (baseline, paper, balanced with the "
        "cue-consistency reward, balanced-acc: its ablation) of SFT and GRPO, evaluated two-sided on one fixed "
        "benchmark; seeds run one after another, each resumable (docs/generative.md). With --real: generative "
        "judges of real text (SFT on verdicts, then GRPO; the gpu preset on a CUDA device, else a small check)",
        False,
    )
    real: str | None = option(
        "run the real-text experiment instead: reward models trained on real AlpacaEval pairs in seven arms "
        "(baseline, paper, balanced, resampled, junk, junk-only, scrambled-only), measured two-sided on real benchmarks, injected probes and master "
        "keys across --seeds, with seed-level tests; PATH holds your copies of the public sets, one sub-folder "
        "each, as for `build real` (docs/real.md)",
        metavar="PATH",
    )
    source: list[str] | None = option(
        "--real: a source somewhere else (repeatable), as for `build real`",
        action="append",
        metavar="NAME=PATH",
    )
    budget: Literal["cpu", "gpu"] | None = option(
        "budget preset of --generative, with or without --real (default: gpu on a CUDA device, else cpu)"
    )
    dtype: str = option(
        DTYPE_HELP
        + " (default auto: bfloat16 on a GPU that supports it, float32 on the CPU); --generative (without --real, "
        "whose configs train in float32): also the precision it trains in (bfloat16: mixed precision), and auto is bfloat16 where the hardware computes it "
        "(a recent GPU; a CPU with AMX or AVX512-BF16, where a training step or a judged view runs 1.4 to 2.6 times "
        "as fast) and float32 elsewhere; a study's folder keeps the precision it was made with",
        "auto",
        choices=list(DTYPES),
    )
    arms: str | None = option(
        "the arms to run, a comma list with baseline among them: --generative: baseline, paper, balanced, "
        "balanced-acc (default: all four); --real: baseline, paper, balanced, resampled, junk, junk-only, "
        "scrambled-only (default: all seven)"
    )
