"""GRPO rewards for generative judges, with TRL's reward-function signature.

TRL calls each function as ``f(prompts=..., completions=..., completion_ids=..., **columns)``:
every dataset column other than the prompt arrives as a list aligned with the completions. Each
function returns one float per completion (or ``None``: not applicable). The recipe weights them
with ``reward_weights`` and TRL sums them (002 eq. 7-9: r = r_accuracy + r_format).

* ``accuracy``: 1.0 when the verdict parsed from the completion (:mod:`biasaware.judging.judge_format`)
  equals the ``label`` column, else 0.0. An unparseable completion gets no credit.
* ``format``: 0.0 when the completion has the judge format, -0.5 when not.
* ``swap_consistency``: for items seen in both answer orders in the same batch (``pair_id``
  column; the twin has the other ``label``), 1.0 when this completion and every completion of the
  twin order pick the right answer, else 0.0; ``None`` when the twin order is not in the batch.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from biasaware.errors import BiasAwareError
from biasaware.judging.judge_format import parse_judgment


def completion_text(completion: Any) -> str:
    """A completion as text: standard (a string) or conversational (a list of messages)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return ""


def accuracy_reward(completions: Sequence[Any], label: Sequence[str], **kwargs) -> list[float]:
    """
    >>> accuracy_reward(["<think>x</think><answer>A</answer>", "no verdict"], ["A", "A"])
    [1.0, 0.0]
    """
    return [
        float(parse_judgment(completion_text(c)).verdict == y)
        for c, y in zip(completions, label, strict=True)
    ]


def format_reward(completions: Sequence[Any], **kwargs) -> list[float]:
    """
    >>> format_reward(["<think>x</think><answer>B</answer>", "<answer>B</answer>"])
    [0.0, -0.5]
    """
    return [0.0 if parse_judgment(completion_text(c)).format_ok else -0.5 for c in completions]


def swap_consistency_reward(
    completions: Sequence[Any], label: Sequence[str], pair_id: Sequence[str], **kwargs
) -> list[float | None]:
    right = [parse_judgment(completion_text(c)).verdict == y for c, y in zip(completions, label, strict=True)]
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (pid, y) in enumerate(zip(pair_id, label, strict=True)):
        groups[(pid, y)].append(i)
    out: list[float | None] = []
    for i, (pid, y) in enumerate(zip(pair_id, label, strict=True)):
        twin = groups.get((pid, "B" if y == "A" else "A"))
        out.append(None if not twin else float(right[i] and all(right[j] for j in twin)))
    return out


REWARD_FUNCS: dict[str, Callable[..., list]] = {
    "accuracy": accuracy_reward,
    "format": format_reward,
    "swap_consistency": swap_consistency_reward,
}


def get_reward_funcs(names: Sequence[str]) -> list[Callable[..., list]]:
    unknown = [n for n in names if n not in REWARD_FUNCS]
    if unknown:
        raise BiasAwareError(f"unknown reward(s) {', '.join(unknown)}; valid: {', '.join(REWARD_FUNCS)}")
    return [REWARD_FUNCS[n] for n in names]
