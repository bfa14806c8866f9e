"""Base preference data for the builders: the built-in corpus, contract files, HelpSteer3.

``load_pairs(source)`` returns :class:`PreferencePair` records from

* ``builtin``: the offline verifiable corpus (:mod:`biasaware.data.corpus`); its splits are task
  families: ``train`` (7), ``test`` (3 held out: multiplication, sorting, equations), ``all``;
* a file or hub dataset whose rows are already preference pairs (the data contract);
* HelpSteer3-Preference (source ``helpsteer3``: hub ``nvidia/HelpSteer3``, subset ``preference``; or a local file with its columns:
  ``domain, language, context, response1, response2, overall_preference``): single-turn,
  general domain, non-zero preference; a negative preference means response1 is better;
* GRAM-fine-tuning-65K (hub name ``NiuTrans/GRAM-fine-tuning-65k``, source ``gram``, or a local
  file with its columns ``instruction, output``): ``instruction`` holds an MT-Bench style pair
  prompt (``[User Question]``, ``[The Start of Assistant A's Answer]`` ... ``[The End of Assistant
  B's Answer]``), ``output`` the better side, ``A`` or ``B``. (The layout is the one public
  conversion code reads; it was not checked against the hub copy, which is unreachable here.)
* any table with prompt/chosen/rejected string columns (names set by ``columns``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from biasaware.data.corpus import builtin_pairs
from biasaware.errors import BiasAwareError, RecordError
from biasaware.io import collect_rows, refuse_other_kind
from biasaware.records import PreferencePair, json_kind, parse_record, renamed_fields

HELPSTEER3_COLUMNS = {"context", "response1", "response2", "overall_preference"}
GRAM_COLUMNS = {"instruction", "output"}
HUB_NAMES = {"helpsteer3": "nvidia/HelpSteer3:preference", "gram": "NiuTrans/GRAM-fine-tuning-65k"}
_GRAM = re.compile(
    r"\[User Question\]\s*(?P<q>.*?)\s*\[The Start of Assistant A's Answer\]\s*(?P<a>.*?)\s*"
    r"\[The End of Assistant A's Answer\]\s*\[The Start of Assistant B's Answer\]\s*(?P<b>.*?)\s*"
    r"\[The End of Assistant B's Answer\]",
    re.DOTALL,
)


def _row_id(source: str, where: str) -> str:
    """A stable id for a row of a layout that has none: the source's name, the local file's name (a folder's
    files each number their lines from 1) and the line (or row) number of its ``file:line`` location."""
    file, line = where.rsplit(":", 1) if ":" in where else ("", where)
    name = f"{Path(file).name}-" if file and Path(file).is_file() else ""
    return f"{source}-{name}{line.strip().removeprefix('row ')}"


def require_columns(row: dict[str, Any], where: str, columns: set[str], layout: str) -> None:
    """Refuse a row that lacks a column of its layout, naming the first missing and the layout's columns."""
    missing = sorted(columns - set(row))
    if missing:
        raise RecordError(
            [f"{where}: field '{missing[0]}' is missing (the {layout} layout's columns: {sorted(columns)})"]
        )


def _gram_pair(row: dict[str, Any], where: str) -> PreferencePair:
    require_columns(row, where, GRAM_COLUMNS, "GRAM")
    label = str(row["output"]).strip().strip("[]").upper()
    if label not in ("A", "B"):
        raise RecordError([f"{where}: field 'output' must be 'A' or 'B', got {row['output']!r}"])
    m = _GRAM.search(str(row["instruction"]))
    if not m:
        raise RecordError(
            [
                f"{where}: field 'instruction' does not hold the pair layout ([User Question], "
                "[The Start of Assistant A's Answer] ... [The End of Assistant B's Answer])"
            ]
        )
    a, b = m.group("a"), m.group("b")
    data = {
        "id": _row_id("gram", where),
        "source": "gram",
        "prompt": [{"role": "user", "content": m.group("q")}],
        "chosen": a if label == "A" else b,
        "rejected": b if label == "A" else a,
        "meta": {"label": label},
    }
    return parse_record("pair", data, where)


