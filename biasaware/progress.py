"""Progress bars for every long loop: judging, build stages, LLM calls, model preparation.

``auto`` (the default) shows bars on a terminal only; ``on`` shows them in logs too (a batch
job's output file); ``off`` never. The CLI's ``--progress`` sets ``BIASAWARE_PROGRESS``, which
every bar reads. Each stage also prints one summary line of its own, bars or not.
"""

from __future__ import annotations

import os

MODES = ("auto", "on", "off")


def progress_bar(total: int | None = None, *, desc: str = "", unit: str = "it", enabled: bool = True, **kw):
    """A ``tqdm`` bar that follows ``BIASAWARE_PROGRESS``; ``enabled=False`` (e.g. not process 0)
    turns it off whatever the setting."""
    from tqdm.auto import tqdm

    mode = os.environ.get("BIASAWARE_PROGRESS", "auto")
    disable = True if not enabled or mode == "off" else (False if mode == "on" else None)
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, dynamic_ncols=True, **kw)
