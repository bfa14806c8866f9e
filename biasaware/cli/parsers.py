"""The ``biasaware`` command's arguments: one parser per command and stage, their help, and the
options every command shares. The commands themselves are in :mod:`biasaware.cli.commands`."""

from __future__ import annotations

import argparse
from typing import Any

from biasaware.errors import BiasAwareError
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
        "verdict for each; write OUT/<bias>.jsonl of SFT traces. Resumable.",
    ),
}


def build_default(name: str) -> Any:
    """A :class:`~biasaware.data.builders.BuildConfig` default, for the help texts."""
    from biasaware.data.builders import BuildConfig

    return BuildConfig.__dataclass_fields__[name].default


def add_build_parser(sub) -> None:
    p = sub.add_parser(
        "build",
        help="data builders: bias probes, bias-augmented training rows, teacher traces",
        description="Inject the 12 biases into base preference pairs and write records. "
        "`biasaware build STAGE --help` lists a stage's options.",
    )
    stages = p.add_subparsers(dest="stage", metavar="STAGE", required=True)
    for stage, (summary, description) in BUILD_STAGES.items():
        s = stages.add_parser(stage, help=summary, description=description)
        add_build_arguments(s, stage)
    add_real_parser(stages)


def add_real_parser(stages) -> None:
    """``build real``: the real-text sources read from the user's copies, split and described."""
    from biasaware.data.real import FOLDER_NAMES, HELDOUT
    from biasaware.data.upstream import ALPACA_MARGIN

    s = stages.add_parser(
        "real",
        help="real preference text: AlpacaEval pairs split by instruction, real benchmarks, NullModel keys",
        description="Read your copies of AlpacaEval's annotations and the real benchmarks (RM-Bench, Auto-J, PandaLM, "
        "JudgeBench, LLMBar, EvalBiasBench) in their upstream layouts and write OUT/train.jsonl, heldout.jsonl, "
        "masterkey-null.jsonl, bench/<source>.jsonl and manifest.json: counts, what was left out and why, and the "
        "length shortcut each set carries (docs/real.md). A rerun with the same settings reuses the folder.",
    )
    s.add_argument("--out", required=True, help="output folder (required)")
    s.add_argument(
        "--real",
        metavar="PATH",
        help="folder with one sub-folder per source, each a copy of its public repository (or of the files it "
        f"needs): {', '.join(names[0] + '/' for names in FOLDER_NAMES.values())} (required unless every "
        "source is given by --source)",
    )
    s.add_argument(
        "--source",
        action="append",
        metavar="NAME=PATH",
        help=f"a source somewhere else (repeatable); NAME is one of {', '.join(FOLDER_NAMES)} (default: none)",
    )
    s.add_argument("--seed", type=seed_value, default=0, help="seed of the split by instruction (default 0)")
    s.add_argument(
        "--heldout",
        type=float,
        default=HELDOUT,
        help=f"share of AlpacaEval instructions held out, never trained on (default {HELDOUT})",
    )
    s.add_argument(
        "--margin",
        type=float,
        default=ALPACA_MARGIN,
        help="an AlpacaEval preference is a pair only this far from 1.5 or further; nearer is a tie, left out "
        f"(default {ALPACA_MARGIN})",
    )


