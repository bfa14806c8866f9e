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

from trl import GRPOConfig, GRPOTrainer, ModelConfig

from biasaware.training.judge_data import grpo_rows
from biasaware.training.recipe import (
    JudgeDataArguments,
    Phases,
    load_for_training,
    run_recipe,
    train_recipe,
    training_rows,
)
from biasaware.training.rewards import TWIN_REWARDS, get_reward_funcs
from biasaware.training.signal import select_by_signal


@dataclass
class ScriptArguments(JudgeDataArguments):
    rewards: list[str] = field(
        default_factory=lambda: ["accuracy", "format"],
        metadata={
            "help": "reward functions (accuracy, format, swap_consistency, cue_consistency); weights: reward_weights"
        },
    )
    select_prompts: int = field(
        default=0,
        metadata={
            "help": "train on the N prompts (whole pairs) of most signal: those on which the starting checkpoint "
            "is least sure of the right verdict (biasaware/training/signal.py); 0: every prompt"
        },
    )
    select_pool: int | None = field(
        default=None,
        metadata={
            "help": "prompts scored to choose them from (the first N of the seeded data; default 4 x select_prompts)"
        },
    )
    signal_target: float = field(
        default=0.0,
        metadata={
            "help": "with select_prompts: sample at the lowest temperature of 1, 1.25 and 1.5 at which the "
            "kept prompts' expected share of groups with signal reaches this share (biasaware/training/signal.py); "
            "0: at the configured temperature"
        },
    )


def grpo_prompts(
    script_args: ScriptArguments, training_args: GRPOConfig, model_args: ModelConfig, rows: list | None = None
) -> tuple[list[dict], dict | None]:
    """GRPO's prompts from the training file (``rows``: its rows, read already) and, with ``select_prompts``,
    the ones of most signal for the checkpoint GRPO starts from (:func:`biasaware.training.signal.select_by_signal`)
    and what was chosen; the temperature a signal target picks is set on ``training_args``."""
    if rows is None:
        rows = training_rows(script_args.train_file, "train", script_args.max_train_rows, training_args.seed)
    data = grpo_rows(
        rows,
        script_args.bias_ratio,
        training_args.seed,
        script_args.both_orders,
        script_args.context_cues,
        script_args.template,
        with_views=bool(script_args.select_prompts),
    )
    if not script_args.select_prompts:
        return data, None
    data, selection = select_by_signal(
        model_args.model_name_or_path,
        data,
        [row["view"] for row in data],
        script_args.select_prompts,
        script_args.select_pool or 4 * script_args.select_prompts,
        training_args.num_generations,
        script_args.template,
        device="cpu" if training_args.use_cpu else "auto",
        # the verdicts scored in the precision the stage trains in (without mixed precision: the device's auto)
        dtype="bfloat16" if training_args.bf16 else "float16" if training_args.fp16 else "auto",
        temperature=training_args.temperature,
        signal_target=script_args.signal_target,
    )
    training_args.temperature = selection["temperature"]  # the one a signal target chose, else as given
    data = [{k: v for k, v in row.items() if k != "view"} for row in data]
    print(
        f"[train] GRPO prompts: kept {selection['kept']['prompts']} of {selection['pool']['prompts']} "
        f"(expected uniform groups {selection['pool']['expected_uniform_groups']} -> "
        f"{selection['kept']['expected_uniform_groups']} at temperature {selection['temperature']})",
        flush=True,
    )
    if selection.get("target_reached") is False:
        print(
            f"[train] GRPO: the signal target {script_args.signal_target} is not reached at temperature "
            f"{selection['temperature']}; more prompts to choose from (select_pool) or more completions per "
            "prompt (num_generations) give more groups with signal",
            flush=True,
        )
    return data, selection


def main(script_args: ScriptArguments, training_args: GRPOConfig, model_args: ModelConfig):
    reward_funcs = get_reward_funcs(script_args.rewards)  # an unknown name fails before the model loads
    phases = Phases()
    # the rows too: a bad file is named before the model loads (reading them draws nothing of torch's)
    rows = training_rows(script_args.train_file, "train", script_args.max_train_rows, training_args.seed)
    phases.lap("data")
    model, tokenizer = load_for_training(
        model_args, "causal", training_args.seed, training_args, script_args.trainable_layers
    )
    phases.lap("load")
    data, selection = grpo_prompts(script_args, training_args, model_args, rows)
    phases.lap("prompts")
    if set(script_args.rewards) & set(TWIN_REWARDS):
        training_args.shuffle_dataset = False  # grpo_rows wrote each pair's views adjacent, blocks shuffled
    notes = {"grpo_selection": selection} if selection is not None else None
    configs = (script_args, training_args, model_args)
    return train_recipe(
        "grpo",
        GRPOTrainer,
        data,
        model,
        tokenizer,
        configs,
        reward_funcs=reward_funcs,
        card_notes=notes,
        phases=phases,
    )


# what the config and flags fill (biasaware sweep checks keys against them)
DATACLASSES = (ScriptArguments, GRPOConfig, ModelConfig)

if __name__ == "__main__":
    run_recipe(main, DATACLASSES)
