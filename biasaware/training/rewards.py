"""GRPO rewards for generative judges, with TRL's reward-function signature.

TRL calls each function as ``f(prompts=..., completions=..., completion_ids=..., **columns)``:
every dataset column other than the prompt arrives as a list aligned with the completions. Each
function returns one float per completion (or ``None``: not applicable). The recipe weights them
with ``reward_weights`` and TRL sums them (JudgeBiasBench eq. 7-9: r = r_accuracy + r_format).

A completion is read with the parser of its row's prompt format (the ``template`` column of
:func:`biasaware.training.judge_data.grpo_rows`; without it, the default judge format of
:mod:`biasaware.judging.judge_format`). A reply that parser cannot read is wrong, never guessed.

* ``accuracy``: 1.0 when the verdict equals the ``label`` column, else 0.0.
* ``format``: 0.0 when the completion has the format, -0.5 when not. The default format's whole
  shape (reasoning, then one answer tag); for other templates, a reply their parser reads.
* ``swap_consistency`` (J1-style): for items seen in both answer orders in the same batch
  (``pair_id`` column; the twin has the other ``label`` and the same ``placement``), 1.0 when this
  completion and every completion of the twin order pick the right answer, else 0.0; ``None``
  when the twin order is not in the batch.
* ``cue_consistency``: the same rule over every *other view* of the same base pair in the batch:
  another placement of its cue (balanced rows: ``placement`` is ``none``, ``chosen``, ``rejected``
  or ``both``, from ``meta.cue_on``) or another answer order. A completion earns 1.0 when it picks
  the right answer and every completion of every twin view does too, else 0.0; ``None`` when no
  twin view is in the batch. A judge that is right only where the cue happens to sit on the better
  answer earns nothing there, while the views where the cue misleads it are rewarded for being
  right (their twins are): the reward pays for a verdict that does not move with the cue. The
  recipe keeps the views of a pair in one batch (``grpo_rows`` writes them adjacent and
  ``recipes/grpo.py`` turns off TRL's reshuffling when a twin reward is on); the prompts of one
  generation batch should be a multiple of the views per pair (4 for balanced rows, 8 with both
  orders), or the pairs cut by a batch edge get ``None``.

Both twin rewards are one mechanism (:func:`twin_reward`) with a different notion of twin.

Under GRPO's per-group reward scaling a reward of the form ``right x (a constant per prompt)`` gives
the same advantages as accuracy wherever the constant is not zero, so what a twin reward changes is
*which* groups learn: a group whose twins are not all right gets no signal from it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from biasaware.errors import BiasAwareError
from biasaware.judging.judge_format import parse_judgment
from biasaware.judging.parsers import PARSERS


def completion_text(completion: Any) -> str:
    """A completion as text: standard (a string) or conversational (a list of messages)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return ""


def read_verdict(completion: Any, template: str | None = None) -> tuple[str, bool]:
    """``(verdict, format_ok)`` of a completion in ``template``'s format (default: the judge format)."""
    text = completion_text(completion)
    if template in (None, "", "default"):
        parsed = parse_judgment(text)
        return parsed.verdict, parsed.format_ok
    verdict = PARSERS[template](text)
    return verdict, verdict in ("A", "B")


def _templates(template: Sequence[str] | None, n: int) -> Sequence[str | None]:
    return template if template is not None else [None] * n


def accuracy_reward(
    completions: Sequence[Any], label: Sequence[str], template: Sequence[str] | None = None, **kwargs
) -> list[float]:
    """
    >>> accuracy_reward(["<think>x</think><answer>A</answer>", "no verdict"], ["A", "A"])
    [1.0, 0.0]
    >>> accuracy_reward(["B", "The answer is B"], ["B", "B"], template=["verdict", "verdict"])
    [1.0, 0.0]
    """
    temps = _templates(template, len(completions))
    return [float(read_verdict(c, t)[0] == y) for c, y, t in zip(completions, label, temps, strict=True)]


