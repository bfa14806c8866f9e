"""A TRL ``RewardTrainer`` for set-structured rows: one chosen against the original rejected and
bias negatives, trained with InfoNCE, hinge or Bradley-Terry (:mod:`biasaware.training.losses`).

Only three things change from TRL's trainer, so its model loading, PEFT, DeepSpeed and logging
stay as they are: dataset preparation tokenises every candidate with
:func:`biasaware.judging.models.chat_ids`, the judges' tokenisation (``candidate_ids``: chosen
first, then the rejected response, then up to ``num_bias_negatives`` bias negatives, then any
OffsetBias-style off-topic negatives), the
collator flattens the candidates of a batch and records each row's group size (rows may carry
different numbers of negatives), and ``compute_loss`` applies the set loss. Rows with a
candidate longer than ``max_length`` are dropped, as TRL does, unless ``truncation`` is
``longest_first``: then each candidate chat is cut to fit by the judges' rule
(:func:`biasaware.judging.models.fit_chat`), so long answers stay in the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from trl import RewardConfig, RewardTrainer

from biasaware.errors import BiasAwareError
from biasaware.judging.models import TRUNCATIONS, chat_ids, fit_chat
from biasaware.training.losses import LOSSES, pad_groups, set_loss


@dataclass
class SetRewardConfig(RewardConfig):
    loss: str = field(default="infonce", metadata={"help": "infonce | hinge | bt"})
    tau: float = field(default=0.5, metadata={"help": "InfoNCE temperature (JudgeBiasBench: 0.5)"})
    hinge_margin: float = field(default=1.0, metadata={"help": "hinge margin m (JudgeBiasBench: 1)"})
    num_bias_negatives: int = field(
        default=-1,
        metadata={"help": "bias negatives per row next to the original rejected one (0, 1, 4...); -1 = all"},
    )
    truncation: str = field(
        default="none",
        metadata={
            "help": "a candidate over max_length: none drops its row (as TRL does); longest_first cuts the "
            "longer of the last user turn and the response to fit (the judges' rule, fit_chat)"
        },
    )

    def __post_init__(self):
        super().__post_init__()
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.tau <= 0:
            raise ValueError(f"tau must be positive, got {self.tau}")
        if self.truncation not in TRUNCATIONS:
            raise ValueError(f"truncation must be one of {', '.join(TRUNCATIONS)}, got {self.truncation!r}")


def candidates(row: dict[str, Any], num_bias_negatives: int) -> list[str]:
    negatives = [n["text"] if isinstance(n, dict) else n for n in row.get("bias_negatives") or []]
    if num_bias_negatives >= 0:
        negatives = negatives[:num_bias_negatives]
    return [row["chosen"], row["rejected"], *negatives, *(row.get("offtopic_negatives") or [])]


@dataclass
class SetCollator:
    pad_token_id: int

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        seqs = [torch.tensor(ids) for ex in examples for ids in ex["candidate_ids"]]
        width = max(len(s) for s in seqs)
        input_ids = torch.full((len(seqs), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, s in enumerate(seqs):
            input_ids[i, : len(s)] = s
            attention_mask[i, : len(s)] = 1
        sizes = torch.tensor([len(ex["candidate_ids"]) for ex in examples])
        return {"input_ids": input_ids, "attention_mask": attention_mask, "group_sizes": sizes}


class SetRewardTrainer(RewardTrainer):
    def __init__(self, *args, data_collator=None, processing_class=None, **kwargs):
        if data_collator is None and processing_class is not None:
            data_collator = SetCollator(processing_class.pad_token_id)
        super().__init__(*args, data_collator=data_collator, processing_class=processing_class, **kwargs)

    def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
        if "candidate_ids" in dataset.column_names:
            return dataset

        def tokenize(row):
            prompt = row["prompt"]
            if isinstance(prompt, str):
                prompt = [{"role": "user", "content": prompt}]
            chats = [
                [*prompt, {"role": "assistant", "content": c}]
                for c in candidates(row, args.num_bias_negatives)
            ]
            if args.truncation == "longest_first" and args.max_length is not None:
                fitted = [
                    fit_chat(processing_class, chat[:-1], chat[-1]["content"], args.max_length)
                    for chat in chats
                ]
                chats = [[*p, {"role": "assistant", "content": r}] for p, r, _ in fitted]
            return {"candidate_ids": chat_ids(processing_class, chats)}  # the judges' tokenisation

        dataset = dataset.map(
            tokenize, remove_columns=dataset.column_names, desc=f"Tokenizing {dataset_name}"
        )
        if args.max_length is not None:
            before = len(dataset)
            dataset = dataset.filter(lambda row: max(len(c) for c in row["candidate_ids"]) <= args.max_length)
            if dataset_name == "train":  # the run's card counts them (train_recipe)
                self.rows_over_max_length = before - len(dataset)
            if (
                len(dataset) < before
            ):  # said, as the SFT recipe says it: a row goes whole for one long candidate
                print(
                    f"[train] {before - len(dataset)} of {before} {dataset_name} rows have a candidate over max_length "
                    f"{args.max_length} tokens and are left out (truncation longest_first cuts them instead)",
                    flush=True,
                )
            if not len(dataset):
                raise BiasAwareError(
                    f"every {dataset_name} row has a candidate over max_length {args.max_length} tokens: raise "
                    "max_length, or set truncation longest_first"
                )
        return dataset

    def _set_signature_columns_if_needed(self):
        if self._signature_columns is None:
            self._signature_columns = ["candidate_ids"]

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        mode = "train" if self.model.training else "eval"
        sizes = inputs.pop("group_sizes").tolist()
        outputs = model(**inputs, use_cache=False)
        scores, mask = pad_groups(outputs.logits.squeeze(-1), sizes)
        args = self.args
        loss = set_loss(args.loss, scores, mask, tau=args.tau, margin=args.hinge_margin)
        with torch.no_grad():
            best = scores.masked_fill(~mask, float("-inf"))[:, 1:].max(dim=1).values
            accuracy = (scores[:, 0] > best).float().mean()
            self._metrics[mode]["accuracy"].append(
                self.accelerator.gather_for_metrics(accuracy).mean().item()
            )
            self._metrics[mode]["mean_reward"].append(outputs.logits.mean().item())
        return (loss, outputs) if return_outputs else loss
