"""What bfloat16 buys on this CPU for the generative experiment's three kinds of work, against float32
in the same run, and what it changes in the verdicts.

1. SFT step (TRL's ``SFTTrainer`` as ``recipes/sft.py`` runs it: the budget's batch and frozen layers):
   float32 against ``bf16=True`` (accelerate's CPU autocast; the weights and AdamW stay float32).
2. GRPO step (TRL's ``GRPOTrainer`` with the balanced arm's rewards): the same two.
3. Evaluated view (``DirectVerdictJudge``): float32 weights against bfloat16 weights, and how many
   verdicts differ and by how much P(A) moves, on the same views.

A CPU with AMX-BF16 (Intel Sapphire Rapids and later) or AVX512-BF16 (e.g. AMD Zen 4) runs bfloat16
matrix products in hardware; one with neither (AVX2, plain AVX512) emulates them and gains little or
loses. The machine's flags are printed and recorded.

    .venv/bin/python bench/cpu_bfloat16.py                               # the cpu budget, smollm2
    .venv/bin/python bench/cpu_bfloat16.py --sft-steps 6 --grpo-steps 4 --views 96 --json out.json
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import torch
from datasets import Dataset
from generative_steps import (  # bench/, next to this script
    grpo_config,
    sft_config,
    step_arguments,
    train_grpo,
)
from record import add_json_argument, run_main, write_record  # bench/, next to this script
from training_steps import StepClock
from trl import SFTConfig, SFTTrainer

from biasaware.experiments.generative import ARMS, TRAINED_CUES, make_budget
from biasaware.experiments.quickstart import build_data
from biasaware.io import read_records
from biasaware.judging.judges import DirectVerdictJudge, JudgeSpec
from biasaware.judging.models import load_model
from biasaware.training.judge_data import grpo_rows, verdict_rows
from biasaware.training.recipe import compact_lm_head_on_cpu, freeze_lower_layers, set_cpu_threads

PRECISIONS = ("float32", "bf16")


def cpu_flags() -> dict[str, bool]:
    """The bfloat16 hardware this CPU has, as torch sees it."""
    return {
        "amx_bf16": bool(torch.cpu._is_amx_tile_supported()),
        "avx512_bf16": bool(torch.cpu._is_avx512_bf16_supported()),
    }


def fresh(model_name: str, layers: int | None):
    model, tok = load_model(model_name, "causal")
    freeze_lower_layers(model, layers)
    return model, tok


def sft_step(args, budget, rows, work: Path, bf16: bool) -> tuple[float, float]:
    """Mean seconds a step (the first two dropped) and the last logged loss."""
    model, tok = fresh(args.model, budget.trainable_layers)
    data = Dataset.from_list(verdict_rows(rows, budget.template, bias_ratio="0:4", seed=0))
    cfg = sft_config(budget, work / f"sft-{bf16}", args.sft_steps, bf16=bf16, logging_steps=1)
    clock = StepClock()
    trainer = SFTTrainer(model=model, args=cfg, train_dataset=data, processing_class=tok, callbacks=[clock])
    trainer.train()
    losses = [log["loss"] for log in trainer.state.log_history if "loss" in log]
    return clock.mean(skip=2), float(losses[-1])


def grpo_step(args, budget, rows, work: Path, bf16: bool) -> tuple[float, float]:
    """Mean seconds a step (the first two dropped) and the mean reward over the steps."""
    model, tok = fresh(args.model, budget.trainable_layers)
    arm = ARMS["balanced"]
    data = Dataset.from_list(grpo_rows(rows, "0:4", 0, template=budget.template))
    cfg = grpo_config(budget, arm, work / f"grpo-{bf16}", args.grpo_steps, bf16=bf16, logging_steps=1)
    trainer, clock = train_grpo(model, tok, arm, data, cfg)
    rewards = [log["reward"] for log in trainer.state.log_history if "reward" in log]
    return clock.mean(skip=2), sum(rewards) / max(len(rewards), 1)


def judged(model: str, template: str, views, dtype: str) -> tuple[float, list[float]]:
    """Seconds a view and P(A) of each view, for a judge whose weights are ``dtype``."""
    judge = DirectVerdictJudge(
        JudgeSpec(name=model, mode="direct", template=template, device="cpu", dtype=dtype)
    )
    judge.judge(views[:8])  # warm-up
    t = time.perf_counter()
    out = judge.judge(views)
    return (time.perf_counter() - t) / len(views), [o.scores["A"] for o in out]


def main() -> None:
    ap = step_arguments(__doc__)
    add_json_argument(ap)
    args = ap.parse_args()
    if args.device not in ("auto", "cpu"):
        ap.error(f"--device {args.device}: this benchmark measures bfloat16 on the CPU (--device cpu)")
    compact_lm_head_on_cpu()  # what every recipe does (biasaware/training/recipe.py)
    budget = make_budget("cpu")
    work = Path(tempfile.mkdtemp(prefix="bench-bf16-"))
    build_data(work, 0)
    threads = set_cpu_threads(SFTConfig(output_dir=str(work), use_cpu=True))
    flags = cpu_flags()
    print(f"threads {threads}; cpu {torch.backends.cpu.get_cpu_capability()}, {flags}")
    paper = read_records(work / "train-paper" / "train.jsonl", "train")
    balanced = read_records(work / "train-balanced" / "train.jsonl", "train")

    sft = {p: sft_step(args, budget, paper, work, p == "bf16") for p in PRECISIONS}
    grpo = {p: grpo_step(args, budget, balanced, work, p == "bf16") for p in PRECISIONS}
    probes = [p for p in read_records(work / "bench", "probe") if p.bias in TRAINED_CUES]
    views = [v for p in probes for v in (p.original, p.injected)][: args.views]
    view = {
        p: judged(args.model, budget.template, views, d)
        for p, d in zip(PRECISIONS, ("float32", "bfloat16"), strict=True)
    }
    p32, p16 = view["float32"][1], view["bf16"][1]
    flips = sum((a > 0.5) != (b > 0.5) for a, b in zip(p32, p16, strict=True))
    shift = max(abs(a - b) for a, b in zip(p32, p16, strict=True))

    print("\n| what | float32 s | bfloat16 s | speed-up | what bfloat16 changed |\n|---|---:|---:|---:|---|")
    print(
        f"| SFT step ({budget.sft_batch} rows) | {sft['float32'][0]:.2f} | {sft['bf16'][0]:.2f} | "
        f"{sft['float32'][0] / sft['bf16'][0]:.2f}x | last loss {sft['float32'][1]:.3f} vs {sft['bf16'][1]:.3f} |"
    )
    print(
        f"| GRPO step ({budget.grpo_batch} completions) | {grpo['float32'][0]:.2f} | {grpo['bf16'][0]:.2f} | "
        f"{grpo['float32'][0] / grpo['bf16'][0]:.2f}x | mean reward {grpo['float32'][1]:.3f} vs {grpo['bf16'][1]:.3f} |"
    )
    print(
        f"| evaluated view, direct | {view['float32'][0]:.3f} | {view['bf16'][0]:.3f} | "
        f"{view['float32'][0] / view['bf16'][0]:.2f}x | {flips} of {len(views)} verdicts flipped; "
        f"P(A) moved at most {shift:.3f} |"
    )
    print(
        f"\nSFT and GRPO in bfloat16 are accelerate's CPU autocast (bf16=True; float32 weights and AdamW); "
        f"the judge's bfloat16 is its weights. Steps timed: SFT {args.sft_steps}, GRPO {args.grpo_steps}, "
        "the first two of each dropped."
    )
    write_record(
        args.json,
        {
            "threads": threads,
            "cpu_flags": flags,
            "sft_step": {
                p: {"seconds": round(s, 3), "last_loss": round(loss, 4)} for p, (s, loss) in sft.items()
            },
            "grpo_step": {
                p: {"seconds": round(s, 3), "mean_reward": round(r, 4)} for p, (s, r) in grpo.items()
            },
            "view_direct": {
                "seconds": {p: round(view[p][0], 4) for p in PRECISIONS},
                "views": len(views),
                "verdicts_flipped": flips,
                "max_p_a_shift": round(shift, 4),
            },
            "speedup": {
                "sft_step": round(sft["float32"][0] / sft["bf16"][0], 2),
                "grpo_step": round(grpo["float32"][0] / grpo["bf16"][0], 2),
                "view_direct": round(view["float32"][0] / view["bf16"][0], 2),
            },
        },
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    run_main(main)