def _helpsteer3_pair(
    row: dict[str, Any], where: str, source: str, domain: str | None, skipped: Counter
) -> PreferencePair | None:
    """One HelpSteer3 row as a pair, or ``None`` (counted in ``skipped`` by its reason) for a tie, a row
    of another domain, or a conversation of more than one turn."""
    require_columns(row, where, HELPSTEER3_COLUMNS, "HelpSteer3")
    pref = row["overall_preference"]
    if isinstance(pref, bool) or not isinstance(pref, int | float) or not -3 <= pref <= 3:
        raise RecordError([f"{where}: field 'overall_preference' must be a number in [-3, 3], got {pref!r}"])
    context = row["context"]
    if not isinstance(context, list) or not context or not all(isinstance(m, dict) for m in context):
        shown = (
            json_kind(context)
            if not isinstance(context, list)
            else "an empty array"
            if not context
            else "an array holding other than objects"
        )
        raise RecordError(
            [f"{where}: field 'context' must be a list of turns ({{role, content}} objects), got {shown}"]
        )
    reason = (
        "tie (overall_preference 0)"
        if pref == 0
        else f"domain not {domain}"
        if domain and row.get("domain", domain) != domain
        else "more than one turn"
        if len(context) != 1
        else None
    )
    if reason:
        skipped[reason] += 1
        return None
    better, worse = (row["response1"], row["response2"]) if pref < 0 else (row["response2"], row["response1"])
    data = {
        "id": _row_id(source, where),
        "source": source,
        "prompt": [{"role": m.get("role"), "content": m.get("content")} for m in context],
        "chosen": better,
        "rejected": worse,
        "meta": {"overall_preference": pref, "domain": row.get("domain")},
    }
    try:
        return parse_record("pair", data, where)
    except RecordError as err:  # named by the file's own fields: context, response1, response2
        sides = ("response1", "response2") if pref < 0 else ("response2", "response1")
        said = [
            p.replace("field 'prompt", "field 'context").replace(
                "identical to 'chosen'", f"identical to '{sides[0]}'"
            )
            for p in err.problems
        ]
        raise RecordError(
            renamed_fields(said, dict(zip(("chosen", "rejected"), sides, strict=True)))
        ) from None


def default_split(source: str, stage: str | None = None) -> str:
    """The split a build reads when none is given: the built-in corpus holds out task families
    for the benchmark (``test``) from training rows and traces (``train``); other sources ``train``."""
    if source != "builtin":
        return "train"
    return {"bench": "test", "train": "train", "traces": "train"}.get(stage or "", "all")


COLUMN_FIELDS = ("prompt", "chosen", "rejected")  # what ``columns`` maps to a table's own column names


def load_pairs(
    source: str = "builtin",
    *,
    split: str | None = None,
    seed: int = 0,
    corpus_size: int = 2500,
    columns: dict[str, str] | None = None,
    domain: str | None = "general",
    families: str = "reasoning",
    skipped: Counter | None = None,
) -> list[PreferencePair]:
    """Load base preference pairs from ``source``; see the module docstring. Bad rows raise with file:line.
    ``skipped``: counts the well-formed rows left out, by reason (HelpSteer3's ties, other domains and
    conversations of several turns)."""
    skipped = Counter() if skipped is None else skipped
    split = split or default_split(source)
    if source == "builtin":
        return builtin_pairs(corpus_size, seed, split, families)
    hub_name = HUB_NAMES.get(source, source)
    unknown = sorted(set(columns or {}) - set(COLUMN_FIELDS))
    if unknown:
        raise BiasAwareError(
            f"columns: unknown field {unknown[0]!r}; columns maps {', '.join(COLUMN_FIELDS)} to your column names"
        )
    cols = {**{f: f for f in COLUMN_FIELDS}, **(columns or {})}
    layout = []  # the file's layout, read from its first row

    def parse(row, index: int) -> PreferencePair | None:
        if not layout:  # a table whose columns the user named is read by them, whatever else it holds
            layout.append("columns" if columns else _layout(set(row.data)))
        if layout[0] == "helpsteer3":
            return _helpsteer3_pair(row.data, row.where, "helpsteer3", domain, skipped)
        if layout[0] == "gram":
            return _gram_pair(row.data, row.where)
        if layout[0] == "pair":
            return parse_record("pair", row.data, row.where)
        return _columns_pair(row.data, row.where, cols, index)

    pairs, problems = collect_rows(hub_name, split, parse, key=lambda pair: pair.id)
    if problems:
        raise RecordError(problems)
    if not pairs:
        why = f" ({', '.join(f'{n} {r}' for r, n in skipped.items())} left out)" if skipped else ""
        raise BiasAwareError(f"{source}: no usable preference pairs{why}")
    return pairs


def _layout(keys: set[str]) -> str:
    """A file's layout from its first row's keys: HelpSteer3, GRAM, biasaware pairs, or columns."""
    if HELPSTEER3_COLUMNS <= keys:
        return "helpsteer3"
    if GRAM_COLUMNS <= keys:
        return "gram"
    return "pair" if {"id", "source"} <= keys else "columns"


def _columns_pair(row: dict[str, Any], where: str, cols: dict[str, str], index: int) -> PreferencePair:
    missing = [f"{k} (column {v!r})" for k, v in cols.items() if v not in row]
    if missing:
        problems = [
            f"{where}: field '{cols[missing[0].split()[0]]}' is missing; set columns to map "
            f"prompt/chosen/rejected (have: {', '.join(sorted(row))})"
        ]
        if all(k == v for k, v in cols.items()):  # no columns named: a file of another kind is said once
            refuse_other_kind(row, where, "pair", problems)
        raise RecordError(problems)
    prompt = row[cols["prompt"]]
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    data = {
        "id": str(row.get("id", f"row-{index}")),
        "source": "local",
        "prompt": prompt,
        "chosen": row[cols["chosen"]],
        "rejected": row[cols["rejected"]],
    }
    try:
        return parse_record("pair", data, where)
    except RecordError as err:  # a problem of a mapped field is named by the user's column
        mapped = {f: c for f, c in cols.items() if c != f}
        raise RecordError(renamed_fields(err.problems, mapped, " (mapped to {field})")) from None
