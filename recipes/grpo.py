"""GRPO for generative judges: pairwise judge prompts from bias-augmented training rows; rewards for
verdict accuracy and format (JudgeBiasBench eq. 7-9), optionally swap consistency.

    accelerate launch --config_file accelerate_configs/zero3.yaml recipes/grpo.py \
        --config recipes/configs/qwen2.5-7b-instruct/grpo.yaml
    python recipes/grpo.py --config recipes/configs/smollm2-135m-instruct/grpo.yaml          # CPU, small

``bias_ratio`` sets bias-aware pairs : original pairs (JudgeBiasBench Table 6: 0:4 ... 4:4); answer order is
seeded and balanced; the ``label`` column reaches the rewards (biasaware/training/rewards.py). vLLM generation
is TRL's (``use_vllm: true`` with ``vllm_mode: colocate`` or ``server``), off by default.

``template: verdict`` trains the short letter-first judge format (a completion of one letter;
``max_completion_length`` of a few tokens), the CPU budget of ``biasaware quickstart --generative``.
With a twin reward (``swap_consistency``, ``cue_consistency``) the views of a pair stay in one batch:
the rows come in seeded blocks and TRL's own reshuffling is turned off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer, ModelConfig, get_peft_config

from biasaware.io import read_records
from biasaware.training.judge_data import grpo_rows
from biasaware.training.recipe import (
    JudgeDataArguments,
    card_callbacks,
    load_for_training,
    run_recipe,
    sample_rows,
    train_and_save,
)
from biasaware.training.rewards import TWIN_REWARDS, get_reward_funcs


@dataclass
class ScriptArguments(JudgeDataArguments):
    rewards: list[str] = field(
        default_factory=lambda: ["accuracy", "format"],
        metadata={
            "help": "reward functions (accuracy, format, swap_consistency, cue_consistency); weights: reward_weights"
        },
    )


def main(script_args: ScriptArguments, training_args: GRPOConfig, model_args: ModelConfig):
    reward_funcs = get_reward_funcs(script_args.rewards)  # an unknown name fails before the model loads
    model, tokenizer = load_for_training(
        model_args, "causal", training_args.seed, training_args, script_args.trainable_layers
    )
    rows = sample_rows(
        read_records(script_args.train_file, "train"), script_args.max_train_rows, training_args.seed
    )
    data = grpo_rows(
        rows,
        script_args.bias_ratio,
        training_args.seed,
        script_args.both_orders,
        script_args.context_cues,
        script_args.template,
    )
    if set(script_args.rewards) & set(TWIN_REWARDS):
        training_args.shuffle_dataset = False  # grpo_rows wrote each pair's views adjacent, blocks shuffled
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=training_args,
        train_dataset=Dataset.from_list(data),
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
        callbacks=card_callbacks("grpo", model_args, script_args),
    )
    return train_and_save(trainer, training_args, "causal")


# what the config and flags fill (biasaware sweep checks keys against them)
DATACLASSES = (ScriptArguments, GRPOConfig, ModelConfig)

if __name__ == "__main__":
    run_recipe(main, DATACLASSES)
