"""A biasaware judge as the reward of someone else's RLHF run: a callable with TRL's ``reward_funcs``
signature (``f(prompts, completions, **columns) -> list[float]``), for ``GRPOTrainer`` and the like.

* A reward-model judge gives each (prompt, completion) its scalar: one forward pass per completion.
* A generative or direct judge compares: each completion against the row's reference answer
  (``against="reference"``: the dataset column ``reference_column``), or against every other
  completion of its GRPO group (``against="group"``, ``group_size`` = the trainer's
  ``num_generations``). Each comparison is judged in both answer orders; a completion that wins in
  both earns +1, loses in both -1, and a position-inconsistent pair (it wins in one order only, or a
  tie or invalid verdict) counts as neither: 0. With ``against="group"`` a completion's reward is the
  mean over its siblings.

Judge calls per training step, for B completions: a reward model B forward passes (distinct texts
once); ``reference`` 2B pairwise verdicts; ``group`` with groups of g, B(g - 1) pairwise verdicts
(each unordered pair of siblings in both orders, shared by the two). Direct mode reads one
next-token distribution per verdict; generate mode writes a reply per verdict.

TRL passes completions as strings, or as message lists for conversational data; prompts likewise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from biasaware.errors import BiasAwareError

AGAINST = ("reference", "group")


def _text(x: Any) -> str:
    """A completion's text: a string, or the content of the last message of a conversation."""
    if isinstance(x, str):
        return x
    if isinstance(x, list) and x and isinstance(x[-1], dict):
        return str(x[-1].get("content", ""))
    raise BiasAwareError(f"a completion is a string or a list of messages; got {type(x).__name__}")


def _prompt(x: Any) -> str | list[dict[str, str]]:
    return x if isinstance(x, str) else [dict(m) for m in x]


def _outcome(first: str, second: str) -> float:
    """The completion's result over its two orders: A when it came first, B when it came second."""
    if first == "A" and second == "B":
        return 1.0
    if first == "B" and second == "A":
        return -1.0
    return 0.0  # position-inconsistent, a tie or an invalid verdict: neither a win nor a loss


def reward_function(
    judge,
    *,
    against: str = "reference",
    reference_column: str = "reference",
    group_size: int | None = None,
    name: str | None = None,
) -> Callable[..., list[float]]:
    """A TRL reward function from a :class:`biasaware.Judge` (see the module docstring)."""
    if against not in AGAINST:
        raise BiasAwareError(f"against must be one of {', '.join(AGAINST)}; got {against!r}")
    if against == "group" and (group_size is None or group_size < 2):
        raise BiasAwareError("against='group' needs group_size (the trainer's num_generations, at least 2)")
    reward_model = judge.mode == "reward"

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float]:
        texts = [_text(c) for c in completions]
        asked = [_prompt(p) for p in prompts]
        if reward_model:
            return [
                float("nan") if s is None else float(s)
                for s in judge.scores(list(zip(asked, texts, strict=True)))
            ]
        if against == "reference":
            refs = columns.get(reference_column)
            if refs is None:
                raise BiasAwareError(
                    f"the dataset has no {reference_column!r} column to compare completions with; set "
                    "reference_column, or against='group'"
                )
            items = [(p, t, _text(r)) for p, t, r in zip(asked, texts, refs, strict=True)]
            verdicts = judge.pairs([*items, *((p, r, t) for p, t, r in items)])
            n = len(items)
            return [_outcome(verdicts[i].verdict, verdicts[n + i].verdict) for i in range(n)]
        if len(texts) % group_size:
            raise BiasAwareError(f"{len(texts)} completions do not split into groups of {group_size}")
        pairs, where = [], []
        for start in range(0, len(texts), group_size):
            for i in range(start, start + group_size):
                for j in range(i + 1, start + group_size):
                    pairs += [(asked[i], texts[i], texts[j]), (asked[i], texts[j], texts[i])]
                    where.append((i, j))
        verdicts = judge.pairs(pairs)
        totals = [0.0] * len(texts)
        for k, (i, j) in enumerate(where):
            result = _outcome(verdicts[2 * k].verdict, verdicts[2 * k + 1].verdict)
            totals[i] += result
            totals[j] -= result
        return [t / (group_size - 1) for t in totals]

    reward.__name__ = (
        name or f"biasaware_judge_{'reward' if reward_model else against}"
    )  # TRL logs it by name
    return reward
