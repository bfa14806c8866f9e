"""A step whose gradients are not finite is skipped, said and recorded, never applied.

A single optimizer step with a NaN or infinite gradient writes NaN into every weight it touches (gradient
clipping scales by the NaN norm too), and the run goes on with a broken model: a GRPO stage then fails a
step later as generation samples from NaN probabilities. Mixed precision in float16 has a gradient scaler
that skips such steps; bfloat16 and float32 have none. :class:`FiniteGradients` is that check for every
recipe: before each optimizer step (after clipping) it reads the gradients' total norm, and when it is not
finite it drops the gradients (the optimizer then leaves every weight as it was; the learning-rate schedule
still advances), prints a ``[train]`` line saying in how many parameters the gradients were not finite
(gradient clipping, on by default, spreads one NaN to all), and keeps the step in the model card's
``nonfinite_steps``. ``MAX_IN_A_ROW`` such steps in a row stop the run with an
error: the model or the data gives NaN on every batch, and skipping would train nothing.

Under several processes the verdict is agreed (any process's non-finite gradient skips the step on all;
every process takes part, with gradients or without), so processes never diverge.

Under DeepSpeed the gradients live in its partitions, and its engine has stepped before the callback
runs (accelerate runs the engine's step inside ``backward``), so the check reads the engine's own verdict
instead (:meth:`FiniteGradients.attach`): when the global gradient norm it took is not finite and it
skipped the step (DeepSpeed 0.19 does in ZeRO stages 1 to 3 and in stage 0 with bfloat16), the step is
said, recorded (``skipped_by: deepspeed``; which parameters is not known) and counted as above; when it
applied the step anyway (a DeepSpeed whose check is off), the weights are no longer finite and the run
stops with an error at that step, not later on a broken model. Where the engine takes no norm (stage 0
in float32) nothing is checked. In float16 mixed
precision (``fp16``) the check is off: the loss scaler skips such steps itself (its first steps overflow on
purpose, as it finds its scale), and there the learning-rate schedule does not advance on a skipped step.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from biasaware.errors import BiasAwareError

# steps in a row whose gradients were not finite that stop a run
MAX_IN_A_ROW = 5
# parameters named in a skipped step's line and card
NAMED = 3


def distributed() -> bool:
    """Whether this process is one of a torch.distributed group."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def nonfinite_parameters(model) -> tuple[list[str], int] | None:
    """When some process's gradients are not finite: the names of ``model``'s parameters whose gradient
    holds a NaN or an infinity here (``[]`` when only another process's do) and how many hold one here;
    None when every gradient is finite or none exists. One wait for the device a step: the total norm's
    verdict (torch's own, the norms of a device's gradients taken together), agreed across processes
    before it is read."""
    import torch
    import torch.distributed as dist

    grads = [(n, p.grad) for n, p in model.named_parameters() if p.grad is not None]
    if not grads and not distributed():
        return None
    here = grads[0][1].device if grads else next(model.parameters()).device
    bad = torch.zeros((), device=here)  # no gradient here: still agreed with the rest
    if grads:  # a model may span devices: torch groups them, the total lands on the first one's
        total = torch.nn.utils.get_total_norm([g for _, g in grads])
        bad = (~torch.isfinite(total)).float().to(here)
    if distributed():
        dist.all_reduce(bad, op=dist.ReduceOp.MAX)
    if not bad.item():
        return None
    return [n for n, g in grads if not bool(torch.isfinite(g).all())], len(grads)


class FiniteGradients(TrainerCallback):
    """See the module docstring; ``record(key, value)`` keeps the skipped steps in the model card. A run
    resumed from ``checkpoint-N`` keeps the steps that checkpoint's card recorded."""

    def __init__(self, record=None):
        self.record = record
        self.steps: list[dict[str, Any]] = []
        self.in_a_row = 0
        self.engine = lambda: None  # the DeepSpeed engine that trains, once there is one (attach)

    def attach(self, trainer) -> None:
        """Read a DeepSpeed engine's verdict when ``trainer`` trains with one (module docstring)."""
        if getattr(trainer, "is_deepspeed_enabled", False):
            self.engine = lambda: getattr(trainer, "deepspeed", None)

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.global_step:
            return
        card = Path(args.output_dir) / f"checkpoint-{state.global_step}" / "biasaware_card.json"
        try:
            earlier = json.loads(card.read_text()).get("nonfinite_steps") or []
        except (OSError, ValueError, AttributeError):
            earlier = []  # a checkpoint without a card (or an older one): nothing recorded before it
        self.steps = [s for s in earlier if isinstance(s, dict) and s.get("step", 0) <= state.global_step]
        if self.steps and self.record is not None:
            self.record("nonfinite_steps", self.steps)

    def on_pre_optimizer_step(self, args, state, control, model=None, optimizer=None, **kwargs):
        if getattr(args, "fp16", False):
            return
        step = state.global_step + 1  # the step this update makes
        engine = self.engine()
        if engine is not None:
            self._after_deepspeed(engine, step, state)
            return
        if model is None or optimizer is None:
            return
        found = nonfinite_parameters(model)
        if found is None:
            self.in_a_row = 0
            return
        names, total = found
        optimizer.zero_grad(set_to_none=True)  # no gradient: the optimizer leaves every weight as it was
        where = f"{len(names)} of {total} parameters" if names else "another process's parameters"
        shown = f" ({', '.join(names)})" if 0 < len(names) <= NAMED else ""
        self._skipped(
            {"step": step, "parameters": len(names), "of": total, "named": names[:NAMED]},
            where + shown,
            state,
        )

    def _after_deepspeed(self, engine, step: int, state) -> None:
        norm = engine.get_global_grad_norm()  # None: the engine took none
        if norm is None or math.isfinite(float(norm)):
            self.in_a_row = 0
            return
        if engine.was_step_applied():
            raise BiasAwareError(
                f"training stopped at step {step}: the gradients were not finite (NaN or inf) and DeepSpeed applied "
                "them (its own check of them is off), so the weights are no longer finite; lower the learning rate "
                "or train in float32, from the start or from a checkpoint saved before this step"
            )
        self._skipped(
            {"step": step, "parameters": None, "of": None, "named": [], "skipped_by": "deepspeed"},
            "the gradients DeepSpeed holds",
            state,
        )

    def _skipped(self, entry: dict[str, Any], where: str, state) -> None:
        """A skipped step: recorded in the card, said on the main process, counted towards a stop."""
        step = entry["step"]
        self.in_a_row += 1
        self.steps.append(entry)
        if self.record is not None:
            self.record("nonfinite_steps", self.steps)
        if state.is_world_process_zero:
            print(
                f"[train] step {step}/{state.max_steps}: gradients not finite (NaN or inf) in {where}; "
                "the step is skipped, the weights stay as they were",
                flush=True,
            )
        if self.in_a_row >= MAX_IN_A_ROW:
            raise BiasAwareError(
                f"training stopped at step {step}: the gradients were not finite (NaN or inf) at {self.in_a_row} "
                "steps in a row, so the model or the data gives NaN on every batch; lower the learning rate, "
                "train in float32 (--dtype float32, or without bf16/fp16), or check the data"
            )