def add_build_arguments(p, stage: str) -> None:
    """One build stage's options; unset flags take the --config file's value, else the default shown."""
    from biasaware.devices import DTYPES
    from biasaware.judging.llm import LLMSpec

    d = build_default
    p.add_argument("--out", required=True, help="output folder (required)")
    p.add_argument(
        "--config",
        help="YAML file of BuildConfig settings (biasaware/data/builders.py); flags override it (default: none)",
    )
    p.add_argument(
        "--source",
        help=f"base pairs: builtin, helpsteer3, gram, a hub name, or a local JSONL/Parquet file "
        f"(default {d('source')})",
    )
    split_default = "test" if stage == "bench" else "train"
    p.add_argument(
        "--split",
        help=f"the source's split (default: train; builtin: {split_default}). Builtin: test = held-out task "
        "families, train = the others, all",
    )
    p.add_argument(
        "--families",
        help="builtin source: task families: reasoning (arithmetic, sorting, ...), facts (single-fact "
        f"questions a small encoder can learn), all, or a comma list (default {d('families')})",
    )
    p.add_argument("--biases", help=f"all, a category, or a comma list of biases (default {d('biases')})")
    if stage == "bench":
        p.add_argument("--n", type=positive_int, help=f"probes per bias and side (default {d('n_per_bias')})")
        p.add_argument(
            "--direction",
            choices=["standard", "mirror", "both"],
            help="standard: the cue on the worse answer (cue-following); mirror: on the better one "
            f"(over-correction); both (default {d('direction')})",
        )
        p.add_argument("--mirror", action="store_true", help="the same as --direction mirror (default off)")
    if stage == "train":
        p.add_argument(
            "--negatives",
            type=positive_int,
            help=f"bias negatives per row, paper augmentation (default {d('n_negatives')})",
        )
        p.add_argument(
            "--cues",
            choices=["none", "natural"],
            help="natural: each pair's superficial cue sits on the chosen side at cue_rates (0.7), as in "
            f"human preference data; none: no cue (default {d('cues')})",
        )
        p.add_argument(
            "--augment",
            choices=["paper", "balanced"],
            help="paper: bias negatives (the cue on the rejected side); balanced: the cue on neither, either "
            f"and both sides, so it carries no label information (default {d('augment')})",
        )
        p.add_argument(
            "--key-negatives",
            type=float,
            metavar="SHARE",
            help="the share of pairs that also give a master-key row (rejected: a non-answer such as ':' or the "
            "answer cut before it answers); with --augment balanced also a short-correct row "
            f"(default {d('key_negatives')})",
        )
        p.add_argument(
            "--max-rows", type=positive_int, help="at most this many base pairs, sampled (default: all)"
        )
    if stage == "traces":
        p.add_argument("--n", type=positive_int, help=f"traces per bias (default {d('n_traces_per_bias')})")
        p.add_argument(
            "--teacher",
            choices=["auto", "rule", "llm"],
            help=f"who writes the traces: auto (an LLM when one is set, else rule), rule, llm "
            f"(default {d('teacher')})",
        )
    p.add_argument(
        "--rewriter",
        choices=["template", "llm"],
        help=f"who writes the superficial-bias rewrites (default {d('rewriter')})",
    )
    p.add_argument(
        "--verifier",
        choices=["auto", "rule", "llm", "none"],
        help=f"the filter that drops probes whose injection changed the answer's quality (default {d('verifier')})",
    )
    p.add_argument(
        "--llm-backend",
        choices=["openai", "transformers", "vllm"],
        help=f"backend of the LLM roles (default {LLMSpec.backend})",
    )
    p.add_argument(
        "--llm-model",
        help="model of the LLM roles: its name at the endpoint, or a local model (default: none)",
    )
    p.add_argument(
        "--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default: none)"
    )
    p.add_argument(
        "--concurrency", type=positive_int, help=f"LLM calls in flight (default {LLMSpec.concurrency})"
    )
    p.add_argument("--seed", type=seed_value, help=f"seed of every random choice (default {d('seed')})")
    p.add_argument(
        "--device", help="transformers/vllm LLM backend: auto, cpu, cuda, cuda:N or mps (default auto)"
    )
    p.add_argument(
        "--dtype", choices=DTYPES, help="transformers/vllm LLM backend: the weights' dtype (default auto)"
    )


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--limit 0`` used to mean "all")."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def seed_value(text: str) -> int:
    """An argparse type: a seed (:func:`biasaware.errors.check_seed`: 0 to 2**32 - 1)."""
    from biasaware.errors import check_seed

    try:
        digits = text.strip()
        if not (digits.isascii() and digits.isdigit()):  # no sign, underscore, exponent or other script
            raise ValueError
        return check_seed(int(digits))
    except (ValueError, BiasAwareError):
        raise argparse.ArgumentTypeError(f"{text!r}: a seed is a whole number from 0 to 4294967295") from None


