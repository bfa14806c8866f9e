"""Set losses against hand computations on fixed scores."""

import math

import pytest
import torch

from biasaware.training.losses import bt_loss, hinge_loss, infonce_loss, pad_groups, set_loss


def fixed():
    # row 1: chosen 2.0 vs rejected 1.0 and a bias negative 0.0; row 2: chosen 1.0 vs rejected 3.0 only
    return pad_groups(torch.tensor([2.0, 1.0, 0.0, 1.0, 3.0]), [3, 2])


def test_infonce_by_hand():
    scores, mask = fixed()
    tau = 0.5
    row1 = -math.log(math.exp(2 / tau) / (math.exp(2 / tau) + math.exp(1 / tau) + math.exp(0 / tau)))
    row2 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(3 / tau)))
    assert infonce_loss(scores, mask, tau).item() == pytest.approx((row1 + row2) / 2, rel=1e-6)


def test_hinge_and_bt_by_hand():
    scores, mask = fixed()
    hinge = (((max(0, 1 - 1) + max(0, 1 - 2)) / 2) + max(0, 1 - (1 - 3))) / 2
    assert hinge_loss(scores, mask, 1.0).item() == pytest.approx(hinge)
    sp = lambda d: math.log1p(math.exp(-d))  # noqa: E731  -log sigmoid(d)
    bt = ((sp(1) + sp(2)) / 2 + sp(-2)) / 2
    assert bt_loss(scores, mask).item() == pytest.approx(bt, rel=1e-6)
    assert set_loss("bt", scores, mask).item() == pytest.approx(bt, rel=1e-6)
    with pytest.raises(ValueError, match="unknown loss"):
        set_loss("mse", scores, mask)


def test_gradients_flow_through_padding():
    flat = torch.tensor([2.0, 1.0, 0.0, 1.0, 3.0], requires_grad=True)
    scores, mask = pad_groups(flat, [3, 2])
    infonce_loss(scores, mask).backward()
    assert flat.grad is not None and flat.grad[0] < 0 < flat.grad[1]
