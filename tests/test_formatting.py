"""Every report writes its numbers one way (biasaware.formatting)."""

from __future__ import annotations

import math
import re

from biasaware.formatting import DASH, ci, number, p_value, pct, share, with_ci
from biasaware.io import PACKAGE


def test_numbers_shares_and_intervals():
    assert number(1.25) == "1.2" and number(0.12345, 3) == "0.123" and number(0.125, percent=True) == "12.5"
    assert number(None) == DASH == number(math.nan) == pct(None)
    assert pct(0.125) == "12.5" and pct(0.5, 0) == "50"
    assert ci([0.05, 0.27]) == " [5.0, 27.0]" and ci([1.5, 2.25], 2, percent=False) == " [1.50, 2.25]"
    assert ci(None) == "" == ci([None, None])
    assert with_ci(0.125, [0.05, 0.27]) == "12.5 [5.0, 27.0]" and with_ci(0.125) == "12.5"
    assert with_ci(None, [0.1, 0.2]) == DASH
    assert share({"value": 0.5, "ci": [0.4, 0.6], "k": 5, "n": 10}) == "50.0 [40.0, 60.0]"
    assert share(None) == DASH == share({"value": None, "ci": None})


def test_p_values():
    assert p_value(0.04321) == "0.0432" and p_value(0.04321, 2) == "0.043"
    assert p_value(3.2e-9, 2, small=1e-3) == "3.2e-09"
    assert p_value(3.2e-9, 2, small=1e-3, compact=True) == "3e-9"
    assert p_value(None) == DASH


def test_no_module_writes_a_percentage_by_hand():
    hand = re.compile(r"\{100 ?\*[^}]*:\.\d+f\}")
    found = [
        f"{path.relative_to(PACKAGE)}:{i}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "formatting.py"
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if hand.search(line)
    ]
    assert not found, found