def add_device_arguments(p) -> None:
    from biasaware.devices import DEVICES, DTYPES

    p.add_argument(
        "--device",
        default="auto",
        help=f"where models run: {', '.join(DEVICES)} (default auto: the GPU when there is one)",
    )
    p.add_argument(
        "--dtype",
        default="auto",
        choices=DTYPES,
        help="model weights' dtype (default auto: bfloat16 on a GPU that supports it, float32 on the CPU)",
    )


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
        "finished `eval bias` runs: McNemar per bias on the shared probes, or several judges against a baseline",
        "Compare two judges on the probes both runs judged with the same content (standard and mirror "
        "probes separately); print the overlap and a table of per-bias McNemar tests. With --baseline, compare "
        "two or more judges against one of them, as the quickstart's tables do: one row per judge with Acc_ori, "
        "BSR and over-correction pooled over the 12 biases judged, and, where the runs judged master-key "
        "probes, false positives per key type and over both answer orders; p = McNemar exact against the "
        "baseline on the same probes.",
    ),
}


def add_eval_parser(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluation: bias sensitivity (Acc_ori, Acc_inj, BSR) and general judge benchmarks",
        description="`biasaware eval STAGE --help` lists a stage's options.",
    )
    stages = p.add_subparsers(dest="stage", metavar="STAGE", required=True)
    for stage, (summary, description) in EVAL_STAGES.items():
        s = stages.add_parser(stage, help=summary, description=description)
        if stage == "compare":
            s.add_argument(
                "--runs",
                nargs="+",
                required=True,
                metavar="DIR",
                help="finished `eval bias` output folders: two, or with --baseline two or more (required)",
            )
            s.add_argument(
                "--baseline",
                metavar="DIR",
                help="one of --runs: compare every run against it (default: none, the two-run comparison)",
            )
            s.add_argument(
                "--view",
                default="injected",
                choices=["original", "injected"],
                help="which view's verdicts to compare (default injected)",
            )
            s.add_argument("--out", help="also write the comparison to this JSON file (default: none)")
            s.add_argument(
                "--by-id",
                action="store_true",
                help="compare runs without fingerprint.json by probe id, unchecked (default: refused)",
            )
            continue
        outputs = {
            "bias": "judgments.jsonl, summary.json, report.md, sensitivity.png, accuracy.png",
            "general": "judgments.jsonl, summary.json, report.md",
            "scoring": "judgments.jsonl, summary.json, report.md, score_tendency.png, stability.png",
            "real": "real.json, report.md, and a folder per set",
        }.get(stage, "judgments.jsonl, summary.json, report.md")
        s.add_argument("--out", help=f"output folder ({outputs}; required)")
        if stage == "bias":
            s.add_argument(
                "--data",
                help="probes: a folder from `biasaware build bench` or a probe file (required unless --rescore)",
            )
        elif stage == "real":
            s.add_argument("--data", help="a folder written by `biasaware build real` (required)")
            s.add_argument(
                "--probe-limit",
                type=positive_int,
                help="a seeded sample (--seed) of N injected probes per bias and side (default: all)",
            )
        elif stage == "scoring":
            s.add_argument(
                "--data",
                help="items to score: a BiGGen-Bench JSON, a Prometheus-layout file (FLASK, MT-Bench, Vicuna-Bench) "
                "or a JSONL of {id, instruction, response, rubric, references, gold} (required unless --rescore)",
            )
            s.add_argument(
                "--templates",
                help="comma list of perturbed prompts, each parts joined by '+': desc, random, letter, roman, ref-1 "
                "to ref-5 (e.g. desc,roman,desc+letter) (default: desc, random, letter, roman and every ref-k "
                "all items have a reference for)",
            )
            s.add_argument(
                "--reference-writer",
                help="a model that writes the reference answers a ref-k template needs and the data lacks "
                "(generate-then-review, Li et al. 2025 fig. 4) (default: none; such a template is refused)",
            )
            s.add_argument(
                "--reference-reviewer",
                help="the model that accepts or rejects each draft (default: the writer)",
            )
            s.add_argument(
                "--reference-backend",
                default="transformers",
                choices=["transformers", "openai", "vllm"],
                help="backend of the writer and reviewer (default transformers)",
            )
            s.add_argument(
                "--reference-base-url",
                help="OpenAI-compatible endpoint of the writer and reviewer (default: none)",
            )
            s.add_argument(
                "--reference-attempts",
                type=positive_int,
                default=3,
                help="drafts per item and level before giving up (default 3)",
            )
        else:
            s.add_argument(
                "--benchmark",
                help="rewardbench, judgebench, rm-bench, llmbar (hub) or a local file/folder of RewardBench, "
                "JudgeBench, RMB, RM-Bench, LLMBar or EvalBiasBench (required unless --rescore)",
            )
            s.add_argument("--split", help="split of a hub benchmark (default: the benchmark's own)")
        add_judge_arguments(s)
        if stage == "bias":
            s.add_argument(
                "--policy",
                default="symmetric",
                choices=["symmetric", "judgebiasbench"],
                help="symmetric: a tie or invalid verdict is wrong on either view; judgebiasbench: an "
                "injected tie/invalid is not a flip (default symmetric)",
            )
            s.add_argument("--biases", help="all, a category, or a comma list of biases (default all)")
            add_pointwise_argument(s)
        limit_help = {
            "bias": "a seeded sample (--seed) of N probes per bias and side, drawn by base pair so a probe and its "
            "mirror stay together",
            "general": "a seeded sample of N pairs (--seed), stratified by subset",
            "real": "a seeded sample (--seed) of at most N pairs per set, stratified by subset",
        }
        s.add_argument(
            "--limit",
            type=positive_int,
            help=limit_help.get(stage, "the first N items") + " (default: all)",
        )
        s.add_argument("--seed", type=seed_value, default=0, help="bootstrap and sampling seed (default 0)")
        s.add_argument(
            "--rescore",
            action="store_true",
            help="score --out/judgments.jsonl again, without a model (default off)",
        )


