"""When a training run writes a resumable checkpoint: as ``save_strategy`` says, or every ``save_minutes``
of training; never at the last step.

A resumable checkpoint (``checkpoint-N``: the model, the optimizer's state, the scheduler and the random
states) is what an interrupted run goes on from. It writes the model and two values a trained weight
(AdamW's moments): on smollm2-135m with 4 layers trained 2.1 s on 2 CPU cores (``bench/stage_overhead.py``),
more with every layer trained. Two choices follow.

* **None at the last step.** transformers saves one when training ends under ``save_strategy: steps``
  (and at the last epoch's end under ``epoch``), but the recipe saves its final model right after, and
  a rerun never resumes from a checkpoint at the last step
  (:func:`biasaware.training.run_folder.prepare_run` passes over it): it would be written for nothing.
  :class:`Checkpoints` cancels that save.
* **As this command says.** A resumed run logs and saves as its own command's ``logging_steps`` and
  ``save_steps`` say (transformers would keep the interrupted run's).
* **By time** (``save_minutes``, off at 0): a checkpoint whenever that many minutes of training passed
  since the last one (or since training began), besides what ``save_strategy`` asks for. A run
  interrupted redoes at most that much of its steps, and a run shorter than that (a stage of an
  experiment on a GPU) writes none. Under several processes the processes agree (the longest time any
  of them measured), so all save at the same step. Where checkpoints fall does not change what is
  trained: saving draws no random number (``tests/test_recipes.py``).

What the saves cost is kept in the model card (``checkpoints``: how many the command that wrote the card saved
and their seconds, which the steps' ``train_runtime`` includes; a resumed run's card counts the saves since it
resumed, not those of the commands before).
"""

from __future__ import annotations

import math
import time
from typing import Any

from transformers import TrainerCallback

from biasaware.errors import BiasAwareError
from biasaware.training.finite import distributed


def check_minutes(minutes: Any) -> float:
    """``save_minutes`` as a number of minutes, finite and 0 or more, else a :class:`BiasAwareError`."""
    if isinstance(minutes, bool) or not (
        isinstance(minutes, int | float) and math.isfinite(minutes) and minutes >= 0
    ):
        raise BiasAwareError(
            f"save_minutes: minutes of training between checkpoints, a finite number, 0 or more (0: off); got {minutes!r}"
        )
    return float(minutes)


class Checkpoints(TrainerCallback):
    """See the module docstring. ``minutes``: ``save_minutes`` (0: off); ``record(key, value)`` keeps
    the saves' count and seconds in the model card."""

    def __init__(self, minutes: float = 0.0, record=None):
        self.interval = 60.0 * check_minutes(minutes)
        self.record = record
        self.saved = 0
        self.seconds = 0.0
        self._last = self._asked = self._saved_at = None

    def on_train_begin(self, args, state, control, **kwargs):
        # a resumed run: transformers takes how often to log and save from the checkpoint's state; this
        # command's settings apply (they do not change what is trained)
        state.compute_steps(args, state.max_steps)
        self._last = time.perf_counter()
        self._note()

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= state.max_steps:
            control.should_save = False  # the final model is saved next (module docstring)
        elif self.interval and self._due(args):
            control.should_save = True
        if control.should_save:
            self._asked = time.perf_counter()

    def on_epoch_end(self, args, state, control, **kwargs):
        # the last step, or a step whose checkpoint its own end saved already (by time): no second save
        if state.global_step >= state.max_steps or self._saved_at == state.global_step:
            control.should_save = False
        elif control.should_save:
            self._asked = time.perf_counter()

    def on_save(self, args, state, control, **kwargs):
        now = time.perf_counter()
        if self._asked is not None:
            self.saved += 1
            self.seconds += now - self._asked
            self._note()
        self._last, self._asked, self._saved_at = now, None, state.global_step

    def _due(self, args) -> bool:
        """Whether ``save_minutes`` passed since the last save, as every process agrees."""
        elapsed = time.perf_counter() - self._last
        if distributed():  # torch as finite.py takes it: when a process group runs, not on import
            import torch
            import torch.distributed as dist

            longest = torch.tensor([elapsed], device=args.device)
            dist.all_reduce(longest, op=dist.ReduceOp.MAX)
            elapsed = float(longest.item())
        return elapsed >= self.interval

    def _note(self) -> None:
        if self.record is not None:
            self.record("checkpoints", {"saved": self.saved, "seconds": round(self.seconds, 2)})
