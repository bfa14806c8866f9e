"""How much of GRPO's signal each setting keeps: the generative study's GRPO stage, run again from one
seed's SFT checkpoints with the study's settings and with each variant, in the same run.

A GRPO group whose sampled verdicts all get the same reward has zero advantage and teaches nothing.
Per arm and setting this reports the share of groups whose rewards differed (``nonuniform``, the
mean over steps of one minus TRL's ``frac_reward_zero_std``), the steps on which every group was
uniform (no gradient), what the prompt selection expected (``expected_nonuniform``: its
``1 - p^G - (1 - p)^G`` over the kept prompts, from the starting checkpoint), the completions'
entropy at the first and the last step (a verdict sampled alike everywhere has entropy near 0), the
format reward's mean (a negative one: malformed verdicts, which a hotter sampling writes) and the
stage's seconds. ``study`` is the seed's own settings (the baseline of the comparison); each
``--variant NAME:key=value,...`` changes the study's budget settings (``grpo_lr``, ``grpo_pool``,
``both_orders``, ``num_generations`` with ``grpo_batch``, ...: as ``quickstart --generative`` would
run them) and, for any other key, GRPO recipe settings (``temperature``, ``beta``, ...).

The seed folder is one that ``biasaware quickstart --generative`` wrote (its ``ckpt/<arm>-sft`` and
training rows; a seed still running will do once its SFT checkpoints are there); its GRPO checkpoints
are left alone (the stages here write under ``--work``; a variant an earlier run finished there with
the same settings is read again, without its seconds, and one of other settings is refused).
``--no-study`` without a variant reads the seed's own GRPO stages and trains nothing.
``--expected`` trains nothing: per arm and setting it runs only the GRPO recipe's prompt selection
(the pool scored once per arm) and reports the temperature it chose and the share of groups it
expects to carry signal, which is how a group size or a signal target is tried in minutes before a
GPU run.

    .venv/bin/biasaware quickstart --generative --arms baseline,balanced --bench-probes 2 --out runs/pilot
    .venv/bin/python bench/grpo_signal.py --seed-folder runs/pilot/seed-0 --arms baseline,balanced \\
        --variant lr1e-5:grpo_lr=1e-5 --variant t1.5:temperature=1.5 --json docs/results/bench/grpo-signal.json
    .venv/bin/python bench/grpo_signal.py --seed-folder runs/gpu/seed-0 --arms baseline,paper,balanced \
        --expected --variant g16:num_generations=16
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from record import add_json_argument, run_main, write_record  # bench/, next to this script

from biasaware.errors import BiasAwareError
from biasaware.experiments import parts
from biasaware.experiments.generative import ARMS, Budget, claimed, grpo_flags, grpo_signal, make_budget
from biasaware.recipes import grpo as grpo_recipe
from biasaware.recipes.grpo import grpo_prompts
from biasaware.training.recipe import parse_recipe
from biasaware.training.run_folder import trained
from biasaware.training.signal import forget_scores


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, _, settings = text.partition(":")
    pairs = [s.split("=", 1) for s in settings.split(",") if s]
    if not name or not pairs or any(len(p) != 2 for p in pairs):
        raise SystemExit(f"--variant {text!r}: write NAME:key=value[,key=value...]")
    return name, dict(pairs)


def setting_value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def seed_record(folder: Path) -> dict:
    """The seed's seed, budget and training precision: from its ``generative.json`` when the seed has
    finished, else from its study's ``experiment.json`` (the seed by its folder's name)."""
    done = folder / "generative.json"
    if done.exists():
        seed = json.loads(done.read_text())
        return {
            "seed": int(seed["seed"]),
            "budget": seed.get("budget") or {},
            "precision": (seed.get("machine") or {}).get("training_precision", "float32"),
        }
    study = claimed(folder.parent) or {}
    return {
        "seed": int(folder.name.removeprefix("seed-")),
        "budget": study.get("budget") or {},
        "precision": study.get("precision", "float32"),
    }


def study_flags(folder: Path, seed: dict, arm_name: str, out: Path, settings: dict[str, str]) -> dict:
    """The GRPO stage's flags as the study gives them (:func:`biasaware.experiments.generative.grpo_flags`),
    from the seed's recorded budget (``seed``: its :func:`seed_record`) with the budget ``settings`` changed (the rest of ``settings``:
    recipe flags); written under ``out``, no resumable checkpoints."""
    # a budget setting's value as JSON reads it (16, 1e-5, true), so a new group size keeps the seed's prompts a step
    changed = {k: setting_value(v) for k, v in settings.items() if k in Budget.model_fields}
    budget = make_budget("cpu", changed, base=seed["budget"])
    arm = ARMS[arm_name]
    start = folder / "ckpt" / f"{arm.sft_of or arm_name}-sft"
    flags = grpo_flags(budget, arm, seed["seed"], start, out, folder, precision=seed["precision"])
    flags["save_minutes"] = 0.0  # save_strategy "no" already
    flags.pop("save_total_limit")
    return {**flags, **{k: v for k, v in settings.items() if k not in changed}}


def expected_of(flags: dict) -> dict:
    """What the prompt selection of a GRPO stage with ``flags`` expects, without training: the
    recipe's own :func:`biasaware.recipes.grpo.grpo_prompts` on its parsed settings."""
    parsed = parse_recipe(grpo_recipe.DATACLASSES, parts.recipe_flags(flags))
    _, selection = grpo_prompts(*parsed)
    kept, pool = selection["kept"], selection["pool"]
    return {
        "generations": selection["generations"],
        "temperature": selection["temperature"],
        "expected_nonuniform": round(1 - kept["expected_uniform_groups"], 4),
        "pool_expected_nonuniform": round(1 - pool["expected_uniform_groups"], 4),
        "kept_prompts": kept["prompts"],
        **({"target_reached": selection["target_reached"]} if "target_reached" in selection else {}),
    }