def add_preflight_parser(sub) -> None:
    from biasaware.evaluation.preflight import PER_BIAS, SCORING_PAIRS

    p = sub.add_parser(
        "preflight",
        help="a small fixed battery before trusting a judge: pass, warn or fail per bias; exit 1 on a fail",
        description="Judge a fixed, seeded battery from the built-in corpus (the 12 biases and the injection probe "
        "in both directions, position in both orders, scoring-bias templates), grade every check against "
        "thresholds (defaults in biasaware/evaluation/preflight.py, overridable with --thresholds) and exit 0 "
        "(pass, warn or cannot tell), 1 (a fail threshold crossed) or 2 (usage error). Resumable: rerun the same command.",
    )
    p.add_argument("--out", help="output folder (default: runs/preflight/NAME)")
    p.add_argument("--thresholds", help="YAML or JSON file overriding the default thresholds (default: none)")
    p.add_argument(
        "--per-bias",
        type=positive_int,
        default=PER_BIAS,
        help=f"probes per bias and side in the battery; a verdict is decided by its 95%% interval, and too few "
        f"probes give CANNOT TELL (default {PER_BIAS})",
    )
    p.add_argument(
        "--families",
        help="task families of the built-in corpus for the battery: facts, reasoning, all, or a comma list "
        "(default: facts for a reward model, which cannot do the multi-step reasoning items; all otherwise)",
    )
    p.add_argument(
        "--scoring-pairs",
        type=positive_int,
        default=SCORING_PAIRS,
        help=f"pairs whose two responses are scored under each scoring template (default {SCORING_PAIRS})",
    )
    p.add_argument(
        "--fail-on",
        choices=["fail", "warn"],
        default="fail",
        help="exit 1 on a fail (default), or on a warning or a cannot-tell too",
    )
    p.add_argument("--seed", type=seed_value, default=0, help="the battery's seed (default 0)")
    p.add_argument(
        "--scoring-max-tokens",
        type=positive_int,
        default=256,
        help="generation budget per score: the scoring prompt asks for feedback before the score (default 256)",
    )
    # the battery runs in minutes on a CPU; raise --max-tokens for a judge that reasons at length
    add_judge_arguments(p, max_tokens=128, required="required")
    add_pointwise_argument(p)


