"""The one way a number is written in a report, a table, a card or a console line.

A missing value (``None`` or NaN) is a dash; a share is a percentage with one decimal
(``0.125`` is ``12.5``); an interval follows its value in brackets; a p-value keeps its
significant digits. Every report of the package writes its numbers with these functions, so a
figure reads the same in ``report.md``, the console and the docs.
"""

from __future__ import annotations

import math
from typing import Any

DASH = "–"


def number(x: float | None, digits: int = 1, percent: bool = False) -> str:
    """``x`` with ``digits`` decimals (``percent``: times 100); a dash when missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return DASH
    return f"{100 * x:.{digits}f}" if percent else f"{x:.{digits}f}"


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural (an ``s``) unless ``n`` is 1: ``1 setting``, ``3 settings``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def pct(x: float | None, digits: int = 1) -> str:
    """A share as a percentage: ``0.125`` is ``12.5``."""
    return number(x, digits, percent=True)


def ci(interval: list | None, digits: int = 1, percent: bool = True) -> str:
    """An interval after its value: `` [5.1, 27.0]``; nothing when there is none."""
    if not interval or interval[0] is None:
        return ""
    return f" [{number(interval[0], digits, percent)}, {number(interval[1], digits, percent)}]"


def with_ci(value: float | None, interval: list | None = None) -> str:
    """A share and its interval, ``12.5 [5.1, 27.0]``; a dash when the share is missing."""
    return DASH if number(value) == DASH else pct(value) + ci(interval)


def share(record: dict[str, Any] | None) -> str:
    """A rate record (``value`` and ``ci``, as summaries write them) as :func:`with_ci` writes it."""
    return with_ci(record.get("value"), record.get("ci")) if record else DASH


def p_value(p: float | None, digits: int = 3, small: float | None = None, compact: bool = False) -> str:
    """A p-value to ``digits`` significant digits; below ``small``, in scientific notation (``compact``:
    one digit and a short exponent, ``3e-9``)."""
    if p is None:
        return DASH
    if small is not None and p < small:
        return f"{p:.0e}".replace("e-0", "e-") if compact else f"{p:.1e}"
    return f"{p:.{digits}g}"