def figures_of(ckpt: Path, seconds: float | None) -> dict:
    signal = grpo_signal(ckpt)
    steps = signal["steps"]
    history = json.loads((ckpt / "biasaware_card.json").read_text()).get("log_history") or []
    fmt = [e["rewards/format_reward/mean"] for e in history if "rewards/format_reward/mean" in e]
    selection = signal.get("selection") or {}
    expected = (selection.get("kept") or {}).get("expected_uniform_groups")
    in_pool = (selection.get("pool") or {}).get("expected_uniform_groups")
    zero = signal["mean_zero_std_groups"]
    return {
        "nonuniform": None if zero is None else round(1 - zero, 4),
        "expected_nonuniform": None if expected is None else round(1 - expected, 4),
        "pool_expected_nonuniform": None if in_pool is None else round(1 - in_pool, 4),
        "steps": len(steps),
        "steps_without_signal": sum(1 for s in steps if (s["zero_std_groups"] or 0) >= 1.0),
        "entropy_first_last": signal.get("entropy"),
        "format_reward_mean": round(sum(fmt) / len(fmt), 4) if fmt else None,
        "seconds": None if seconds is None else round(seconds, 1),
    }


def seed_row(folder: Path, arm: str) -> dict | None:
    """The figures of the seed's own GRPO stage of ``arm`` (its checkpoint and its stage's recorded
    seconds), when the seed has run it: the study's row of a ``--no-study`` run."""
    ckpt = folder / "ckpt" / f"{arm}-grpo"
    if not (ckpt / "biasaware_card.json").exists():
        return None
    seconds = parts.Stages(folder / "stages.json").data["seconds"].get(f"train {arm} GRPO")
    return {"settings": {}, "from_seed": True, **figures_of(ckpt, seconds)}


def against(row: dict, study: dict | None) -> dict:
    """A variant's figures against the study row's of the same arm, from the same run: the share of groups
    with signal as a difference, the seconds as a ratio (empty without a study row)."""
    if not study or row is study:
        return {}
    out = {}
    for k in ("nonuniform", "expected_nonuniform"):
        if row.get(k) is not None and study.get(k) is not None:
            out[f"{k}_minus_study"] = round(row[k] - study[k], 4)
    if row.get("seconds") and study.get("seconds"):
        out["seconds_vs_study"] = round(row["seconds"] / study["seconds"], 2)
    return out


