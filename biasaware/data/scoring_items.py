"""Items for ``eval scoring``: one response to be graded alone, read from the layouts people publish.

An item (:class:`biasaware.records.ScoringItem`) comes from :func:`load_scoring_items`: BiGGen-Bench
files (a JSON object of records keyed by id, with ``score_rubric`` and ``reference_answer``), the
Prometheus evaluation layout used for FLASK, MT-Bench and Vicuna-Bench (``orig_instruction``,
``orig_response``, ``orig_criteria``, ``orig_score1_description``..., ``orig_reference_answer``), or a
generic JSONL (``instruction`` or ``prompt``, ``response``, optional ``rubric``, ``reference_answer``
or ``references`` by level, ``gold``). Gold scores are read from ``gold``, ``human_score``,
``gold_score`` or ``gpt4_score`` (the first present; a list of annotators' scores gives their mean).
An item without a rubric is graded with a generic correctness rubric
(:data:`biasaware.judging.score_prompts.GENERIC_RUBRIC`). A bad row names its place and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biasaware.data.upstream import detect_format
from biasaware.errors import BiasAwareError, RecordError, closest_named
from biasaware.io import iter_rows, refuse_other_kind
from biasaware.records import RUBRIC_KEYS, ScoringItem, parse_record, renamed_fields

GOLD_KEYS = ("gold", "human_score", "gold_score", "gpt4_score")
# the generic layout's fields: any other is refused (a typo of one of these would be read as no value)
GENERIC_FIELDS = (
    "id",
    "prompt",
    "instruction",
    "question",
    "input",
    "system_prompt",
    "response",
    "output",
    "answer",
    "rubric",
    *RUBRIC_KEYS,
    "references",
    "reference_answer",
    *GOLD_KEYS,
    "meta",
)


def _first(row: dict, *keys: str) -> Any:
    for k in keys:
        if row.get(k) is not None:
            return row[k]
    return None


def _gold(row: dict) -> Any:
    value = _first(row, *GOLD_KEYS)
    numbers = (
        isinstance(value, list)
        and value
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    )
    if numbers:  # several annotators: their mean
        return sum(value) / len(value)
    return value  # anything else is checked as the record's gold (a list with a non-number is refused)


def _item_id(value: Any, index: int, where: str, field: str = "id") -> str:
    """An item's id as its row gives it: text, or a whole number (written as text); the row's place when it
    gives none. Another value (``true``, ``1.5``, a list) or blank text is refused: made text, it would
    name no item the user wrote."""
    if value is None:
        return str(index)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    raise RecordError([f"{where}: field '{field}' is {value!r}: an item's id is text or a whole number"])


def _prompt(instruction: Any, system: Any = None) -> Any:
    if isinstance(instruction, list):
        return instruction
    messages = [{"role": "system", "content": system}] if isinstance(system, str) and system.strip() else []
    return [*messages, {"role": "user", "content": instruction}]


def to_scoring_row(row: dict, index: int, where: str = "<row>") -> dict:
    """A raw row of any supported layout as a :class:`~biasaware.records.ScoringItem` dict."""
    if "score_rubric" in row:  # BiGGen-Bench
        rubric = row["score_rubric"]
        ref = row.get("reference_answer")
        return {
            "id": _item_id(_first(row, "id"), index, where),
            "prompt": _prompt(row.get("input"), row.get("system_prompt")),
            "response": row.get("response"),
            "rubric": rubric,
            "references": {"5": ref} if isinstance(ref, str) and ref.strip() else {},
            "gold": _gold(row),
            "meta": {k: row[k] for k in ("capability", "task", "response_model_name") if k in row},
        }
    if "orig_instruction" in row:  # Prometheus evaluation layout (FLASK, MT-Bench, Vicuna-Bench)
        rubric = {"criteria": row.get("orig_criteria")} | {
            f"score{k}_description": row.get(f"orig_score{k}_description") for k in range(1, 6)
        }
        ref = row.get("orig_reference_answer")
        return {
            "id": _item_id(
                _first(row, "id", "question_id"),
                index,
                where,
                "id" if row.get("id") is not None else "question_id",
            ),
            "prompt": _prompt(row.get("orig_instruction")),
            "response": row.get("orig_response"),
            "rubric": rubric,
            "references": {"5": ref} if isinstance(ref, str) and ref.strip() else {},
            "gold": _gold(row),
        }
    unknown = [k for k in row if k not in GENERIC_FIELDS]
    if unknown:
        raise RecordError(
            [
                f"{where}: unknown field {unknown[0]!r}; "
                + closest_named(str(unknown[0]), list(GENERIC_FIELDS))
                + " (put extra data under 'meta')"
            ]
        )
    rubric = row.get("rubric")
    if rubric is None and any(k in row for k in RUBRIC_KEYS[1:]):
        rubric = {k: row.get(k) for k in RUBRIC_KEYS}
    references = row.get("references") or {}
    if isinstance(references, dict):
        references = {str(k): v for k, v in references.items()}
    ref = row.get("reference_answer")
    if isinstance(ref, str) and ref.strip() and isinstance(references, dict):
        references.setdefault("5", ref)
    instruction = _first(row, "prompt", "instruction", "question", "input")
    if instruction is None:
        raise RecordError([f"{where}: no instruction: give 'instruction' (or 'prompt', 'question', 'input')"])
    out = {
        "id": _item_id(row.get("id"), index, where),
        "prompt": _prompt(instruction, row.get("system_prompt")),
        "response": _first(row, "response", "output", "answer"),
        "rubric": rubric,
        "references": references,
        "gold": _gold(row),
    }
    if not any(k in row for k in ("response", "output", "answer")):  # said as missing, not as null
        del out["response"]
    if "meta" in row:
        out["meta"] = row["meta"]
    return out


def source_fields(row: dict) -> dict[str, str]:
    """The row's own names of the item fields read from others (``gold`` from ``human_score``, the prompt from
    ``orig_instruction``, a rubric line from ``orig_score3_description``), so a problem names the row's field."""
    names: dict[str, str] = {}
    gold = next((k for k in GOLD_KEYS if row.get(k) is not None), "gold")
    if gold != "gold":
        names["gold"] = gold
    if "score_rubric" in row:
        instruction, response = "input", "response"
        names.update({f"rubric.{k}": f"score_rubric.{k}" for k in RUBRIC_KEYS})
        names["rubric"] = "score_rubric"
    elif "orig_instruction" in row:
        instruction, response = "orig_instruction", "orig_response"
        names.update({f"rubric.{k}": f"orig_{k}" for k in RUBRIC_KEYS})
    else:
        instruction = next(
            (k for k in ("prompt", "instruction", "question", "input") if row.get(k) is not None), ""
        )
        response = next((k for k in ("response", "output", "answer") if row.get(k) is not None), "response")
    turn = 1 if isinstance(row.get("system_prompt"), str) and row["system_prompt"].strip() else 0
    if instruction and instruction != "prompt":
        names[f"prompt[{turn}].content"] = instruction
        names["prompt"] = instruction  # a problem of the prompt as a whole (an empty instruction)
    if response != "response":
        names["response"] = response
    return names


