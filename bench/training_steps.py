"""Benchmark training steps against baselines measured in the same run.

1. Time per token of an InfoNCE step (``SetRewardTrainer``: rows of 1 chosen + 1 rejected + 4 bias
   negatives) vs a Bradley-Terry step of TRL's own ``RewardTrainer`` (pairs: the chosen answer against each
   other candidate) over the same number of sequences per step (goal: at most 1.1x). Per token, as the two read
   sequences of different lengths: a Bradley-Terry step repeats the short chosen answer once per pair, where an
   InfoNCE row holds it once beside four longer bias negatives (the cue's words); per sequence too; and the InfoNCE step without gradient checkpointing (as the
   minilm-l6 and smollm2 configs train) vs with it (TRL's default).
2. The grpo recipe (``recipes/grpo.py``: data building, rewards, model card) vs a bare ``GRPOTrainer``
   on the same data, rewards and config (goal: overhead at most 5%).

    .venv/bin/python bench/training_steps.py                 # minilm-l6 for 1, a tiny Qwen2 for 2
    .venv/bin/python bench/training_steps.py --steps 20
    .venv/bin/python bench/training_steps.py --json docs/results/bench/training-steps.json   # a results file
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from datasets import Dataset
from record import add_json_argument, at_least, run_main, write_record
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    TrainerCallback,
)
from trl import GRPOConfig, GRPOTrainer, ModelConfig, RewardConfig, RewardTrainer

from biasaware.data.builders import BuildConfig, build_train
from biasaware.io import read_records
from biasaware.judging.models import load_config, prepare_tokenizer, resolve_model_path
from biasaware.recipes import load_recipe
from biasaware.tiny import build_tiny_models
from biasaware.training.judge_data import grpo_rows
from biasaware.training.reward_trainer import SetRewardConfig, SetRewardTrainer
from biasaware.training.rewards import get_reward_funcs


def wait(device) -> None:
    """Wait for ``device``'s queued work, so that a timing holds it (nothing is queued on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class StepClock(TrainerCallback):
    """Wall time of each optimizer step; ``mean`` drops the first ``skip`` (warm-up)."""

    def __init__(self):
        self.times, self._t = [], 0.0

    def on_step_begin(self, args, state, control, **kw):
        self._t = time.perf_counter()

    def on_step_end(self, args, state, control, **kw):
        wait(args.device)  # the step's kernels finished, not only queued
        self.times.append(time.perf_counter() - self._t)

    def mean(self, skip: int = 1) -> float:
        rest = self.times[skip:] or self.times
        return sum(rest) / len(rest)


def common(out: str, steps: int, bf16: bool = False, logging_steps: int = 10_000, cpu: bool = True, **kw):
    """The trainer settings every bench run shares: on the CPU (``cpu`` false: the device transformers
    picks), no saves, no reports (``bf16``: mixed precision, accelerate's CPU autocast on the CPU)."""
    return dict(
        output_dir=out,
        max_steps=steps,
        use_cpu=cpu,
        report_to="none",
        save_strategy="no",
        bf16=bf16,
        logging_steps=logging_steps,
        disable_tqdm=True,
        **kw,
    )


NO_GC = {"gradient_checkpointing": False}
TOKEN_COLUMNS = ("candidate_ids", "chosen_ids", "rejected_ids")  # SetRewardTrainer's, TRL's RewardTrainer's


def tokens_per_sequence(dataset) -> float:
    """The mean length in tokens of the sequences a trainer's tokenized dataset holds."""
    lengths = [
        len(ids)
        for column in TOKEN_COLUMNS
        if column in dataset.column_names
        for row in dataset[column]
        for ids in (row if column == "candidate_ids" else [row])
    ]
    return sum(lengths) / len(lengths)