def add_pointwise_argument(p) -> None:
    p.add_argument(
        "--pointwise",
        choices=["rubric", "minimal"],
        help="judge each pair by scoring its two responses alone, the higher wins (ties are wrong): rubric = "
        "1-5 with a correctness rubric, minimal = Gao et al.'s 1-10 prompt; generate and direct modes; 9 response-level "
        "biases (default: off, the pair is judged together)",
    )


def add_judge_arguments(p, max_tokens: int = 512, required: str = "required unless --rescore") -> None:
    """The judge's settings (:class:`~biasaware.judging.judges.JudgeSpec`), shared by eval and preflight."""
    p.add_argument(
        "--judge", help=f"built-in name, local folder, hub name, or a model at --base-url ({required})"
    )
    p.add_argument(
        "--mode",
        choices=["generate", "direct", "reward"],
        help="generate: a reasoning judge; direct: P(A) vs P(B) of the next token; reward: a reward model "
        "(minilm-l6 is one) (default: what the judge's folder holds: reward for a sequence-classification "
        "model, generate otherwise; a mode that contradicts the folder is refused)",
    )
    p.add_argument(
        "--template",
        default="default",
        help="judge prompt format (default default); direct mode reads the first token of a letter-first "
        "format: verdict or direct (any other name gives direct)",
    )
    p.add_argument(
        "--parse",
        default="strict",
        choices=["strict", "native"],
        help="generate mode: read replies by biasaware's strict rule (ambiguous replies are invalid), or as the "
        "format's own tool reads them, tie-breaks included, to compare with published numbers (llmbar, "
        "llmbar-cot, mtbench, judgelm, prometheus, autoj; docs/formats.md) (default strict)",
    )
    p.add_argument(
        "--backend",
        default="transformers",
        choices=["transformers", "openai", "vllm"],
        help="generate mode: local transformers, in-process vLLM, or an OpenAI-compatible endpoint "
        "(default transformers)",
    )
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, backend openai (default: none)")
    p.add_argument(
        "--max-tokens",
        type=positive_int,
        default=max_tokens,
        help=f"generation budget per verdict; a reply cut before its verdict is invalid (default {max_tokens})",
    )
    p.add_argument(
        "--temperature", type=float, default=0.0, help="sampling temperature; 0 = greedy (default 0)"
    )
    p.add_argument(
        "--batch-size", type=positive_int, default=8, help="views per forward or generate batch (default 8)"
    )
    p.add_argument(
        "--max-batch-tokens",
        type=positive_int,
        default=32768,
        help="direct and reward modes: at most this many padded tokens per batch (default 32768)",
    )
    p.add_argument(
        "--max-length",
        type=positive_int,
        help="context limit in tokens; a longer view is not judged and is counted (default: the model's)",
    )
    p.add_argument(
        "--truncation",
        choices=["none", "longest_first"],
        help="reward mode: a (prompt, response) over the context is not judged (none) or cut to fit "
        "(longest_first: the longer of the last user turn and the response loses its end) (default none)",
    )
    add_device_arguments(p)
    p.add_argument(
        "--concurrency", type=positive_int, default=16, help="calls in flight, backend openai (default 16)"
    )


BUDGET_FLAGS = ("start_steps", "sft_steps", "grpo_steps", "trainable_layers", "bench_probes", "cue_rate")


