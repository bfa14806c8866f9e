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
training rows); its GRPO checkpoints are left alone (the stages here write under ``--work``).

    .venv/bin/biasaware quickstart --generative --arms baseline,balanced --bench-probes 2 --out runs/pilot
    .venv/bin/python bench/grpo_signal.py --seed-folder runs/pilot/seed-0 --arms baseline,balanced \\
        --variant lr1e-5:grpo_lr=1e-5 --variant t1.5:temperature=1.5 --json docs/results/bench/grpo-signal.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from record import add_json_argument, write_record  # bench/, next to this script

from biasaware.experiments import parts
from biasaware.experiments.generative import ARMS, BASE_MODEL, Budget, grpo_signal, make_budget, train_flags
from biasaware.recipes import CONFIGS
from biasaware.training.signal import forget_scores


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, _, settings = text.partition(":")
    pairs = [s.split("=", 1) for s in settings.split(",") if s]
    if not name or not pairs or any(len(p) != 2 for p in pairs):
        raise SystemExit(f"--variant {text!r}: write NAME:key=value[,key=value...]")
    return name, dict(pairs)


def study_flags(folder: Path, arm_name: str, out: Path, settings: dict[str, str]) -> dict:
    """The GRPO stage's flags as the study gives them (experiments/generative.grpo), from the seed's
    recorded budget with the budget ``settings`` changed (the rest of ``settings``: recipe flags);
    written under ``out``, no resumable checkpoints."""
    seed = json.loads((folder / "generative.json").read_text())
    changed = {k: v for k, v in settings.items() if k in Budget.model_fields}
    budget = make_budget("cpu", {**(seed.get("budget") or {}), **changed})
    arm = ARMS[arm_name]
    flags = {
        "config": CONFIGS / BASE_MODEL / "grpo_verdict.yaml",
        "model_name_or_path": folder / "ckpt" / f"{arm.sft_of or arm_name}-sft",
        "output_dir": out,
        "train_file": folder / arm.rows / "train.jsonl",
        "max_steps": budget.grpo_steps,
        "per_device_train_batch_size": budget.grpo_batch,
        "num_generations": budget.num_generations,
        "max_completion_length": budget.max_completion_length,
        "learning_rate": budget.grpo_lr,
        "rewards": budget.grpo_rewards(arm),
        "reward_weights": ["1.0"] * len(budget.grpo_rewards(arm)),
        "scale_rewards": arm.scale_rewards,
        "select_prompts": budget.grpo_prompts,
        "select_pool": budget.grpo_pool,
        **({"both_orders": True} if budget.both_orders else {}),
        **train_flags(arm, budget, int(seed["seed"]), True, budget.grpo_steps),
        "save_strategy": "no",
    }
    for key in ("save_steps", "save_total_limit"):
        flags.pop(key)
    return {**flags, **{k: v for k, v in settings.items() if k not in changed}}


def figures_of(ckpt: Path, seconds: float) -> dict:
    signal = grpo_signal(ckpt)
    steps = signal["steps"]
    history = json.loads((ckpt / "biasaware_card.json").read_text()).get("log_history") or []
    fmt = [e["rewards/format_reward/mean"] for e in history if "rewards/format_reward/mean" in e]
    kept = (signal.get("selection") or {}).get("kept") or {}
    expected = kept.get("expected_uniform_groups")
    zero = signal["mean_zero_std_groups"]
    return {
        "nonuniform": None if zero is None else round(1 - zero, 4),
        "expected_nonuniform": None if expected is None else round(1 - expected, 4),
        "steps": len(steps),
        "steps_without_signal": sum(1 for s in steps if (s["zero_std_groups"] or 0) >= 1.0),
        "entropy_first_last": signal.get("entropy"),
        "format_reward_mean": round(sum(fmt) / len(fmt), 4) if fmt else None,
        "seconds": round(seconds, 1),
    }


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
    add_json_argument(parser)
    args = parser.parse_args()
    if not (args.seed_folder / "generative.json").exists():
        raise SystemExit(
            f"{args.seed_folder}: no generative.json; give a finished seed of quickstart --generative"
        )
    variants = [("study", {})] + [parse_variant(v) for v in args.variant]
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise SystemExit(f"--arms: unknown {', '.join(unknown)}; the study's arms are {', '.join(ARMS)}")
    # the seed by its study folder's name and its own (no local path in a published file)
    seed = args.seed_folder.resolve()
    figures: dict = {"seed_folder": f"{seed.parent.name}/{seed.name}", "arms": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        for arm in arms:
            figures["arms"][arm] = {}
            for name, settings in variants:
                out = work / f"{arm}-{name}"
                flags = study_flags(args.seed_folder, arm, out, settings)
                forget_scores()  # each variant scores its pool, so its seconds compare with the study's
                t0 = time.time()
                parts.run_stage("grpo", flags, f"GRPO of {arm}, {name}", work / "run.log", cpu=True)
                row = {"settings": settings, **figures_of(out, time.time() - t0)}
                figures["arms"][arm][name] = row
                print(
                    f"{arm:10} {name:16} " + ", ".join(f"{k} {v}" for k, v in row.items() if k != "settings")
                )
    write_record(args.json, figures)


if __name__ == "__main__":
    main()