def say(arm: str, name: str, row: dict) -> None:
    print(f"{arm:10} {name:16} " + ", ".join(f"{k} {v}" for k, v in row.items() if k != "settings"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seed-folder", required=True, type=Path, help="a seed folder of quickstart --generative"
    )
    parser.add_argument(
        "--arms", default="baseline,balanced", help="arms whose GRPO is run (default baseline,balanced)"
    )
    parser.add_argument(
        "--variant", action="append", default=[], help="NAME:key=value,... GRPO settings changed (repeatable)"
    )
    parser.add_argument("--work", type=Path, help="where the stages write (default: a temporary folder)")
    parser.add_argument(
        "--no-study",
        action="store_true",
        help="run the variants only, not the study's own settings again (its row: the seed's own GRPO stage, when "
        "the seed has run it); without a variant: the seed's own GRPO stages only, nothing trained",
    )
    parser.add_argument(
        "--expected",
        action="store_true",
        help="no training: what each setting's prompt selection expects (its temperature and expected share of "
        "groups with signal), each arm's pool scored once",
    )
    add_json_argument(parser)
    args = parser.parse_args()
    if not (args.seed_folder / "generative.json").exists() and not (
        (args.seed_folder.parent / "experiment.json").exists() and (args.seed_folder / "ckpt").is_dir()
    ):
        raise SystemExit(
            f"{args.seed_folder}: not a seed folder of quickstart --generative (its generative.json, or its "
            "study's experiment.json and its ckpt/)"
        )
    variants = ([] if args.no_study else [("study", {})]) + [parse_variant(v) for v in args.variant]
    if not variants and args.expected:
        raise SystemExit("--expected --no-study: give at least one --variant")
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise SystemExit(f"--arms: unknown {', '.join(unknown)}; the study's arms are {', '.join(ARMS)}")
    # the seed by its study folder's name and its own (no local path in a published file)
    seed = args.seed_folder.resolve()
    # the study row's settings (the seed's budget), which each variant changes
    record = seed_record(args.seed_folder)  # read once: every variant's flags start from it
    # a missing arm or a bad setting is said before anything trains (the flags checked with an output folder of
    # their own, in which nothing is written)
    with tempfile.TemporaryDirectory() as scratch:
        for arm in arms if variants else []:
            start = args.seed_folder / "ckpt" / f"{ARMS[arm].sft_of or arm}-sft"
            if not trained(start):
                parser.error(
                    f"--arms {arm}: {start} holds no finished SFT checkpoint (the seed has not trained it)"
                )
            for name, settings in variants:
                out = Path(scratch) / f"{arm}-{name}"
                try:
                    parse_recipe(
                        grpo_recipe.DATACLASSES,
                        parts.recipe_flags(study_flags(args.seed_folder, record, arm, out, settings)),
                    )
                except BiasAwareError as exc:
                    parser.error(f"--variant {name}: {exc}")
    figures: dict = {
        "seed_folder": f"{seed.parent.name}/{seed.name}",
        "seed_budget": record["budget"],
        "arms": {},
    }
    if args.expected:
        figures["expected_only"] = True
        for arm in arms:
            figures["arms"][arm] = {}
            for name, settings in variants:
                row = {
                    "settings": settings,
                    **expected_of(study_flags(args.seed_folder, record, arm, Path("-"), settings)),
                }
                row.update(against(row, figures["arms"][arm].get("study")))
                figures["arms"][arm][name] = row
                say(arm, name, row)
        write_record(args.json, figures)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        for arm in arms:
            figures["arms"][arm] = {}
            if args.no_study:
                seeds_own = seed_row(args.seed_folder, arm)
                if seeds_own is not None:
                    figures["arms"][arm]["study"] = seeds_own
                    say(arm, "study", seeds_own)
            for name, settings in variants:
                out = work / f"{arm}-{name}"
                flags = study_flags(args.seed_folder, record, arm, out, settings)
                forget_scores()  # each variant scores its pool, so its seconds compare with the study's
                earlier = trained(out)  # a stage finished under --work by an earlier run: read, not rerun
                t0 = time.time()
                try:
                    parts.run_stage("grpo", flags, f"GRPO of {arm}, {name}", work / "run.log", cpu=True)
                except BiasAwareError as exc:  # a variant name reused under --work with other settings
                    raise BiasAwareError(
                        f"--variant {name}, arm {arm}: {exc} (here: another --work or variant name)"
                    ) from None
                row = {"settings": settings, **figures_of(out, None if earlier else time.time() - t0)}
                if earlier:
                    row["finished_earlier"] = True
                row.update(against(row, figures["arms"][arm].get("study")))
                figures["arms"][arm][name] = row
                say(arm, name, row)
    write_record(args.json, figures)


if __name__ == "__main__":
    run_main(main)
