"""Reward-model judges: InfoNCE (or hinge, or Bradley-Terry) over one chosen and several rejected responses.

    accelerate launch --config_file accelerate_configs/multi_gpu.yaml recipes/reward.py \
        --config recipes/configs/qwen2.5-7b-instruct/reward_infonce.yaml
    python recipes/reward.py --config recipes/configs/minilm-l6/reward_infonce.yaml     # CPU, small

Reads training rows from ``biasaware build train`` (``{prompt, chosen, rejected, bias_negatives}``);
``num_bias_negatives`` sets how many bias negatives join the original rejected response (0 gives the
bias-agnostic baseline). See biasaware/training/reward_trainer.py for the trainer and biasaware/training/losses.py for
the losses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datasets import Dataset
from trl import ModelConfig

from biasaware.errors import BiasAwareError
from biasaware.training.judge_data import add_offtopic_negatives
from biasaware.training.recipe import (
    DataArguments,
    Phases,
    load_for_training,
    run_recipe,
    train_recipe,
    training_rows,
)
from biasaware.training.reward_trainer import SetRewardConfig, SetRewardTrainer


@dataclass
class ScriptArguments(DataArguments):
    eval_file: str | None = field(default=None, metadata={"help": "held-out training rows (JSONL)"})
    offtopic_negatives: int = field(
        default=0,
        metadata={"help": "OffsetBias-style baseline: add N chosen responses of other prompts as negatives"},
    )


def load_rows(path: str, limit: int | None = None, seed: int = 0) -> Dataset:
    rows = training_rows(path, "train", limit, seed)
    return Dataset.from_list(
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


def main(script_args: ScriptArguments, training_args: SetRewardConfig, model_args: ModelConfig):
    if (
        script_args.eval_file and training_args.eval_strategy == "no"
    ):  # loaded, tokenized, and never evaluated
        raise BiasAwareError(
            "eval_file is evaluated every eval_steps with eval_strategy steps (or each epoch with epoch); with "
            "eval_strategy no (the default) set one, or leave eval_file out"
        )
    phases = Phases()
    # the rows first: a bad file is named before the model loads (their draws are their own, not the model's)
    rows = add_offtopic_negatives(
        load_rows(script_args.train_file, script_args.max_train_rows, training_args.seed).to_list(),
        script_args.offtopic_negatives,
        training_args.seed,
    )
    evaluation = load_rows(script_args.eval_file) if script_args.eval_file else None
    phases.lap("data")
    model, tokenizer = load_for_training(
        model_args, "reward", training_args.seed, training_args, script_args.trainable_layers
    )
    phases.lap("load")
    model_args.lora_task_type = "SEQ_CLS"  # a reward head: LoRA keeps the head trainable
    configs = (script_args, training_args, model_args)
    return train_recipe(
        "reward",
        SetRewardTrainer,
        rows,
        model,
        tokenizer,
        configs,
        eval_dataset=evaluation,
        kind="reward",
        phases=phases,
    )


# what the config and flags fill (biasaware sweep checks keys against them)
DATACLASSES = (ScriptArguments, SetRewardConfig, ModelConfig)

if __name__ == "__main__":
    run_recipe(main, DATACLASSES)
