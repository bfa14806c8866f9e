"""Progress bars for every long loop: judging, build stages, LLM calls, model preparation.

``auto`` (the default) shows bars on a terminal only; ``on`` shows them in logs too (a batch
job's output file); ``off`` never. The CLI's ``--progress`` sets ``BIASAWARE_PROGRESS``, which
every bar reads. Each stage also prints one summary line of its own, bars or not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from unittest import mock

from tqdm.auto import tqdm

MODES = ("auto", "on", "off")


def progress_bar(total: int | None = None, *, desc: str = "", unit: str = "it", enabled: bool = True, **kw):
    """A ``tqdm`` bar that follows ``BIASAWARE_PROGRESS``; ``enabled=False`` (e.g. not process 0)
    turns it off whatever the setting."""

    mode = os.environ.get("BIASAWARE_PROGRESS", "auto")
    disable = True if not enabled or mode == "off" else (False if mode == "on" else None)
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, dynamic_ncols=True, **kw)


@contextmanager
def library_bars(module) -> Iterator[None]:
    """Within the block, ``module``'s own ``tqdm`` bars follow ``BIASAWARE_PROGRESS`` as biasaware's do: none
    with ``off``, on a terminal only with ``auto`` (a library that draws its bars with the ``tqdm`` it
    imported, as transformers' GGUF conversion does; tqdm reads ``TQDM_DISABLE`` only when it is imported, so
    this process's bars need this)."""
    mode = os.environ.get("BIASAWARE_PROGRESS", "auto")
    if mode == "on" or not hasattr(module, "tqdm"):
        yield
        return
    disable = True if mode == "off" else None  # tqdm's None: off where the output is not a terminal
    with mock.patch.object(module, "tqdm", partial(module.tqdm, disable=disable)):
        yield


# ------------------------------------------------------------------------------- work within a call
# A judging loop hands a model a chunk of inputs in one call; the call's own inner loop (a model's
# batches, an LLM client's requests) says how far it got through ``advance``, so the loop's bar moves
# per batch and its ETA means something, without every judge passing a callback through its layers.
_report: ContextVar[Callable[[int, int], None] | None] = ContextVar("biasaware_progress_report", default=None)


@contextmanager
def reporting(report: Callable[[int, int], None]) -> Iterator[None]:
    """Within this block, :func:`advance` calls ``report(done, total)``."""
    token = _report.set(report)
    try:
        yield
    finally:
        _report.reset(token)


def advance(done: int, total: int) -> None:
    """``done`` of ``total`` parts of the current call are finished (a no-op outside :func:`reporting`)."""
    report = _report.get()
    if report is not None and total > 0:
        report(done, total)


ESTIMATE_AFTER_S = 20.0  # seconds of judging before the run's length is estimated
LONG_RUN_S = 600.0  # runs estimated longer than this say so, with what --limit would bring them to


class ChunkProgress:
    """A bar over a judging loop's inputs, moved within each chunk by :func:`advance` and set exactly
    at each chunk's end; once ``ESTIMATE_AFTER_S`` of judging has passed, a run estimated to take
    longer than ``LONG_RUN_S`` prints the estimate and, when ``limit`` (the count an option such as
    ``--limit`` sets now, what it counts, and the option) is given, the value that would take about
    ``LONG_RUN_S``. A resumed run estimates what it has left to judge."""

    def __init__(
        self,
        total: int,
        *,
        desc: str,
        enabled: bool,
        limit: tuple[int, str, str] | None = None,
        unit: str = "view",
    ):

        self.bar = progress_bar(total, desc=desc, unit=unit, enabled=enabled)
        self.total, self.enabled, self.limit, self.unit = total, enabled, limit, unit
        self.base = self.size = self.done = 0  # the bar's own count stays 0 when it is disabled
        self.t0, self.clock, self.estimated = time.monotonic(), time.monotonic, False

    @contextmanager
    def chunk(self, size: int) -> Iterator[None]:
        self.base, self.size = self.done, size
        with reporting(self._within):
            yield
        self._to(self.base + size)

    def _within(self, done: int, total: int) -> None:
        self._to(self.base + self.size * min(done, total) // total)

    def _to(self, n: int) -> None:
        if n > self.done:
            self.bar.update(n - self.done)
            self.done = n
        self._estimate()

    def _estimate(self) -> None:
        elapsed = self.clock() - self.t0
        if self.estimated or not self.enabled or elapsed < ESTIMATE_AFTER_S or not self.done:
            return
        self.estimated = True
        per = elapsed / self.done
        left = per * (self.total - self.done)
        if elapsed + left <= LONG_RUN_S:
            return
        line = (
            f"[judge] estimate: about {(elapsed + left) / 60:.0f} min for {self.total} {self.unit}s "
            f"({per:.2f} s a {self.unit}; {left / 60:.0f} min left)"
        )
        if self.limit is not None:
            count, what, flag = self.limit
            k = max(1, int(count * LONG_RUN_S / (elapsed + left)))
            if k < count:
                line += f"; {flag} {k} ({what}; {count} now) would take about {LONG_RUN_S / 60:.0f} min"
        self.bar.write(line)

    def close(self) -> None:
        self.bar.close()
