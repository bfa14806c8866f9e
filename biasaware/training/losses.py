"""Set losses for reward-model judges: one chosen response against several rejected ones.

``scores`` is a ``[rows, candidates]`` tensor whose column 0 is the chosen response and columns
1.. the rejected ones (the original rejected response, then bias negatives); rows may have fewer
candidates than columns, and ``mask`` marks the real ones. Each loss is a mean over rows.

* ``infonce`` (JudgeBiasBench eq. 10): ``-log( exp(s+/tau) / sum_c exp(s_c/tau) )`` over the row's candidates.
* ``hinge`` (JudgeBiasBench eq. 11): mean over the row's negatives of ``max(0, m - (s+ - s-))``.
* ``bt``: mean over the row's negatives of ``-log sigmoid(s+ - s-)`` (Bradley-Terry; with one
  negative it is TRL's reward loss).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

LOSSES = ("infonce", "hinge", "bt")


def pad_groups(flat: torch.Tensor, sizes: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Split a flat score vector into rows of ``sizes``; pad to a matrix and a validity mask."""
    width = max(sizes)
    scores = flat.new_zeros(len(sizes), width)
    mask = torch.zeros(len(sizes), width, dtype=torch.bool, device=flat.device)
    start = 0
    for i, n in enumerate(sizes):
        scores[i, :n] = flat[start : start + n]
        mask[i, :n] = True
        start += n
    return scores, mask


def infonce_loss(scores: torch.Tensor, mask: torch.Tensor, tau: float = 0.5) -> torch.Tensor:
    logits = (scores / tau).masked_fill(~mask, float("-inf"))
    return -(logits[:, 0] - torch.logsumexp(logits, dim=1)).mean()


def _pairwise(scores: torch.Tensor, mask: torch.Tensor, per_pair) -> torch.Tensor:
    diff = scores[:, :1] - scores[:, 1:]
    neg = mask[:, 1:].float()
    return ((per_pair(diff) * neg).sum(dim=1) / neg.sum(dim=1).clamp(min=1)).mean()


def hinge_loss(scores: torch.Tensor, mask: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    return _pairwise(scores, mask, lambda d: F.relu(margin - d))


def bt_loss(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return _pairwise(scores, mask, lambda d: -F.logsigmoid(d))


def set_loss(name: str, scores: torch.Tensor, mask: torch.Tensor, *, tau: float = 0.5, margin: float = 1.0):
    if name == "infonce":
        return infonce_loss(scores, mask, tau)
    if name == "hinge":
        return hinge_loss(scores, mask, margin)
    if name == "bt":
        return bt_loss(scores, mask)
    raise ValueError(f"unknown loss {name!r}; valid: {', '.join(LOSSES)}")
