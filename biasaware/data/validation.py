"""``biasaware validate``: a data file checked as the commands that read it read it.

A file of biasaware's records is checked against the record contract (:func:`biasaware.io.validate_rows`:
every problem one line, with its file, line and field). A file in another tool's benchmark layout
(LLMBar, JudgeBench, RM-Bench, ...: :data:`biasaware.data.upstream.FORMATS`), where no row is a record and no
``--kind`` is named, is read as ``eval general --benchmark`` reads it (and said to be no records), and ``--kind scoring`` as ``eval scoring --data``
reads its items (BiGGen's layout included): a bad row raises as it would there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from biasaware.data.scoring_items import load_scoring_items
from biasaware.data.upstream import benchmark_layout, load_upstream
from biasaware.errors import BiasAwareError
from biasaware.formatting import counted
from biasaware.io import NOT_RECORDS, validate_rows
from biasaware.judging.judge_format import RECORD_CHECKS


@dataclass
class Checked:
    """What validate found: ``problems`` (one line each), the closing line ``said``, its exit ``code``."""

    said: str
    code: int = 0
    problems: list[str] = field(default_factory=list)


def validate_file(
    path: str, kind: str | None = None, split: str | None = None, allow_empty: bool = False
) -> Checked:
    """Check ``path`` (see the module docstring); ``kind`` ``None`` is guessed from the first row."""
    if not str(path).strip():
        raise BiasAwareError(
            "validate: the path is empty; give a data file, a folder of them, or a hub dataset"
        )
    if Path(path).name in NOT_RECORDS and Path(path).is_file():  # a build's manifest, a run's summary
        raise BiasAwareError(
            f"{path}: a record biasaware keeps beside data, not data; give its folder's data files"
        )
    if kind == "scoring":
        return Checked(f"{path}: {counted(len(load_scoring_items(path)), 'item')} to score, ok")
    found, records, problems = validate_rows(path, kind, split=split, checks=RECORD_CHECKS)
    if problems and not records and kind is None and (layout := benchmark_layout(path, split)):
        pairs = load_upstream(path, split).pairs
        return Checked(
            f"{path}: {counted(len(pairs), 'pair')} in the {layout} layout, ok for `eval general --benchmark`; not "
            "biasaware records (`--kind pair` or `--kind train` checks the rows as the records `build` and the "
            "recipes read)"
        )
    if not problems and not records and not allow_empty:
        return Checked(f"{path}: no records (pass --allow-empty to accept that)", 2)
    status = "ok" if not problems else f"{len(problems)} problem(s)"
    what = f"valid {found} record" if found else "record"  # an empty file shows no kind
    return Checked(f"{path}: {counted(len(records), what)}, {status}", 2 if problems else 0, problems)
