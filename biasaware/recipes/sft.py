"""SFT of a generative judge on teacher reasoning traces (prompt-completion; loss on the completion only).

    accelerate launch --config_file accelerate_configs/zero3.yaml recipes/sft.py \
        --config recipes/configs/qwen2.5-7b-instruct/sft.yaml
    python recipes/sft.py --config recipes/configs/smollm2-135m-instruct/sft.yaml            # CPU, small

Traces come from ``biasaware build traces`` (the judge output format of biasaware/judging/judge_format.py).
``targets: verdicts`` trains on training rows instead (``biasaware build train``): the judge prompts
GRPO would see (``template``, ``bias_ratio``, ``both_orders``, ``context_cues``) with the right letter
as the reply, so the loss covers a handful of tokens (the CPU budget of ``biasaware quickstart
--generative``; ``template: verdict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from trl import ModelConfig, SFTConfig, SFTTrainer

from biasaware.errors import BiasAwareError
from biasaware.judging.models import load_tokenizer
from biasaware.training.judge_data import sft_rows, verdict_rows
from biasaware.training.recipe import (
    JudgeDataArguments,
    Phases,
    check_causal_start,
    drop_overlong,
    load_for_training,
    run_recipe,
    train_recipe,
    training_rows,
)

VERDICT_SETTINGS = (
    "template",
    "bias_ratio",
    "both_orders",
    "context_cues",
)  # read with targets: verdicts only


@dataclass
class ScriptArguments(JudgeDataArguments):
    train_file: str = field(
        default="runs/quickstart/traces/traces.jsonl",
        metadata={"help": "teacher traces (JSONL), or training rows with targets: verdicts"},
    )
    targets: str = field(
        default="traces",
        metadata={"help": "traces (reasoning traces) or verdicts (training rows; the reply is the letter)"},
    )


def main(script_args: ScriptArguments, training_args: SFTConfig, model_args: ModelConfig):
    if script_args.targets not in ("traces", "verdicts"):
        raise BiasAwareError(f"targets is traces or verdicts, got {script_args.targets!r}")
    verdicts = script_args.targets == "verdicts"
    shaping = [  # what shapes the judge prompts of training rows: traces carry their own prompts
        f.name
        for f in fields(JudgeDataArguments)
        if f.name in VERDICT_SETTINGS and getattr(script_args, f.name) != f.default
    ]
    if shaping and not verdicts:
        raise BiasAwareError(
            f"{', '.join(shaping)} shape(s) the judge prompts of training rows (targets: verdicts); traces carry "
            "their own prompts, so leave it out with targets: traces"
        )
    kind = "train" if verdicts else "trace"
    phases = Phases()
    records = training_rows(script_args.train_file, kind, script_args.max_train_rows, training_args.seed)
    # the tokenizer before the weights: rows none of which fit max_length are refused before the model loads
    check_causal_start(model_args.model_name_or_path)
    tokenizer = load_tokenizer(model_args.model_name_or_path, "causal")
    if verdicts:
        rows = verdict_rows(
            records,
            script_args.template,
            bias_ratio=script_args.bias_ratio,
            seed=training_args.seed,
            both_orders=script_args.both_orders,
            context_cues=script_args.context_cues,
        )
    else:
        rows = sft_rows(records)
    kept = drop_overlong(rows, tokenizer, training_args.max_length)
    phases.lap("data")
    model, tokenizer = load_for_training(
        model_args, "causal", training_args.seed, training_args, script_args.trainable_layers, tokenizer
    )
    phases.lap("load")
    configs = (script_args, training_args, model_args)
    notes = {"train_rows": {"over_max_length": len(rows) - len(kept)}}
    return train_recipe("sft", SFTTrainer, kept, model, tokenizer, configs, phases=phases, card_notes=notes)


# what the config and flags fill (biasaware sweep checks keys against them)
DATACLASSES = (ScriptArguments, SFTConfig, ModelConfig)

if __name__ == "__main__":
    run_recipe(main, DATACLASSES)
