"""What a step of the generative experiment costs (``biasaware quickstart --generative``), against the
bare model work on the same tokens, measured in the same run.

1. SFT step (``recipes/sft.py``'s trainer: verdict targets, the budget's frozen layers) vs a bare
   forward + backward + AdamW step of the model on the same collated batches.
2. GRPO step (TRL's ``GRPOTrainer`` with the balanced arm's rewards) vs the bare work on the same
   tokens: a no-grad forward over the prompts (what sampling needs at least) plus a forward +
   backward + AdamW step over the prompt + completion sequences.
3. Evaluated view (``DirectVerdictJudge``, the verdict from the last position) vs a bare no-grad
   forward of the same batches.

Goal: each within 1.25x of its bare cost. Tokens per view are printed with the figures.

On a GPU (``--device auto`` finds one, or ``--device cuda``) it times the ``gpu`` preset's steps in bfloat16
mixed precision, every layer trained, as ``quickstart --generative`` runs them there; each timing waits for the
device to finish.

    .venv/bin/python bench/generative_steps.py                      # smollm2, the cpu budget
    .venv/bin/python bench/generative_steps.py --sft-steps 6 --grpo-steps 4 --views 64
    .venv/bin/python bench/generative_steps.py --trl-lm-head          # TRL's LM head as shipped
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import torch
from datasets import Dataset
from record import add_json_argument, at_least, run_main, write_record  # bench/, next to this script
from training_steps import StepClock, common, wait
from trl import GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

from biasaware.devices import resolve_device
from biasaware.experiments.generative import ARMS, TRAINED_CUES, make_budget
from biasaware.experiments.quickstart import build_data
from biasaware.io import read_records
from biasaware.judging.judges import DirectVerdictJudge, JudgeSpec
from biasaware.judging.models import load_model
from biasaware.training.judge_data import grpo_rows, verdict_rows
from biasaware.training.recipe import compact_lm_head_on_cpu, freeze_lower_layers, set_cpu_threads
from biasaware.training.rewards import get_reward_funcs


def fresh(model_name: str, layers: int | None, device=None):
    model, tok = load_model(model_name, "causal", device=device)
    freeze_lower_layers(model, layers)
    return model, tok


def sft_config(
    budget, out: Path, steps: int, bf16: bool = False, logging_steps: int = 1000, cpu: bool = True
) -> SFTConfig:
    """The recipe's SFT settings at the budget, on the CPU (``cpu`` false: on the GPU)."""
    return SFTConfig(
        **common(str(out), steps, bf16, logging_steps, cpu, seed=0, gradient_checkpointing=False),
        per_device_train_batch_size=budget.sft_batch,
        learning_rate=budget.sft_lr,
        max_length=budget.max_length,
    )


def grpo_config(
    budget, arm, out: Path, steps: int, bf16: bool = False, logging_steps: int = 1000, cpu: bool = True
) -> GRPOConfig:
    """The recipe's GRPO settings at the budget for ``arm``, on the CPU (``cpu`` false: on the GPU)."""
    return GRPOConfig(
        **common(str(out), steps, bf16, logging_steps, cpu, seed=0, gradient_checkpointing=False),
        per_device_train_batch_size=budget.grpo_batch,
        num_generations=budget.num_generations,
        max_completion_length=budget.max_completion_length,
        learning_rate=budget.grpo_lr,
        beta=0.0,
        scale_rewards=arm.scale_rewards,
        shuffle_dataset=False,
    )


def train_grpo(model, tok, arm, data, cfg: GRPOConfig) -> tuple[GRPOTrainer, StepClock]:
    """TRL's GRPO trainer of ``arm``'s rewards, trained; with its step clock."""
    clock = StepClock()
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=get_reward_funcs(arm.rewards),
        args=cfg,
        train_dataset=data,
        processing_class=tok,
        callbacks=[clock],
    )
    trainer.train()
    return trainer, clock


