"""General judge benchmarks as preference pairs: RewardBench, JudgeBench, RMB, RM-Bench, LLMBar,
EvalBiasBench.

``load_benchmark(name_or_path)`` returns :class:`~biasaware.records.PreferencePair` records whose
``meta.subset`` names the benchmark's own subset. A name loads the hub copy (``datasets``); a path
loads a local file or folder, and the format is recognised from the columns:

=================  =====================================================  ===========================
benchmark          columns                                                 pairs
=================  =====================================================  ===========================
``rewardbench``    prompt, chosen, rejected, subset (hub split filtered)   one per row
``judgebench``     question, response_A, response_B, label ``A>B|B>A``     one per row
``rmb``            conversation_input, chosen.answer, reject.answer        one per row
``rm-bench``       prompt, chosen[3], rejected[3], domain                  3 x 3 style pairs per row
``llmbar``         input, output_1, output_2, label ``1|2``; file = subset one per row
``evalbiasbench``  {subset: [{instruction, response1, response2, label}]}  one per row
=================  =====================================================  ===========================

(The RMB and RM-Bench layouts follow their published READMEs; the LLMBar and EvalBiasBench ones
were checked against copies of the released files.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from biasaware.errors import BiasAwareError, RecordError
from biasaware.io import iter_rows
from biasaware.records import PreferencePair, parse_record

HUB = {
    "rewardbench": ("allenai/reward-bench", "filtered"),
    "judgebench": ("ScalerLab/JudgeBench", "gpt"),
    "rm-bench": ("THU-KEG/RM-Bench", "train"),
    "llmbar": ("princeton-nlp/LLMBar:LLMBar", "Natural"),
}
LOCAL_ONLY = {
    "rmb": "the RMB_dataset folder of its GitHub repository",
    "evalbiasbench": "OffsetBias's biasbench.json",
}


def _pair(
    pid: str, subset: str, prompt: Any, chosen: Any, rejected: Any, where: str, **meta
) -> PreferencePair:
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    data = {
        "id": pid,
        "source": "benchmark",
        "prompt": prompt,
        "chosen": chosen,
        "rejected": rejected,
        "meta": {"subset": subset, **meta},
    }
    return parse_record("pair", data, where)


def _label_error(where: str, field: str, value: Any, valid: str) -> RecordError:
    return RecordError([f"{where}: field '{field}' must be {valid}, got {value!r}"])


def _rewardbench(row, where, i):
    return [
        _pair(
            str(row.get("id", i)),
            row.get("subset", "all"),
            row["prompt"],
            row["chosen"],
            row["rejected"],
            where,
        )
    ]


def _judgebench(row, where, i):
    label = row["label"]
    if label not in ("A>B", "B>A"):
        raise _label_error(where, "label", label, "'A>B' or 'B>A'")
    a, b = row["response_A"], row["response_B"]
    chosen, rejected = (a, b) if label == "A>B" else (b, a)
    return [
        _pair(str(row.get("pair_id", i)), row.get("source", "all"), row["question"], chosen, rejected, where)
    ]


def _rmb(row, where, i):
    chosen, reject = row["chosen"], row["reject"]
    get = lambda r: r.get("answer") if isinstance(r, dict) else r  # noqa: E731
    subset = row.get("category_path", "all")
    return [
        _pair(str(row.get("pair_uid", i)), subset, row["conversation_input"], get(chosen), get(reject), where)
    ]


def _rmbench(row, where, i):
    chosen, rejected = row["chosen"], row["rejected"]
    if not (isinstance(chosen, list) and isinstance(rejected, list) and len(chosen) == len(rejected) == 3):
        raise RecordError(
            [f"{where}: fields 'chosen' and 'rejected' must be lists of 3 responses (RM-Bench)"]
        )
    rid = str(row.get("id", i))
    return [
        _pair(
            f"{rid}-{a}{b}",
            row.get("domain", "all"),
            row["prompt"],
            chosen[a],
            rejected[b],
            where,
            styles=[a, b],
        )
        for a in range(3)
        for b in range(3)
    ]


def _llmbar(row, where, i):
    label = row["label"]
    if label not in (1, 2):
        raise _label_error(where, "label", label, "1 or 2")
    subset = Path(where.split(":")[0]).stem
    better, worse = (row["output_1"], row["output_2"]) if label == 1 else (row["output_2"], row["output_1"])
    return [_pair(f"{subset}-{i}", subset, row["input"], better, worse, where)]


def _evalbiasbench(row, where, i):
    label = row["label"]
    if label not in (1, 2):
        raise _label_error(where, "label", label, "1 or 2")
    better, worse = (
        (row["response1"], row["response2"]) if label == 1 else (row["response2"], row["response1"])
    )
    subset = row.get("bias", "all")
    return [_pair(f"{subset.replace(' ', '_')}-{i}", subset, row["instruction"], better, worse, where)]


FORMATS: dict[str, tuple[set[str], Callable]] = {
    "llmbar": ({"input", "output_1", "output_2", "label"}, _llmbar),
    "evalbiasbench": ({"instruction", "response1", "response2", "label"}, _evalbiasbench),
    "judgebench": ({"question", "response_A", "response_B", "label"}, _judgebench),
    "rmb": ({"conversation_input", "chosen", "reject"}, _rmb),
    "rm-bench": ({"prompt", "chosen", "rejected", "domain"}, _rmbench),
    "rewardbench": ({"prompt", "chosen", "rejected"}, _rewardbench),
}


def detect_format(row: dict[str, Any]) -> str:
    for name, (cols, _) in FORMATS.items():
        if cols <= set(row) and (name != "rm-bench" or isinstance(row.get("chosen"), list)):
            return name
    raise BiasAwareError(
        f"unrecognised benchmark columns {sorted(row)}; known layouts: "
        + "; ".join(f"{n}: {sorted(c)}" for n, (c, _) in FORMATS.items())
    )


def _rows(source: str, split: str):
    """Rows with locations; EvalBiasBench's {subset: [rows]} JSON is flattened here."""
    path = Path(source)
    if path.is_file() and path.suffix == ".json":
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise BiasAwareError(f"{path}: invalid JSON ({exc})") from None
        if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
            for subset, rows in data.items():
                for i, row in enumerate(rows):
                    yield {"bias": subset, **row}, f"{path}:{subset}[{i}]", None
            return
    for raw in iter_rows(source, split):
        yield raw.data, raw.where, raw.error