def format_reward(completions: Sequence[Any], template: Sequence[str] | None = None, **kwargs) -> list[float]:
    """
    >>> format_reward(["<think>x</think><answer>B</answer>", "<answer>B</answer>"])
    [0.0, -0.5]
    """
    temps = _templates(template, len(completions))
    return [0.0 if read_verdict(c, t)[1] else -0.5 for c, t in zip(completions, temps, strict=True)]


def twin_reward(
    right: Sequence[bool], views: Sequence[tuple[str, str]], is_twin: Callable[[str, str], bool]
) -> list[float | None]:
    """The rule both twin rewards share. ``views[i] = (pair_id, view key)`` of completion ``i``;
    completions with the same pair and key answer the same prompt (one GRPO group). A completion's
    twins are the completions of the same pair whose key ``is_twin(own key, their key)``. It earns
    1.0 when it is right and all its twins are, 0.0 otherwise, ``None`` without a twin in the batch.

    >>> twin_reward([True, True, False], [("p", "x"), ("p", "y"), ("q", "x")], lambda a, b: a != b)
    [1.0, 1.0, None]
    """
    keys: dict[str, set[str]] = defaultdict(set)
    members: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (pair, key) in enumerate(views):
        keys[pair].add(key)
        members[(pair, key)].append(i)
    all_right = {group: all(right[j] for j in idx) for group, idx in members.items()}
    out: list[float | None] = []
    for i, (pair, key) in enumerate(views):
        twins = [k for k in keys[pair] if k != key and is_twin(key, k)]
        out.append(None if not twins else float(right[i] and all(all_right[(pair, k)] for k in twins)))
    return out


def _right(completions, label, template) -> list[bool]:
    return [r == 1.0 for r in accuracy_reward(completions, label, template)]


def swap_consistency_reward(
    completions: Sequence[Any],
    label: Sequence[str],
    pair_id: Sequence[str],
    placement: Sequence[str] | None = None,
    template: Sequence[str] | None = None,
    **kwargs,
) -> list[float | None]:
    """
    >>> swap_consistency_reward(["A", "A", "B"], ["A", "A", "B"], ["p", "p", "p"], template=["verdict"] * 3)
    [1.0, 1.0, 1.0]
    """
    places = placement if placement is not None else [""] * len(completions)
    views = [(p, f"{c}\x00{y}") for p, c, y in zip(pair_id, places, label, strict=True)]
    same_placement = lambda a, b: a.split("\x00")[0] == b.split("\x00")[0]  # noqa: E731
    return twin_reward(_right(completions, label, template), views, same_placement)


def cue_consistency_reward(
    completions: Sequence[Any],
    label: Sequence[str],
    pair_id: Sequence[str],
    placement: Sequence[str],
    template: Sequence[str] | None = None,
    **kwargs,
) -> list[float | None]:
    """See the module docstring: every other view of the base pair is a twin.

    >>> cue_consistency_reward(["A", "B", "B"], ["A", "A", "B"], ["p"] * 3, ["none", "chosen", "rejected"],
    ...                        template=["verdict"] * 3)
    [0.0, 0.0, 0.0]
    """
    views = [(p, f"{c}\x00{y}") for p, c, y in zip(pair_id, placement, label, strict=True)]
    return twin_reward(_right(completions, label, template), views, lambda a, b: True)


REWARD_FUNCS: dict[str, Callable[..., list]] = {
    "accuracy": accuracy_reward,
    "format": format_reward,
    "swap_consistency": swap_consistency_reward,
    "cue_consistency": cue_consistency_reward,
}
TWIN_REWARDS = ("swap_consistency", "cue_consistency")  # need a pair's views in one batch


def get_reward_funcs(names: Sequence[str]) -> list[Callable[..., list]]:
    unknown = [n for n in names if n not in REWARD_FUNCS]
    if unknown:
        raise BiasAwareError(f"unknown reward(s) {', '.join(unknown)}; valid: {', '.join(REWARD_FUNCS)}")
    return [REWARD_FUNCS[n] for n in names]
