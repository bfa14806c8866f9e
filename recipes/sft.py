"""SFT of a generative judge on teacher reasoning traces (prompt-completion; loss on the completion only).

    accelerate launch --config_file accelerate_configs/zero3.yaml recipes/sft.py \
        --config recipes/configs/qwen2.5-7b-instruct/sft.yaml
    python recipes/sft.py --config recipes/configs/smollm2-135m-instruct/sft.yaml            # CPU, small

Traces come from ``biasaware build traces`` (the judge output format of biasaware/judging/judge_format.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datasets import Dataset
from trl import ModelConfig, SFTConfig, SFTTrainer, get_peft_config

from biasaware.io import read_records
from biasaware.training.judge_data import sft_rows
from biasaware.training.recipe import (
    DataArguments,
    card_callbacks,
    load_for_training,
    run_recipe,
    sample_rows,
    train_and_save,
)


@dataclass
class ScriptArguments(DataArguments):
    train_file: str = field(
        default="runs/quickstart/traces/traces.jsonl", metadata={"help": "teacher traces (JSONL)"}
    )


def main(script_args: ScriptArguments, training_args: SFTConfig, model_args: ModelConfig):
    model, tokenizer = load_for_training(model_args, "causal", training_args.seed, training_args)
    traces = sample_rows(
        read_records(script_args.train_file, "trace"), script_args.max_train_rows, training_args.seed
    )
    trainer = SFTTrainer(
        model=model,
        args=training_args,
        train_dataset=Dataset.from_list(sft_rows(traces)),
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
        callbacks=card_callbacks("sft", model_args, script_args),
    )
    return train_and_save(trainer, training_args, "causal")


DATACLASSES = (ScriptArguments, SFTConfig, ModelConfig)  # what the config and flags fill (biasaware sweep checks keys against them)

if __name__ == "__main__":
    run_recipe(main, DATACLASSES)
