"""The ``biasaware`` commands: each builds a request from the parsed arguments, calls the library
and prints what it returns (:data:`COMMANDS`, by command name). Each command imports the library
parts it calls inside itself: a command loads only what it uses (``biasaware validate`` never
loads an evaluation or a training library)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from biasaware import options as o
from biasaware.errors import BiasAwareError
from biasaware.formatting import counted


def cmd_validate(args: argparse.Namespace) -> int:
    from biasaware.data.validation import validate_file

    kind = None if args.kind == "auto" else args.kind
    checked = validate_file(args.path, kind, args.split, args.allow_empty)
    for line in checked.problems:
        print(line)
    print(checked.said, file=sys.stderr)
    return checked.code


def cmd_models(args: argparse.Namespace) -> int:
    from biasaware.devices import describe, resolve
    from biasaware.judging.models import BUILTIN_MODELS, builtin_names, load_model

    names = builtin_names(args.names)
    if args.action == "list":  # the named ones, or all; a listing loads nothing, so where is not asked
        if (args.device, args.dtype) != ("auto", "auto"):
            raise BiasAwareError("`models list` loads nothing: --device and --dtype are for `models prepare`")
        for m in (BUILTIN_MODELS[name] for name in names):
            print(f"{m.name:24s} kinds: {','.join(m.kinds):14s} {m.about}")
        return 0
    device, dtype = resolve(args.device, args.dtype)
    where = describe(device, dtype)
    for name in names:
        kind = BUILTIN_MODELS[name].kinds[0]
        model, _ = load_model(name, kind, dtype=dtype, device=device)
        n = sum(p.numel() for p in model.parameters())
        print(
            f"{name}: ready as {kind} model ({n / 1e6:.1f}M parameters) on {where['device']} in {where['dtype']}"
        )
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from biasaware.data.builders import build_bench, build_traces, build_train, manifest_report

    if args.stage == "real":
        return build_real(args)
    build = {"bench": build_bench, "train": build_train, "traces": build_traces}[args.stage]
    cfg = build_settings(args)
    if args.stage == "train" and cfg.augment == "balanced" and args.n_negatives is not None:
        print(
            "warning: --negatives is not read with augment balanced (its rows carry no bias negatives)",
            file=sys.stderr,
        )
    manifest = build(cfg, args.out)
    if manifest.get("reused"):
        print(f"[build] {args.out} already holds this build (manifest.json); nothing to do")
        return 0
    lines, warnings = manifest_report(manifest, args.stage, args.out)
    print("\n".join(lines))
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    return 0


def build_real(args: argparse.Namespace) -> int:
    check_out(args.out)
    from biasaware.data.real import (
        build_real,
        named_paths,
        real_report,
        resolve_sources,
        unknown_folder_lines,
    )

    sources = resolve_sources(args.real, named_paths(args.source or [], "--source"))
    for line in unknown_folder_lines(args.real):
        print(f"warning: {line}", file=sys.stderr)
    manifest = build_real(
        sources, args.out, seed=args.seed, heldout=args.heldout, margin=args.margin, real=args.real
    )
    if manifest.get("reused"):
        print(f"[build] {args.out} already holds this real-text build (manifest.json); nothing to do")
    print("\n".join(real_report(manifest)))
    return 0


def build_settings(args: argparse.Namespace):
    """The :class:`~biasaware.data.builders.BuildConfig` that ``--config`` and the build flags describe
    (each flag is named as the config's setting; the LLM flags make its ``llm`` section)."""
    from biasaware.data.builders import BuildConfig

    if getattr(args, "mirror", False) and args.direction not in (None, "mirror"):
        raise BiasAwareError(f"--mirror and --direction {args.direction} disagree; give one of them")
    if args.device not in (None, "auto"):  # a device that is not there is an error, used or not
        from biasaware.devices import resolve_device

        resolve_device(args.device, "--device")
    settings = o.values(o.BUILD_OPTIONS[args.stage], args, skip=("out", "config"))
    llm = {key: settings.pop(flag) for flag, key in o.Build.LLM_FLAGS.items()}
    if settings.pop("mirror", False):
        settings["direction"] = "mirror"
    return BuildConfig.from_file(args.config, **settings, llm=llm)


def judge_spec(args: argparse.Namespace):
    """The :class:`~biasaware.judging.judges.JudgeSpec` the flags describe (bad values: exit 2). Each
    flag is named as the spec's setting (``--judge`` is its name); ``--seed`` is the judge's sampling
    seed only when it samples (``--temperature`` above 0), so a greedy judge's folder resumes under
    any ``--seed``."""
    from biasaware.judging.judges import JudgeSpec

    settings = o.values(JudgeSpec, args)
    if (settings.get("temperature") or 0) > 0:
        settings["seed"] = args.seed
    return JudgeSpec.create(**settings)


def cmd_compare(args: argparse.Namespace) -> int:
    from biasaware.evaluation.compare import compare_command
    from biasaware.io import write_json

    check_out(args.out, file=True)
    if args.out:
        refuse_among_runs(args.out, args.runs)
    result, text = compare_command(args.runs, args.baseline, view=args.view, by_id=args.by_id)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_json(Path(args.out), result)
        print(f"wrote {args.out}")
    return 0


def refuse_among_runs(out: str, runs: list[str]) -> None:
    """A table written inside a compared run would replace one of its files, or mix with them."""
    for run in runs:
        if Path(run).expanduser().resolve() in Path(out).expanduser().resolve().parents:
            raise BiasAwareError(
                f"--out {out} is inside the compared run {run}: it would write among that run's files; give a path "
                "outside the runs"
            )


def check_table_path(out: str) -> None:
    """A JSON file path for a table: not a folder, and under no file."""
    path = Path(out).expanduser()
    if path.is_dir():
        raise BiasAwareError(f"--out {out} is a folder; give a JSON file path")
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise BiasAwareError(f"--out {out}: {blocking} is a file; give a JSON file path in a folder")


def cmd_eval(args: argparse.Namespace) -> int:
    if args.stage == "compare":
        return cmd_compare(args)
    if not args.out:
        raise BiasAwareError(f"eval {args.stage} needs --out")
    check_out(args.out)
    spec = None
    rescore = getattr(args, "rescore", False)  # eval real has none
    if rescore:
        refuse_unread_flags(args)
    else:
        flag = "--data" if args.stage in ("bias", "scoring", "real") else "--benchmark"
        lacking = [f for f, given in (("--judge", args.judge), (flag, getattr(args, flag[2:]))) if not given]
        if lacking:
            again = "" if args.stage == "real" else " (or --rescore with an earlier --out)"
            raise BiasAwareError(f"eval {args.stage} needs {' and '.join(lacking)}{again}")
        spec = eval_judge(args)  # a typo in a setting fails before any data or model is loaded
    out = Path(args.out)
    stages = {"bias": eval_bias, "general": eval_general, "scoring": eval_scoring, "real": eval_real}
    summary, files = stages[args.stage](args, spec, out)
    if summary is not None:  # process 0 of a multi-process launch reports
        print(f"wrote {out}/{files}")
    return 0


def eval_judge(args: argparse.Namespace, budgets: tuple[type, ...] = ()):
    """The judge an eval stage's (or preflight's) flags describe (:func:`judge_spec`); a budget its mode
    would not read is refused (:func:`~biasaware.judging.judges.unread_budget`; ``budgets``: other declared
    options whose ``*max_tokens`` are generation budgets, as preflight's scoring one)."""
    from biasaware.judging.judges import unread_budget

    spec = judge_spec(args)
    given = [
        flag
        for options in (type(spec), *budgets)
        for flag in o.given_flags(
            options,
            args,
            [i.name for i in o.declared(options) if i.name.endswith(("max_tokens", "max_batch_tokens"))],
        )
    ]
    unread_budget(spec.mode, given)
    return spec


def refuse_unread_flags(args: argparse.Namespace) -> None:
    """A rescore loads no model and reads no input: judge settings, the input and its sample, given
    with ``--rescore``, would be ignored, so they are refused, each named."""
    from biasaware.judging.judges import JudgeSpec

    options = o.EVAL_OPTIONS[args.stage]
    reads = RESCORE_READS.get(args.stage, RESCORE_READS_DEFAULT)
    read = [i.name for i in o.declared(options) if i.name not in reads]
    unused = o.given_flags(JudgeSpec, args) + o.given_flags(options, args, read)
    if unused:
        one = len(unused) == 1
        raise BiasAwareError(
            f"--rescore recounts the judgments already in {args.out}, so {', '.join(unused)} "
            f"{'is' if one else 'are'} not used; leave {'it' if one else 'them'} out, or judge again into a new --out"
        )


def eval_bias(args: argparse.Namespace, spec, out: Path):
    from biasaware.evaluation.evaluate import evaluate_bias
    from biasaware.evaluation.reports import console_summary

    # --biases is parsed by evaluate_bias, as from the Python API
    summary = evaluate_bias(spec, args.data, out, **o.values(o.EvalBias, args, skip=("out", "data")))
    if summary is not None:
        print(console_summary(summary))
    return summary, "judgments.jsonl, summary.json, report.md, sensitivity.png, accuracy.png"


def eval_general(args: argparse.Namespace, spec, out: Path):
    from biasaware.evaluation.general import evaluate_general

    options = o.values(o.EvalGeneral, args, skip=("out", "benchmark"))
    summary = evaluate_general(spec, args.benchmark, out, **options)
    if summary is not None:
        print((out / "report.md").read_text())
    return summary, f"judgments.jsonl, summary.json, report.md ({(summary or {}).get('items')} pairs)"


def eval_real(args: argparse.Namespace, spec, out: Path):
    from biasaware.evaluation.real_text import evaluate_real

    result = evaluate_real(spec, args.data, out, **o.values(o.EvalReal, args, skip=("out", "data")))
    print((out / "report.md").read_text())
    return result, "real.json, report.md"


def eval_scoring(args: argparse.Namespace, spec, out: Path):
    from biasaware.evaluation.scoring import evaluate_scoring

    names = (
        [t.strip() for t in args.templates.split(",") if t.strip()] if args.templates is not None else None
    )
    if names == []:  # "" or ",": not the defaults (leave the flag out) and not the baseline alone
        raise BiasAwareError(
            f"--templates {args.templates!r} names no template; leave it out for the defaults"
        )
    writer = reviewer = None
    # these set up the writer (and reviewer): without a writer they would go unused
    helpers = o.given_flags(o.EvalScoring, args, (*REFERENCE_FLAGS[1:], "reference_attempts"))
    if helpers and not args.reference_writer:
        one = len(helpers) == 1
        raise BiasAwareError(
            f"{', '.join(helpers)} {'sets' if one else 'set'} up the reference writer, and none is given: add "
            f"--reference-writer MODEL, or leave {'it' if one else 'them'} out"
        )
    if args.reference_writer and not args.rescore:
        writer = reference_llm(args, args.reference_writer)
        reviewer = reference_llm(args, args.reference_reviewer or args.reference_writer)
    options = o.values(o.EvalScoring, args, skip=("out", "data", "templates", *REFERENCE_FLAGS))
    attempts = options.pop("reference_attempts")
    summary = evaluate_scoring(
        spec, args.data, out, templates=names, writer=writer, reviewer=reviewer, attempts=attempts, **options
    )
    if summary is not None:
        print((out / "report.md").read_text())
    return summary, ", ".join((summary or {}).get("files", []))


REFERENCE_FLAGS = ("reference_writer", "reference_reviewer", "reference_backend", "reference_base_url")
# what --rescore reads of a command's options: eval scoring's seed drew the rubric orders it judged, so its
# rescore keeps the recorded one (a --seed there would go unread)
RESCORE_READS = {"scoring": ("out", "rescore", "policy")}
RESCORE_READS_DEFAULT = ("out", "rescore", "seed", "policy")


def reference_llm(args: argparse.Namespace, model: str):
    """The LLM that writes (or reviews) reference answers for ``eval scoring``."""
    from biasaware.judging.llm import LLMSpec

    return LLMSpec(
        backend=args.reference_backend,
        model=model,
        base_url=args.reference_base_url,
        device=args.device,
        dtype=args.dtype,
        concurrency=args.concurrency,
    )


def judge_label(judge: str) -> str:
    """A folder name for a judge: a model folder's own name (``.`` too), a hub name's last part, a
    built-in model's name."""
    path = Path(judge)
    name = (path.resolve() if path.exists() else Path(judge.rstrip("/"))).name
    return name or "judge"


def cmd_preflight(args: argparse.Namespace) -> int:
    from biasaware.evaluation.preflight import load_thresholds, run_preflight
    from biasaware.evaluation.reports import verdict_lines

    check_out(args.out)
    spec = eval_judge(args, budgets=(o.Preflight,))
    thresholds = load_thresholds(args.thresholds)  # a bad file fails before anything runs
    out = Path(args.out) if args.out else Path("runs/preflight") / judge_label(args.judge)
    options = o.values(o.Preflight, args, skip=("out", "thresholds"))
    result = run_preflight(spec, out, thresholds=thresholds, **options)
    if result is None:  # another process of a multi-process launch: process 0 grades and reports
        return 0
    print("\n".join(verdict_lines(result)))
    print(f"wrote {out}/preflight.json, preflight.md; full reports in {out}/bias and {out}/scoring")
    return result["exit_code"]


def cmd_quickstart(args: argparse.Namespace) -> int:
    check_out(args.out)
    if args.real is not None and not args.real.strip():
        raise BiasAwareError("--real is empty: give the folder of the real-text sources")
    if args.real is not None or args.source:
        return real_study(args)
    if args.generative:
        return generative_study(args)
    given = [
        f"--{k.replace('_', '-')}"
        for k in (*o.BUDGET_FLAGS, "budget", "arms", "seeds")
        if getattr(args, k) is not None
    ]
    if given:
        real = [g for g in given if g in ("--arms", "--seeds")]  # the real-text experiment's too
        raise BiasAwareError(
            f"{', '.join(given)} set(s) the generative experiment: add --generative"
            + (f" ({', '.join(real)} also set(s) the real-text one: or add --real PATH)" if real else "")
        )
    from biasaware.experiments.quickstart import run_quickstart

    run_quickstart(
        Path(args.out or "runs/quickstart"), seed=args.seed or 0, device=args.device, dtype=args.dtype
    )
    return 0


def real_study(args: argparse.Namespace) -> int:
    """``quickstart --real``: the real-text experiment across seeds (``--generative``: generative judges)."""
    from biasaware.data.real import named_paths, resolve_sources
    from biasaware.experiments.generative import parse_seeds
    from biasaware.experiments.real_study import generative_budget, headline_markdown, run_real_study
    from biasaware.io import check_out_folder

    own = ("sft_steps", "grpo_steps", "trainable_layers", "budget")
    given = [
        f"--{k.replace('_', '-')}"
        for k in (*o.BUDGET_FLAGS, "budget")
        if getattr(args, k) is not None
        and getattr(args, k) is not False
        and (k not in own or not args.generative)
    ]
    if given:
        only = f" (--real --generative takes --{', --'.join(own)})".replace("_", "-")
        raise BiasAwareError(f"{', '.join(given)}: not a setting of the real-text experiment{only}")
    if args.seeds is not None and args.seed is not None:
        raise BiasAwareError("give --seed or --seeds, not both")
    seeds = parse_seeds(args.seeds) if args.seeds is not None else [args.seed or 0]
    sources = resolve_sources(args.real, named_paths(args.source or [], "--source"))
    overrides = {k: getattr(args, k) for k in own[:3] if getattr(args, k) is not None}
    budget = generative_budget(args.budget, overrides, args.device) if args.generative else None
    default = "runs/real-generative" if args.generative else "runs/real"
    out = check_out_folder(args.out, "--out") if args.out is not None else Path(default)
    place = {"device": args.device, "dtype": args.dtype}
    agg = run_real_study(
        sources, out, seeds=seeds, budget=budget, arms=arm_list(args), real=args.real, **place
    )
    if agg is not None:
        print(
            headline_markdown(agg)
            + f"\n{out}/aggregate.md, aggregate.json, forest.png; per seed {out}/seed-K/"
        )
    return 0


def arm_list(args: argparse.Namespace) -> list[str] | None:
    """``--arms`` as a list of names (``None``: left out, all of the study's arms). An empty name between
    commas (``baseline,`` is most likely a list left unfinished) is refused, not dropped."""
    if args.arms is None or not args.arms.strip():
        return None if args.arms is None else []  # the study names the arms an empty value could be
    names = [a.strip() for a in args.arms.split(",")]
    if "" in names:
        raise BiasAwareError(
            f"--arms {args.arms!r}: an empty name between commas; give names like baseline,paper"
        )
    return names


def generative_study(args: argparse.Namespace) -> int:
    """``quickstart --generative``: the many-seed generative study."""
    from biasaware.experiments.generative import parse_seeds, run_generative

    if args.seeds is not None and args.seed is not None:
        raise BiasAwareError("give --seed or --seeds, not both")
    seeds = parse_seeds(args.seeds) if args.seeds is not None else [args.seed or 0]
    settings = {k: getattr(args, k) for k in o.BUDGET_FLAGS if getattr(args, k) is not None}
    out = Path(args.out or "runs/generative")
    run_generative(
        out,
        seeds=seeds,
        device=args.device,
        dtype=args.dtype,
        preset=args.budget,
        overrides=settings,
        arms=arm_list(args),
    )
    return 0


def check_out(out: str | None, file: bool = False) -> None:
    """An --out given empty is refused, not read as the default or the working folder; an --out folder
    (``file``: a JSON file's) that cannot be written, before the library loads (seconds of imports) and
    before any model is read."""
    if out is not None and not str(out).strip():
        raise BiasAwareError(
            f"--out is empty: give {'a JSON file path' if file else 'a folder'} (or leave --out out)"
        )
    if out is not None:
        from biasaware.folders import hold_folder
        from biasaware.io import check_out_folder

        if file:
            check_table_path(out)
            # a table file's folder is not held (other runs may be writing beside it), the file not written
            # inside a folder another run holds
            hold_folder(out, "--out", keep=False)
        check_out_folder(Path(out).parent if file else out, "--out", hold=not file)


def cmd_sweep(args: argparse.Namespace) -> int:
    check_out(args.out)
    from biasaware.experiments.generative import parse_seeds
    from biasaware.experiments.sweep import SweepSpec, parse_grid_flag, run_sweep

    # each flag is named as the spec's setting, but --recipe-config (its config: --config is the sweep file)
    overrides = o.values(o.Sweep, args, skip=("config", "out", "grid", "seeds", "recipe_config"))
    overrides["config"] = args.recipe_config
    overrides["grid"] = parse_grid_flag(args.grid) if args.grid else None
    overrides["seeds"] = parse_seeds(args.seeds) if args.seeds is not None else None  # the studies' rule
    spec = SweepSpec.from_sources(args.config, overrides)
    result = run_sweep(spec, args.out)
    print("\n" + (Path(args.out) / "table.md").read_text())
    print(
        f"[done] table: {Path(args.out) / 'table.md'}, {Path(args.out) / 'table.json'}; plot: "
        f"{Path(args.out) / 'tradeoff.png'} ({counted(len(result['rows']), 'setting')})"
    )
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from biasaware.release import release

    if args.data:
        return release_data(args)
    if not args.checkpoint or not args.report:
        raise BiasAwareError("release needs --checkpoint and --report (or --data for a dataset card)")
    if args.private and not args.push_to_hub:
        raise BiasAwareError(
            "--private makes the hub repository private, and nothing is pushed without --push-to-hub"
        )
    options = o.values(o.Release, args, skip=("checkpoint", "report", "data", "out"))
    release(args.checkpoint, args.report, args.out, **options)
    return 0


def release_data(args: argparse.Namespace) -> int:
    """``release --data``: a dataset card written into the build folder itself."""
    from biasaware.data.card import write_dataset_card

    defaults = o.Release()
    model_only = [  # the model release's options: a dataset card reads none of them
        name
        for name, value in o.values(o.Release, args, skip=("data", "name", "license")).items()
        if value != getattr(defaults, name)
    ]
    if model_only:
        given = ", ".join("--" + name.replace("_", "-") for name in model_only)
        raise BiasAwareError(
            f"--data writes a dataset card into the build folder itself, which reads only --name and --license; "
            f"leave out {given}"
        )
    replaced = (Path(args.data) / "README.md").exists()
    card = write_dataset_card(args.data, name=args.name, license=args.license)
    if replaced:
        print(f"[release] {card} was replaced by the dataset card")
    print(
        f"[release] {card}: dataset card; datasets.load_dataset({str(args.data)!r}) reads every file as a split"
    )
    return 0


COMMANDS = {
    "validate": cmd_validate,
    "models": cmd_models,
    "build": cmd_build,
    "eval": cmd_eval,
    "preflight": cmd_preflight,
    "quickstart": cmd_quickstart,
    "sweep": cmd_sweep,
    "release": cmd_release,
}