def add_sweep_release_parsers(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="train and evaluate a recipe over a grid of settings (JudgeBiasBench Table 6)",
        description="Train each grid point through the real recipe, evaluate it on the bias benchmark in both "
        "directions (and general benchmarks), and write table.md, table.json and tradeoff.png. Resumable: "
        "rerun the same command. Settings: a YAML --config (biasaware/experiments/sweep.py, SweepSpec) and these flags.",
    )
    p.add_argument(
        "--config", help="sweep YAML: grid, recipe, data, bench, evaluation (default: none; flags only)"
    )
    p.add_argument("--out", required=True, help="the sweep folder (required)")
    p.add_argument(
        "--grid",
        action="append",
        metavar="KEY=V1,V2",
        help="a grid axis, repeatable; replaces the file's grid (default: the file's, else one point)",
    )
    p.add_argument("--seeds", help="training seeds, e.g. 0,1,2 (default 0)")
    p.add_argument("--recipe", choices=["reward", "sft", "grpo"], help="the recipe to train (default reward)")
    p.add_argument(
        "--recipe-config",
        help="the recipe's base config (default recipes/configs/minilm-l6/reward_infonce.yaml)",
    )
    p.add_argument(
        "--launch", help="python (default), inline (in this process), or an accelerate config file"
    )
    p.add_argument(
        "--bench", help="a built benchmark folder (default: built into OUT/bench from the built-in corpus)"
    )
    p.add_argument(
        "--train-file", help="fixed training rows (default: built per point from the build settings)"
    )
    p.add_argument("--limit", type=positive_int, help="probes per bias and side (default: all)")
    p.add_argument(
        "--general",
        action="append",
        help="a general benchmark to evaluate every point on, repeatable (default: none)",
    )
    p.add_argument("--device", help="where the evaluations run (default auto)")
    p.add_argument("--dtype", help="the evaluations' dtype (default auto)")

    p = sub.add_parser(
        "release",
        help="check a checkpoint against its bias report and write a model card (optionally push to the hub)",
        description="Refuse a report made from other weights, re-judge a few of its probes, and write a release "
        "folder (model files, README.md model card with the two-sided bias report, bias_report/, reproduce/). "
        "Uploads only with --push-to-hub (token from HF_TOKEN or the hub login; never printed). With --data, "
        "write a dataset card into a built folder instead, so that datasets.load_dataset(FOLDER) reads it.",
    )
    p.add_argument("--checkpoint", help="the trained model folder (required unless --data)")
    p.add_argument("--report", help="its `eval bias` output folder (required unless --data)")
    p.add_argument(
        "--data",
        help="a `biasaware build` output folder: write its dataset card (README.md: configs, features, source "
        "license, how it was built) in place (default: none)",
    )
    p.add_argument("--out", help="the release folder (default: CHECKPOINT-release next to it)")
    p.add_argument(
        "--name",
        help="the model's title and hub id in the card, e.g. you/judge-name (default: --push-to-hub, else the "
        "release folder's name)",
    )
    p.add_argument(
        "--general",
        action="append",
        help="an `eval general` output folder of this checkpoint, repeatable (default: none)",
    )
    p.add_argument(
        "--bench",
        help="the benchmark folder, when it moved since the report was made (default: the report's)",
    )
    p.add_argument(
        "--probes",
        type=positive_int,
        default=8,
        help="probes to re-judge at release, spread over the biases (default 8)",
    )
    p.add_argument(
        "--license", help="license for the card (default: the base model's when known, else other)"
    )
    p.add_argument(
        "--push-to-hub", metavar="NAME", help="upload to this hub model repo, owner/name (default: no upload)"
    )
    p.add_argument("--private", action="store_true", help="create the hub repo private (default: public)")
    p.add_argument(
        "--allow-weak-general",
        action="store_true",
        help="release a judge whose general accuracy was never measured (no --general) or is at chance; the card "
        "says so (default: refused)",
    )