def reward_bench(rows_file: str, model_name: str, steps: int, rows_per_step: int) -> dict:
    path = resolve_model_path(model_name, "reward")
    rows = read_records(rows_file, "train")
    k = 1 + 1 + 4  # candidates per InfoNCE row
    set_data = Dataset.from_list(
        [
            {
                "prompt": [m.model_dump() for m in r.prompt],
                "chosen": r.chosen,
                "rejected": r.rejected,
                "bias_negatives": [n.text for n in r.bias_negatives],
            }
            for r in rows
        ]
    )
    # the same sequences as pairs: chosen vs each of its rejected candidates, 2 sequences per pair
    pair_data = Dataset.from_list(
        [
            {
                "prompt": [m.model_dump() for m in r.prompt],
                "chosen": [{"role": "assistant", "content": r.chosen}],
                "rejected": [{"role": "assistant", "content": t}],
            }
            for r in rows
            for t in [r.rejected, *(n.text for n in r.bias_negatives)]
        ]
    )
    results, tokens = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, trainer_cls, cfg_cls, data, batch, extra in (
            ("InfoNCE", SetRewardTrainer, SetRewardConfig, set_data, rows_per_step, {}),
            ("Bradley-Terry (TRL)", RewardTrainer, RewardConfig, pair_data, rows_per_step * k // 2, {}),
            # as the small-model configs train: TRL's default recomputes activations in the backward pass
            ("InfoNCE, no checkpointing", SetRewardTrainer, SetRewardConfig, set_data, rows_per_step, NO_GC),
        ):
            tok = prepare_tokenizer(AutoTokenizer.from_pretrained(path), "reward")
            model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
            model.config.pad_token_id = tok.pad_token_id
            clock = StepClock()
            args = cfg_cls(
                **common(
                    f"{tmp}/{len(results)}", steps, per_device_train_batch_size=batch, max_length=256, **extra
                )
            )
            trainer = trainer_cls(
                model=model, args=args, train_dataset=data, processing_class=tok, callbacks=[clock]
            )
            trainer.train()
            results[name] = clock.mean() / (rows_per_step * k)
            tokens[name] = tokens_per_sequence(trainer.train_dataset)
    a, b = results["InfoNCE"], results["Bradley-Terry (TRL)"]
    ta, tb = tokens["InfoNCE"], tokens["Bradley-Terry (TRL)"]
    per_token = (a / ta) / (b / tb)
    print(f"reward model {model_name}: {rows_per_step * k} sequences per step, mean of {steps - 1} steps")
    print(
        f"  InfoNCE {1000 * a:.2f} ms/sequence ({ta:.1f} tokens) | Bradley-Terry {1000 * b:.2f} ms/sequence "
        f"({tb:.1f} tokens) | ratio {a / b:.3f} per sequence, {per_token:.3f} per token (goal <= 1.1)"
    )
    c = results["InfoNCE, no checkpointing"]
    print(
        f"  InfoNCE without gradient checkpointing (the small-model configs) {1000 * c:.2f} ms/sequence | with it "
        f"(TRL's default) {1000 * a:.2f} ms/sequence | ratio {c / a:.3f}"
    )
    ms = {name: round(1000 * t, 2) for name, t in results.items()}
    return {
        "model": model_name,
        "sequences_per_step": rows_per_step * k,
        "steps_timed": steps - 1,
        "ms_per_sequence": ms,
        "tokens_per_sequence": {name: round(n, 1) for name, n in tokens.items()},
        "infonce_vs_bradley_terry": round(a / b, 3),
        "infonce_vs_bradley_terry_per_token": round(per_token, 3),
        "no_checkpointing_vs_checkpointing": round(c / a, 3),
    }


def grpo_bench(rows_file: str, steps: int) -> dict:
    recipe = load_recipe("grpo")
    with tempfile.TemporaryDirectory() as tmp:
        models = build_tiny_models(f"{tmp}/models", seed=0)
        kw = dict(per_device_train_batch_size=8, num_generations=4, max_completion_length=32, seed=0)

        def run_recipe(i):
            recipe.main(
                recipe.ScriptArguments(train_file=rows_file),
                GRPOConfig(**common(f"{tmp}/recipe{i}", steps, **kw)),
                ModelConfig(model_name_or_path=str(models["causal"])),
            )

        def run_bare(i):
            tok = prepare_tokenizer(AutoTokenizer.from_pretrained(models["causal"]), "causal")
            data = Dataset.from_list(grpo_rows(read_records(rows_file, "train"), "4:4", 0))
            bare = GRPOTrainer(
                model=AutoModelForCausalLM.from_pretrained(models["causal"]),
                reward_funcs=get_reward_funcs(["accuracy", "format"]),
                args=GRPOConfig(**common(f"{tmp}/bare{i}", steps, **kw)),
                train_dataset=data,
                processing_class=tok,
            )
            bare.train()
            bare.save_model(f"{tmp}/bare{i}")

        times: dict[str, list[float]] = {"recipe": [], "bare": []}
        for i in range(2):  # alternate, best of two each: first-run costs fall on neither side alone
            for name, run in (("bare", run_bare), ("recipe", run_recipe)):
                t0 = time.perf_counter()
                run(i)
                times[name].append(time.perf_counter() - t0)
        t_recipe, t_bare = min(times["recipe"]), min(times["bare"])
    print(f"grpo, tiny Qwen2, {steps} steps end to end (load, data, train, save), best of 2 alternating runs")
    print(
        f"  recipe {t_recipe:.2f}s | bare GRPOTrainer {t_bare:.2f}s | overhead {100 * (t_recipe / t_bare - 1):+.1f}% (goal <= 5%)"
    )
    overhead = round(100 * (t_recipe / t_bare - 1), 1)
    return {
        "steps": steps,
        "recipe_s": round(t_recipe, 2),
        "bare_s": round(t_bare, 2),
        "overhead_percent": overhead,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rm",
        default="minilm-l6",
        help="the reward model trained (a built-in name or a folder; default minilm-l6)",
    )
    parser.add_argument(
        "--steps",
        type=at_least(2),
        default=11,
        help="optimizer steps per run, 2 or more: the first is a warm-up (default 11)",
    )
    parser.add_argument(
        "--rows-per-step", type=at_least(1), default=8, help="training rows per step (default 8)"
    )
    add_json_argument(parser)
    args = parser.parse_args()
    load_config(args.rm, "reward")  # a model that is not there is said before anything is built
    with tempfile.TemporaryDirectory() as tmp:
        build_train(BuildConfig(corpus_size=600, max_rows=400, n_negatives=4), tmp)
        rows_file = f"{tmp}/train.jsonl"
        reward = reward_bench(rows_file, args.rm, args.steps, args.rows_per_step)
        grpo = grpo_bench(rows_file, args.steps)
    write_record(args.json, {"reward": reward, "grpo": grpo})


if __name__ == "__main__":
    run_main(main)
