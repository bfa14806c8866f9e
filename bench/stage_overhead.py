"""What a training stage of an experiment costs beyond its steps, run in this process against the
same stage launched in its own process (``biasaware.experiments.parts.run_stage``), measured in the
same run; and what ``eval bias`` costs per view against the judge alone on the same views.

1. Per stage (the reward quickstart's reward model; the generative preset's SFT on verdicts and
   GRPO with its prompts chosen by signal, smollm2-135m-instruct on the CPU): wall seconds, the
   trainer's own ``train_runtime`` (its steps) and the difference, the overhead: interpreter start,
   imports, model loading, data building, prompt selection, saving and the load-back check.
   ``inline`` against ``python``; the inline stage's overhead phase by phase (``phases``: its model
   card's ``phase_seconds``, as ``quickstart --generative`` records them per stage). Beside it,
   ``reload_s``: loading the stage's saved model again at once (from the page cache), which is all
   that handing the model to the next stage in memory would save.
2. Per view: ``eval bias`` of the SFT checkpoint (direct mode, both views of every probe, writing
   judgments and summaries) against ``judge()`` of the same judge on the same views, in seconds
   per view (alternating, the best of three each); and ``reports_s``, the fixed cost of scoring and writing the reports (an ``eval bias
   --rescore`` of the same folder).
3. Per resumable checkpoint (``checkpoint``): the inline SFT stage again with a checkpoint after every
   step but the last (``save_minutes``, ``biasaware/training/checkpoints.py``): seconds a save, and its
   steps' time with the saves against without.

Goal (the stage runner's): at most 5 s of overhead per stage in this process, and ``eval bias``
within the judge's own rate per view.

    .venv/bin/python bench/stage_overhead.py
    .venv/bin/python bench/stage_overhead.py --steps 4 --probes 12 --json docs/results/bench/stage-overhead.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch
from record import add_json_argument, at_least, run_main, write_record  # bench/, next to this script
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

from biasaware.data.builders import BuildConfig, build_bench, build_train
from biasaware.evaluation.evaluate import evaluate_bias
from biasaware.experiments.parts import beyond_steps, run_stage
from biasaware.io import read_records
from biasaware.judging.judges import JudgeSpec, load_judge
from biasaware.recipes import CONFIGS

JUDGE_MODEL = "smollm2-135m-instruct"
ROUNDS = 3  # of each per-view timing


def steps_seconds(ckpt: Path) -> float:
    """The trainer's own time for its steps, from the model card's log."""
    card = json.loads((ckpt / "biasaware_card.json").read_text())
    return next(e["train_runtime"] for e in reversed(card["log_history"]) if "train_runtime" in e)


def stages(rows: Path, out: Path, steps: int) -> dict[str, tuple[str, dict]]:
    """The three stages: recipe and flags, each into its own folder under ``out``."""
    common = {"train_file": rows, "max_steps": steps, "logging_steps": 1, "seed": 0}
    return {
        "reward": ("reward", {"config": CONFIGS / "minilm-l6" / "reward_infonce.yaml", **common}),
        "sft": (
            "sft",
            {
                "config": CONFIGS / JUDGE_MODEL / "sft_verdict.yaml",
                "trainable_layers": 4,
                "max_length": 1024,
                **common,
            },
        ),
        "grpo": (
            "grpo",
            {
                "config": CONFIGS / JUDGE_MODEL / "grpo_verdict.yaml",
                "model_name_or_path": out / "sft-inline",
                "trainable_layers": 4,
                "per_device_train_batch_size": 8,
                "num_generations": 2,
                "select_prompts": 8,  # as the presets do: the prompts of most signal of a scored pool
                "select_pool": 32,
                **common,
            },
        ),
    }


def per_view(ckpt: Path, bench: Path, out: Path) -> dict[str, float]:
    """``eval bias`` against the judge alone, seconds per view, on the same views."""
    spec = JudgeSpec.create(name=str(ckpt), mode="direct", template="verdict", device="cpu")
    probes = [p for f in sorted(bench.glob("*.jsonl")) for p in read_records(f, "probe")]
    views = [v for p in probes for v in (p.original, p.injected)]
    judge = load_judge(spec)
    judge.judge(views[:2])  # warm: the first batch pays for lazy set-up in either path
    alone, whole = [], []
    for k in range(ROUNDS):  # alternating, best of each: a 2-core machine's noise is a tenth either way
        t0 = time.perf_counter()
        judge.judge(views)
        alone.append((time.perf_counter() - t0) / len(views))
        t0 = time.perf_counter()
        evaluate_bias(spec, bench, out / str(k), judge=judge)
        whole.append((time.perf_counter() - t0) / len(views))
    alone, whole = min(alone), min(whole)
    t0 = time.perf_counter()
    evaluate_bias(spec, bench, out / "0", rescore=True)
    reports = time.perf_counter() - t0
    return {
        "views": len(views),
        "judge_s_per_view": round(alone, 4),
        "eval_s_per_view": round(whole, 4),
        "reports_s": round(reports, 2),
        "eval_without_reports_s_per_view": round(whole - reports / len(views), 4),
    }


def reload_seconds(folder: Path, kind: str) -> float:
    """Loading a stage's saved model again, as the next stage does (warm: just written)."""
    auto = AutoModelForSequenceClassification if kind == "reward" else AutoModelForCausalLM
    t0 = time.perf_counter()
    auto.from_pretrained(folder, dtype=torch.float32)
    return round(time.perf_counter() - t0, 2)