def build_parser() -> argparse.ArgumentParser:
    from biasaware.records import RECORD_TYPES

    parser = argparse.ArgumentParser(
        prog="biasaware",
        description="Build bias probes, train and evaluate LLM judges that resist judgment bias.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"biasaware {__version__}")
    add_common_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "validate",
        help="check a data file against the record contract",
        description="Check every record of PATH; print one line per problem (file:line: field ...). "
        "Exit 0 when clean, 2 when not.",
    )
    p.add_argument("path", help="JSONL, JSON, Parquet, a folder of them, a saved HF dataset, or a hub name")
    p.add_argument(
        "--kind",
        default="auto",
        choices=["auto", *RECORD_TYPES],
        help="record kind (default auto: guessed from the first record)",
    )
    p.add_argument("--split", default="train", help="split to read from a HF dataset (default: train)")
    p.add_argument(
        "--allow-empty", action="store_true", help="exit 0 for a file with no records (default: exit 2)"
    )

    add_build_parser(sub)
    add_eval_parser(sub)
    add_sweep_release_parsers(sub)

    add_preflight_parser(sub)

    p = sub.add_parser("models", help="list or prepare the built-in offline models")
    p.add_argument(
        "action",
        choices=["list", "prepare"],
        help="list: the built-in models; prepare: load each once (offline check)",
    )
    p.add_argument("names", nargs="*", help="built-in names to prepare (default: all)")
    add_device_arguments(p)

    p = sub.add_parser("quickstart", help="run the whole pipeline on the built-in defaults")
    p.add_argument(
        "--out",
        help="output folder (default: runs/quickstart; runs/generative with --generative, runs/real with --real)",
    )
    p.add_argument("--seed", type=seed_value, help="seed of every stage (default 0)")
    p.add_argument(
        "--seeds",
        help="--generative or --real: training seeds run one after another, e.g. 0-9 or 0,1,2 (default 0); with "
        "two or more finished seeds in --out the study's aggregate is written",
    )
    p.add_argument(
        "--generative",
        action="store_true",
        help="run the generative judge study instead (default: the reward-model experiment): per seed, SFT of "
        "smollm2-135m-instruct into a starting judge, then four arms (baseline, paper, balanced with the "
        "cue-consistency reward, balanced-acc: its ablation) of SFT and GRPO, evaluated two-sided on one fixed "
        "benchmark; seeds run one after another, each resumable (docs/generative.md). With --real: generative "
        "judges of real text (SFT on verdicts, then GRPO; the gpu preset on a CUDA device, else a small check)",
    )
    p.add_argument(
        "--real",
        metavar="PATH",
        help="run the real-text experiment instead: reward models trained on real AlpacaEval pairs in four arms "
        "(baseline, paper, balanced, resampled), measured two-sided on real benchmarks, injected probes and master keys across "
        "--seeds, with seed-level tests; PATH holds your copies of the public sets, one sub-folder each, as for "
        "`build real` (docs/real.md) (default: none)",
    )
    p.add_argument(
        "--source",
        action="append",
        metavar="NAME=PATH",
        help="--real: a source somewhere else (repeatable), as for `build real` (default: none)",
    )
    p.add_argument(
        "--budget",
        choices=["cpu", "gpu"],
        help="budget preset of --generative, also with --real (default: gpu on a CUDA device, else cpu)",
    )
    p.add_argument(
        "--start-steps",
        type=int,
        help="--generative: SFT steps of the starting judge every arm starts from (default: the preset's; cpu 200 "
        "of 4 rows)",
    )
    p.add_argument(
        "--sft-steps",
        type=int,
        help="--generative: each arm's own SFT steps (default: the preset's; cpu 80 of 4 rows; with --real: gpu "
        "240 of 8, cpu 4 of 2)",
    )
    p.add_argument(
        "--grpo-steps",
        type=int,
        help="--generative: GRPO steps per arm (default: the preset's; cpu 12 of 16 completions; with --real: gpu "
        "40 of 64, cpu 1 of 4)",
    )
    p.add_argument(
        "--trainable-layers",
        type=int,
        help="--generative: top layers trained (default: the preset's; cpu 12 of 30, gpu all; with --real: cpu 4)",
    )
    p.add_argument(
        "--bench-probes",
        type=int,
        help="--generative: benchmark probes asked per trained cue and side (default 55)",
    )
    p.add_argument(
        "--cue-rate",
        type=float,
        help="--generative: share of the natural training pairs with the cue on the chosen answer, from 0 to 1 "
        "(default 0.7)",
    )
    p.add_argument(
        "--arms",
        help="--generative: a comma list of baseline, paper, balanced, balanced-acc (default: all four)",
    )
    add_device_arguments(p)
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