def bare_train_step(model, opt, ids: torch.Tensor, mask: torch.Tensor, keep: int) -> float:
    """One forward + backward + AdamW step on the model's device (in bfloat16 autocast on a GPU, as the
    trainer's mixed precision), timed until the device has finished it."""
    device = next(model.parameters()).device
    ids, mask = ids.to(device), mask.to(device)
    wait(device)
    t = time.perf_counter()
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        out = model(input_ids=ids, attention_mask=mask, logits_to_keep=keep)
    out.logits.float().logsumexp(-1).mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    wait(device)
    return time.perf_counter() - t


def step_arguments(doc: str) -> argparse.ArgumentParser:
    """The options of a bench of the generative experiment's steps: the model, steps and views timed."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument(
        "--model", default="smollm2-135m-instruct", help="the judge trained (default smollm2-135m-instruct)"
    )
    ap.add_argument("--sft-steps", type=at_least(1), default=8, help="SFT steps timed (default 8)")
    ap.add_argument("--grpo-steps", type=at_least(1), default=5, help="GRPO steps timed (default 5)")
    ap.add_argument(
        "--views", type=at_least(1), default=128, help="views judged for the evaluation rate (default 128)"
    )
    ap.add_argument(
        "--device", default="auto", help="auto (a GPU when there is one; default), cpu, cuda, cuda:N"
    )
    return ap


def main() -> None:
    ap = step_arguments(__doc__)
    ap.add_argument(
        "--trl-lm-head",
        action="store_true",
        help="leave TRL's LM head as shipped (every position scored on a CPU); default: compact",
    )
    add_json_argument(ap)
    args = ap.parse_args()
    if not args.trl_lm_head:
        compact_lm_head_on_cpu()  # what every recipe does (biasaware/training/recipe.py)
    device = resolve_device(args.device)
    gpu = device.type == "cuda"
    budget = make_budget("gpu" if gpu else "cpu")
    work = Path(tempfile.mkdtemp(prefix="bench-gen-"))
    build_data(work, 0)
    threads = set_cpu_threads(SFTConfig(output_dir=str(work), use_cpu=True))
    rows = read_records(work / "train-paper" / "train.jsonl", "train")
    balanced = read_records(work / "train-balanced" / "train.jsonl", "train")
    print(
        f"{device}; threads {threads}; budget: template {budget.template}, top {budget.trainable_layers} layers, "
        f"SFT batch {budget.sft_batch}, GRPO batch {budget.grpo_batch} ({budget.num_generations} per prompt)"
    )

    # 1. SFT
    model, tok = fresh(args.model, budget.trainable_layers, device)
    data = Dataset.from_list(verdict_rows(rows, budget.template, bias_ratio="0:4", seed=0))
    cfg = sft_config(budget, work / "sft", args.sft_steps, bf16=gpu, cpu=not gpu)
    clock = StepClock()
    trainer = SFTTrainer(model=model, args=cfg, train_dataset=data, processing_class=tok, callbacks=[clock])
    batches = [b for _, b in zip(range(args.sft_steps), trainer.get_train_dataloader(), strict=False)]
    trainer.train()
    sft = clock.mean(skip=2)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=budget.sft_lr)
    model.train()
    bare = [bare_train_step(model, opt, b["input_ids"], b["attention_mask"], 1) for b in batches]
    bare_sft = sum(bare[2:] or bare) / len(bare[2:] or bare)
    sft_tokens = sum(int(b["attention_mask"].sum()) for b in batches) / len(batches)
    del trainer, model, opt

    # 2. GRPO (the balanced arm: whole pairs per batch, accuracy + cue-consistency + format)
    model, tok = fresh(args.model, budget.trainable_layers, device)
    arm = ARMS["balanced"]
    data = Dataset.from_list(grpo_rows(balanced, "0:4", 0, template=budget.template))
    config = grpo_config(budget, arm, work / "grpo", args.grpo_steps, bf16=gpu, cpu=not gpu)
    trainer, clock = train_grpo(model, tok, arm, data, config)
    grpo = clock.mean(skip=2)
    prompts = budget.grpo_batch // budget.num_generations
    from biasaware.judging.models import chat_ids

    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=budget.grpo_lr)
    bare = []
    for step in range(args.grpo_steps):
        block = [data[i]["prompt"] for i in range(step * prompts, (step + 1) * prompts)]
        ids = chat_ids(tok, block, add_generation_prompt=True)
        full = [
            x + tok.encode("A<|im_end|>", add_special_tokens=False)[: budget.max_completion_length]
            for x in ids
            for _ in range(budget.num_generations)
        ]
        enc = tok.pad({"input_ids": full}, return_tensors="pt").to(device)
        wait(device)
        t = time.perf_counter()
        with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=gpu):
            model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], logits_to_keep=1)
        wait(device)
        bare.append(
            time.perf_counter()
            - t
            + bare_train_step(
                model, opt, enc["input_ids"], enc["attention_mask"], budget.max_completion_length + 1
            )
        )
    bare_grpo = sum(bare[2:] or bare) / len(bare[2:] or bare)
    grpo_tokens = sum(len(x) for x in full)
    del trainer, model, opt

    # 3. evaluated views (direct mode)
    probes = [p for p in read_records(work / "bench", "probe") if p.bias in TRAINED_CUES]
    views = [v for p in probes for v in (p.original, p.injected)][: args.views]
    judge = DirectVerdictJudge(
        JudgeSpec(name=args.model, mode="direct", template=budget.template, device=str(device))
    )
    judge.judge(views[:8])  # warm-up
    t = time.perf_counter()
    judge.judge(views)
    per_view = (time.perf_counter() - t) / len(views)
    prepared = judge.prepare(views)
    wait(device)
    t = time.perf_counter()
    with torch.inference_mode():
        for idx in prepared.batches:
            enc = judge.tokenizer.pad({"input_ids": [prepared.ids[i] for i in idx]}, return_tensors="pt")
            judge.model(**enc.to(judge.device), logits_to_keep=1)
    wait(device)
    bare_view = (time.perf_counter() - t) / len(views)
    distinct = sum(map(len, prepared.batches))
    view_tokens = sum(len(x) for x in prepared.ids) / len(prepared.ids)

    print("\n| what | seconds | bare forward (+backward) | ratio | tokens |\n|---|---:|---:|---:|---:|")
    print(
        f"| SFT step ({budget.sft_batch} rows) | {sft:.2f} | {bare_sft:.2f} | {sft / bare_sft:.2f}x | {sft_tokens:.0f} a step |"
    )
    print(
        f"| GRPO step ({budget.grpo_batch} completions) | {grpo:.2f} | {bare_grpo:.2f} | {grpo / bare_grpo:.2f}x | {grpo_tokens} a step |"
    )
    print(
        f"| evaluated view, direct | {per_view:.3f} | {bare_view:.3f} | {per_view / bare_view:.2f}x | {view_tokens:.0f} a view |"
    )
    print(
        f"\n{len(views)} views, {distinct} distinct (a probe's sides share their original view; the bare "
        f"forward runs the distinct ones too). Steps timed: SFT {args.sft_steps}, GRPO {args.grpo_steps}, "
        "the first two of each dropped."
    )
    write_record(
        args.json,
        {
            "device": str(device),
            "preset": "gpu" if gpu else "cpu",
            "lm_head": "trl" if args.trl_lm_head else "compact",
            "threads": threads,
            "views": len(views),
            "distinct_views": distinct,
            "sft_step": {
                "rows": budget.sft_batch,
                "seconds": round(sft, 2),
                "bare": round(bare_sft, 2),
                "ratio": round(sft / bare_sft, 2),
                "tokens": round(sft_tokens),
            },
            "grpo_step": {
                "completions": budget.grpo_batch,
                "seconds": round(grpo, 2),
                "bare": round(bare_grpo, 2),
                "ratio": round(grpo / bare_grpo, 2),
                "tokens": grpo_tokens,
            },
            "view_direct": {
                "seconds": round(per_view, 3),
                "bare": round(bare_view, 3),
                "ratio": round(per_view / bare_view, 2),
                "tokens": round(view_tokens),
            },
        },
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    run_main(main)