def _raw_rows(source: str | Path):
    """Raw rows with their locations; a JSON object whose values are all records keyed by id
    (BiGGen-Bench's layout) is expanded to one row per key."""
    for raw in iter_rows(source):
        data = raw.data
        if (
            raw.error is None
            and isinstance(data, dict)
            and data
            and all(isinstance(v, dict) for v in data.values())
        ):
            if all("score_rubric" in v or "response" in v for v in data.values()):
                for key, value in data.items():
                    yield f"{raw.where.split(':')[0]}: record {key!r}", {"id": key, **value}, None
                continue
        yield raw.where, data, raw.error


def pairs_layout(row: dict) -> str | None:
    """The benchmark layout of a row that holds two responses and no one response to score, else ``None``."""
    if any(k in row for k in ("response", "orig_response")):
        return None
    try:
        return detect_format(row)
    except BiasAwareError:  # a row of no benchmark layout (RecordError: one of a layout, malformed)
        return None


def load_scoring_items(source: str | Path, limit: int | None = None) -> list[ScoringItem]:
    """Every item of ``source`` (see the module docstring); a bad row names its place and field."""
    items, problems, seen = [], [], {}
    for i, (where, data, error) in enumerate(_raw_rows(source), start=1):
        if error:
            problems.append(error)
            continue
        if not isinstance(data, dict):
            problems.append(f"{where}: expected a JSON object, got {type(data).__name__}")
            continue
        if i == 1 and (layout := pairs_layout(data)):  # one line, not one per row
            raise BiasAwareError(
                f"{where}: a preference pair ({layout} layout), not an item to score: eval scoring reads one "
                "response and its 1-5 gold score per row (docs/evaluation.md); `biasaware eval general "
                "--benchmark` judges pairs"
            )
        try:
            item = parse_record(ScoringItem, to_scoring_row(data, i, where), where)
        except RecordError as err:
            if i == 1:  # a file of other records (bias probes, judgments) in one line
                refuse_other_kind(data, where, "scoring", err.problems)
            problems.extend(renamed_fields(err.problems, source_fields(data)))
            continue
        if item.id in seen:
            unnamed = all(data.get(k) is None for k in ("id", "question_id"))
            problems.append(
                f"{where}: has no id, so its row number {item.id!r} stands for one, and the record at {seen[item.id]} "
                "has that id; give every row an id, or none"
                if unnamed
                else f"{where}: id {item.id!r} repeats the record at {seen[item.id]}; ids must be unique"
            )
            continue
        seen[item.id] = where
        items.append(item)
        if limit and len(items) >= limit and not problems:
            break
    if problems:
        raise RecordError(problems)
    if not items:
        raise BiasAwareError(f"{source}: no items to score")
    return items
