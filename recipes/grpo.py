"""GRPO for generative judges: pairwise judge prompts from bias-augmented training rows; rewards for
verdict accuracy and format (002 eq. 7-9), optionally swap consistency.

    accelerate launch --config_file accelerate_configs/zero3.yaml recipes/grpo.py \
        --config recipes/configs/qwen2.5-7b-instruct/grpo.yaml
    python recipes/grpo.py --config recipes/configs/smollm2-135m-instruct/grpo.yaml          # CPU, small

``bias_ratio`` sets bias-aware pairs : original pairs (002 Table 6: 0:4 ... 4:4); answer order is
seeded and balanced; the ``label`` column reaches the rewards (biasaware/training/rewards.py). vLLM generation
is TRL's (``use_vllm: true`` with ``vllm_mode: colocate`` or ``server``), off by default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer, ModelConfig, get_peft_config

from biasaware.io import read_records
from biasaware.training.judge_data import grpo_rows
from biasaware.training.recipe import (
    DataArguments,
    card_callbacks,
    load_for_training,
    run_recipe,
    sample_rows,
    train_and_save,
)
from biasaware.training.rewards import get_reward_funcs


@dataclass
class ScriptArguments(DataArguments):
    bias_ratio: str = field(default="4:4", metadata={"help": "bias-aware pairs : original pairs, e.g. 1:4"})
    both_orders: bool = field(default=False, metadata={"help": "each pair in both answer orders"})
    context_cues: float = field(
        default=0.0,
        metadata={"help": "share of pairs with a balanced bandwagon note or reflection phrase (0-1)"},
    )
    rewards: list[str] = field(
        default_factory=lambda: ["accuracy", "format"],
        metadata={"help": "reward functions (accuracy, format, swap_consistency); weights: reward_weights"},
    )


def main(script_args: ScriptArguments, training_args: GRPOConfig, model_args: ModelConfig):
    model, tokenizer = load_for_training(model_args, "causal", training_args.seed, training_args)
    rows = sample_rows(
        read_records(script_args.train_file, "train"), script_args.max_train_rows, training_args.seed
    )
    data = grpo_rows(
        rows, script_args.bias_ratio, training_args.seed, script_args.both_orders, script_args.context_cues
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=get_reward_funcs(script_args.rewards),
        args=training_args,
        train_dataset=Dataset.from_list(data),
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
        callbacks=card_callbacks("grpo", model_args, script_args),
    )
    return train_and_save(trainer, training_args, "causal")


DATACLASSES = (ScriptArguments, GRPOConfig, ModelConfig)  # what the config and flags fill (biasaware sweep checks keys against them)

if __name__ == "__main__":
    run_recipe(main, DATACLASSES)