def load_benchmark(name_or_path: str, split: str | None = None) -> list[PreferencePair]:
    """Pairs of a general benchmark (see the module docstring); bad rows raise with their location."""
    source, default_split = HUB.get(name_or_path, (name_or_path, "train"))
    if name_or_path in LOCAL_ONLY and not Path(name_or_path).exists():
        raise BiasAwareError(f"{name_or_path} has no hub copy; pass the path of {LOCAL_ONLY[name_or_path]}")
    pairs: list[PreferencePair] = []
    problems: list[str] = []
    fmt = None
    for i, (row, where, error) in enumerate(_rows(source, split or default_split)):
        if error:
            problems.append(error)
            continue
        fmt = fmt or detect_format(row)
        cols, convert = FORMATS[fmt]
        missing = sorted(cols - set(row))
        try:
            if missing:
                raise RecordError(
                    [f"{where}: field '{missing[0]}' is missing ({fmt} columns: {sorted(cols)})"]
                )
            pairs.extend(convert(row, where, i))
        except RecordError as err:
            problems.extend(err.problems)
    if problems:
        raise RecordError(problems)
    if not pairs:
        raise BiasAwareError(f"{name_or_path}: no benchmark pairs")
    for p in pairs:
        p.meta["benchmark"] = fmt
    return pairs