def checkpoint_cost(tmp: Path, steps: int, without: float) -> dict[str, float]:
    """The inline SFT stage again, saving a resumable checkpoint after every step but the last
    (``save_minutes`` near 0): the saves' count and seconds each, from its model card, and its steps'
    seconds against the stage's without them (``without``)."""
    recipe, flags = stages(tmp / "rows" / "train.jsonl", tmp, steps)["sft"]
    out = tmp / "sft-checkpoints"
    run_stage(
        recipe, {**flags, "output_dir": out, "save_minutes": 1e-9}, "sft (checkpoints)", tmp / "run.log"
    )
    saved = json.loads((out / "biasaware_card.json").read_text())["checkpoints"]
    return {
        "trainable_layers": flags["trainable_layers"],
        "saved": saved["saved"],
        "seconds_each": round(saved["seconds"] / max(saved["saved"], 1), 2),
        "steps_s": round(steps_seconds(out), 1),
        "steps_s_without": without,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=at_least(1), default=4, help="optimizer steps per stage (default 4)")
    parser.add_argument(
        "--probes", type=at_least(1), default=6, help="probes per bias and side for eval (default 6)"
    )
    add_json_argument(parser)
    args = parser.parse_args()
    if args.steps < 2:  # the checkpoint figures need a step after a save
        parser.error(
            f"--steps {args.steps}: at least 2 (a checkpoint is saved after every step but the last)"
        )
    if args.probes < 1:
        parser.error(f"--probes {args.probes}: at least 1")
    figures: dict = {"steps": args.steps, "stages": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_train(
            BuildConfig(corpus_size=400, max_rows=64, n_negatives=2, augment="balanced"), tmp / "rows"
        )
        build_bench(BuildConfig(n_per_bias=args.probes, biases="length,authority,bandwagon"), tmp / "bench")
        for name, (recipe, flags) in stages(tmp / "rows" / "train.jsonl", tmp, args.steps).items():
            row = {}
            for how in ("python", "inline"):
                out = tmp / f"{name}-{how}"
                t0 = time.perf_counter()
                run_stage(recipe, {**flags, "output_dir": out}, f"{name} ({how})", tmp / "run.log", how=how)
                wall, steps = time.perf_counter() - t0, steps_seconds(out)
                row[how] = {
                    "wall_s": round(wall, 1),
                    "steps_s": round(steps, 1),
                    "overhead_s": round(wall - steps, 1),
                }
            inline, ckpt = row["inline"], tmp / f"{name}-inline"
            phases = json.loads((ckpt / "biasaware_card.json").read_text())["phase_seconds"]
            inline["phases"] = beyond_steps(phases, steps_seconds(ckpt), inline["wall_s"])
            row["reload_s"] = reload_seconds(tmp / f"{name}-inline", recipe)
            row["overhead_inline_vs_python"] = round(
                row["inline"]["overhead_s"] / row["python"]["overhead_s"], 2
            )
            figures["stages"][name] = row
            print(
                f"{name}: overhead {row['inline']['overhead_s']} s in this process vs {row['python']['overhead_s']} s "
                f"launched ({row['overhead_inline_vs_python']}x); steps {row['inline']['steps_s']} s vs "
                f"{row['python']['steps_s']} s; reloading the saved model {row['reload_s']} s; in this process "
                f"beyond the steps: {', '.join(f'{k} {v:g}' for k, v in inline['phases'].items())}",
                flush=True,
            )
        figures["checkpoint"] = checkpoint_cost(
            tmp, args.steps, figures["stages"]["sft"]["inline"]["steps_s"]
        )
        c = figures["checkpoint"]
        print(
            f"a resumable checkpoint (SFT, {c['trainable_layers']} layers trained): {c['seconds_each']} s each, "
            f"{c['saved']} saved; steps {c['steps_s']} s with them vs {c['steps_s_without']} s without",
            flush=True,
        )
        figures["eval"] = per_view(tmp / "sft-inline", tmp / "bench", tmp / "eval")
        e = figures["eval"]
        e["eval_vs_judge"] = round(e["eval_s_per_view"] / e["judge_s_per_view"], 2)
        e["eval_without_reports_vs_judge"] = round(
            e["eval_without_reports_s_per_view"] / e["judge_s_per_view"], 2
        )
        print(
            f"eval bias: {e['eval_s_per_view']} s a view vs the judge alone {e['judge_s_per_view']} s "
            f"({e['eval_vs_judge']}x) over {e['views']} views; without the reports ({e['reports_s']} s, a fixed "
            f"cost) {e['eval_without_reports_vs_judge']}x",
            flush=True,
        )
    write_record(args.json, figures)


if __name__ == "__main__":
    run_main(main)
