"""``eval real``: one judge on real text, two-sided, beside the cue-only judges on the same pairs.

Reads a ``biasaware build real`` folder and judges each of its sets with the ``eval general`` protocol
(:mod:`biasaware.evaluation.general`: a reward model scores each pair once and is right when the chosen
response scores strictly higher; a generative judge sees both orders and is right only when both verdicts
are), each set in its own sub-folder (``judgments.jsonl``, ``summary.json``, ``report.md``), resumable.
``limit``: a seeded sample of at most that many pairs per set, stratified by subset, the same for every
judge with the same ``seed`` (the draw is recorded). The sets, by what they measure:

=====================  ==========================================================================================
measure                sets
=====================  ==========================================================================================
style cue, two-sided   RM-Bench **hard** (the chosen answer in a plainer style than the rejected one: the cue on
                       the worse answer, so accuracy here is 1 - cue-following), **easy** (the cue on the better
                       answer: accuracy falls when a judge over-corrects), **normal** (the same style)
human labels           Auto-J (no ties), PandaLM (the majority of three, no ties)
curated / correctness  LLMBar (natural; adversarial), JudgeBench, EvalBiasBench
AI feedback            held-out AlpacaEval instructions (GPT-4-turbo's confident preferences)
master key             NullModel's constant non-answer against the reference output: a **false positive** is a
                       key not beaten (a reward model: scored at or above the reference; a generative judge: not
                       rejected in both orders), the share of pairs the judge gets wrong
=====================  ==========================================================================================

**Injected probes** (``probes/``, ``keys/`` of the build folder, when there: :func:`biasaware.data.real.build_real_probes`)
are judged with the ``eval bias`` protocol (:mod:`biasaware.evaluation.evaluate`) into ``out/probes`` and
``out/keys``, ``probe_limit`` per bias and side (a seeded sample): the 12 biases on human- and
correctness-labelled pairs, two-sided (**BSR**: the cue on the worse answer followed; **over-correction**:
the cue on the better answer turned against), and the key battery against real reference answers (a **false
positive** is a key not decided against: for a pairwise judge, over both orders).

Beside every accuracy stand the cue-only judges on the same pairs (``longer wins`` in words and in
characters, ``more markdown wins``: :func:`biasaware.evaluation.baselines.general_baselines`), so a judge
that learned the length shortcut is read off against the shortcut itself. ``real.json`` holds every set's
figures; ``report.md`` the table.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any

from biasaware.data.real import check_outputs
from biasaware.data.upstream import RMBENCH_LEVELS, load_benchmark
from biasaware.devices import ranks
from biasaware.errors import BiasAwareError
from biasaware.evaluation.baselines import CUES, general_baselines
from biasaware.evaluation.evaluate import evaluate_bias
from biasaware.evaluation.general import evaluate_general, sample_pairs
from biasaware.evaluation.leaderboards import judge_accuracy
from biasaware.evaluation.metrics import wilson_interval
from biasaware.evaluation.reports import real_markdown
from biasaware.evaluation.resume import FINGERPRINT, check_fingerprint, costs_kept, fingerprint
from biasaware.evaluation.runner import Unreadable, load_probes, start_judge
from biasaware.evaluation.summaries import ORDERS
from biasaware.io import (
    check_out_folder,
    not_a_folder,
    read_json,
    read_records,
    refuse_foreign,
    refuse_inside,
    write_json,
)
from biasaware.judging.judges import resolve_judge
from biasaware.records import PreferencePair

SETS = (  # (name in the report, file in the build folder, what it measures)
    ("rm-bench", "bench/rm-bench.jsonl", "style cue, two-sided"),
    ("auto-j", "bench/auto-j.jsonl", "human labels"),
    ("pandalm", "bench/pandalm.jsonl", "human labels"),
    ("llmbar", "bench/llmbar.jsonl", "curated"),
    ("judgebench", "bench/judgebench.jsonl", "correctness"),
    ("evalbiasbench", "bench/evalbiasbench.jsonl", "curated bias pairs"),
    ("heldout", "heldout.jsonl", "AI feedback, held-out instructions"),
    ("masterkey-null", "masterkey-null.jsonl", "master key (false positive = 1 - accuracy)"),
)
PROBE_PARTS = (  # (folder in the build folder and in --out, what it measures)
    (
        "probes",
        "injected cues, the biases judged (a reward model: 9 of 12), both sides (human- and correctness-labelled pairs)",
    ),
    ("keys", "key battery against real reference answers"),
)


def pooled_accuracy(parts: list[dict[str, Any]], record=judge_accuracy) -> dict[str, Any]:
    """The judge's accuracy over several summary parts or sets pooled: right of judged, with its Wilson interval
    (``record``: another count of the parts, such as their ``consistency``)."""
    k = sum(record(p)["k"] for p in parts)
    n = sum(record(p)["n"] for p in parts)
    return {"value": k / n if n else None, "ci": list(wilson_interval(k, n)) if n else None, "k": k, "n": n}


def cue_rows(baselines: dict[str, Any]) -> dict[str, Any]:
    """The cue-only judges of :func:`general_baselines`: accuracy on the pairs each decides, and over all."""
    cues = baselines.get("heuristics", {})
    return {
        c: {
            "acc_decided": cues[c]["acc_decided"],
            "decided": cues[c]["decided_ori"],
            "accuracy": cues[c]["acc_ori"],
        }
        for c in CUES
        if c in cues
    }


def set_figures(name: str, summary: dict[str, Any], pairs: list[PreferencePair]) -> dict[str, Any]:
    """What ``real.json`` keeps of one set's ``summary.json``: the judge's accuracy overall and per subset
    (RM-Bench: per difficulty, pooled over domains, with the cue-only judges per difficulty computed from the
    judged ``pairs``), the cue-only judges' accuracy on the pairs they decide, and a generative judge's
    position consistency (``consistency``: the pairs whose two verdicts, one per order, pick the same answer;
    RM-Bench's per difficulty too), the pairs given the same letter in both orders (``same_letter``), the
    texts cut to fit the judge's context (``truncated``) and RM-Bench's own domain-averaged figures (``rmbench``)."""
    row: dict[str, Any] = {
        "pairs": summary["items"],
        "accuracy": judge_accuracy(summary["overall"]),
        "per_subset": {s: judge_accuracy(r) for s, r in summary["per_subset"].items()},
        "cue_only": cue_rows(summary.get("cue_baselines") or {}),
        "judge_check": summary.get("judge_check"),
        "overlong": summary["overall"].get("overlong", 0),
    }
    if "cut" in summary["overall"]:  # texts cut to fit the context (a summary written before: not counted)
        row["truncated"] = summary["overall"]["cut"]
    both_orders = "consistency" in summary["overall"]  # a generative judge: each pair in both orders
    if both_orders:
        row["consistency"] = summary["overall"]["consistency"]
        row["same_letter"] = summary["overall"].get("same_letter")
    if name == "rm-bench":
        at = {
            lv: [r for s, r in summary["per_subset"].items() if s.endswith(f" {lv}")] for lv in RMBENCH_LEVELS
        }
        row["levels"] = {level: pooled_accuracy(at[level]) for level in RMBENCH_LEVELS}
        if both_orders:
            row["consistency_levels"] = {
                level: pooled_accuracy(at[level], itemgetter("consistency")) for level in RMBENCH_LEVELS
            }
        row["cue_only_levels"] = {
            level: cue_rows(general_baselines([p for p in pairs if p.meta["difficulty"] == level]))
            for level in RMBENCH_LEVELS
        }
        if "rmbench" in summary:  # RM-Bench's own figures, averaged over its domains (a build naming them)
            row["rmbench"] = summary["rmbench"]
    if name == "masterkey-null":
        acc = row["accuracy"]
        row["false_positive"] = None if acc["value"] is None else 1 - acc["value"]
    return row


def _side(entry: dict[str, Any]) -> dict[str, Any]:
    keep = ("acc_ori", "bsr", "bsr_ci", "overcorrection", "overcorrection_ci", "acc_inj_mirror")
    return {k: entry.get(k) for k in keep}


def probe_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """What ``real.json`` keeps of an ``eval bias`` summary on real probes: the pooled (micro) figures of the
    12 biases, each bias's, the cue-only judges' pooled BSR and over-correction, the master-key false
    positives (per key type, over both orders for a pairwise judge), the texts cut to fit the judge's context
    (``truncated``) and the degenerate-judge check."""
    row: dict[str, Any] = {
        "probes": summary["items"],
        "truncated": summary.get("cut", 0),  # texts cut to fit the judge's context
        "judge_check": summary.get("judge_check"),
        "per_bias": {b: _side(e) for b, e in summary["per_bias"].items() if b != "masterkey"},
    }
    if set(row["per_bias"]):
        row["overall"] = _side(summary["overall"]["micro"])
        cues = (summary.get("cue_baselines") or {}).get("heuristics", {})
        row["cue_only"] = {c: {k: r.get(k) for k in ("bsr", "overcorrection")} for c, r in cues.items()}
    keys = summary["per_bias"].get("masterkey", {}).get("master_keys")
    if keys:
        rule = keys.get("reference") or keys  # a pairwise judge: the reward rule over both orders
        row["keys"] = {
            "false_positive": rule["fpr"],
            "false_positive_ci": rule["fpr_ci"],
            "n": rule["n"],
            "per_key_type": {t: r["fpr"] for t, r in rule["per_key_type"].items()},
            "short_lost": keys["short_lost"],
            "short_n": keys["short_n"],
        }
    return row


def evaluate_real(
    spec,
    data: str | Path,
    out: str | Path,
    *,
    limit: int | None = None,
    probe_limit: int | None = None,
    seed: int = 0,
    judge=None,
) -> dict[str, Any]:
    """Judge every set of the ``build real`` folder ``data`` into ``out/<set>/``, then its probes
    (:data:`PROBE_PARTS`, ``probe_limit`` per bias and side), and write ``out/real.json`` and
    ``out/report.md``; return what ``real.json`` holds. Sets the folder lacks are listed as missing."""
    data, out = Path(data), check_out_folder(out, "--out")
    manifest = (
        read_json(data / "manifest.json", "real-text manifest") if (data / "manifest.json").exists() else None
    )
    if manifest is None or "kind" in manifest:  # build real's manifest names no kind; other builders' do
        raise BiasAwareError(f"{data}: {not_real(data, manifest)}")
    refuse_inside(out, data, "the data folder")
    present = [(name, file, what) for name, file, what in SETS if (data / file).exists()]
    needed = [file for name, file, _ in SETS if name in expected_sets(manifest)]
    needed += [f"{name}/" for name, _ in PROBE_PARTS if name in manifest.get("probes", {})]
    check_outputs(data, manifest, "build it again in a new folder", needed)

    if ranks().main:  # this command's folder holds its result or the sets an interrupted run began
        sets = (*(name for name, _, _ in SETS), *(n for n, _ in PROBE_PARTS))
        refuse_foreign(out, tuple(f"{name}/{FINGERPRINT}" for name in sets), "an eval real run")
    resolved = judge.resolved if judge is not None else resolve_judge(spec)

    samples = {name: sampled(data / file, limit, seed) for name, file, _ in present}
    parts = [(name, what) for name, what in PROBE_PARTS if (data / name / "manifest.json").exists()]
    for name, _ in parts:
        samples[name] = load_probes(data / name, None, probe_limit, seed)
    for name in samples:  # every set's folder is checked before any set is judged
        check_fingerprint(
            out / name,
            fingerprint(
                resolved.spec,
                resolved.identity(),
                samples[name],
                resolved.place.get("dtype"),
                "eval bias" if name in dict(parts) else "eval general",
            ),
            write=False,
        )
    judge = judge if judge is not None else start_judge(resolved)
    earlier = read_json(out / "real.json", "real.json") if (out / "real.json").exists() else {}
    with (
        unreadable_removes(out, list(samples)) as at,
        costs_kept(out, judge, earlier.get("judge_summary")) as costs,
    ):
        sets: dict[str, Any] = {}
        for name, file, what in present:
            at["set"] = name
            summary = evaluate_general(
                spec, str(data / file), out / name, limit=limit, seed=seed, judge=judge
            )
            if summary is None:  # not the main process of a multi-process launch
                continue
            # the judged pairs are the sample: a folder holding judgments of other pairs was refused above
            sets[name] = {"measures": what, **set_figures(name, summary, samples[name])}

        probes = {}
        for name, what in parts:
            at["set"] = name
            summary = evaluate_bias(
                spec,
                data / name,
                out / name,
                limit=probe_limit,
                seed=seed,
                judge=judge,
                limit_flag="--probe-limit",
            )
            if summary is not None:
                probes[name] = {"measures": what, **probe_figures(summary)}
    result = {
        "judge": getattr(judge, "name", str(spec)),
        "settings": {k: getattr(resolved.spec, k) for k in ("mode", "max_length", "truncation")},
        "data": {"settings": manifest.get("settings"), "sources_sha256": manifest.get("sources_sha256")},
        "limit": limit,
        "probe_limit": probe_limit,
        "seed": seed,
        "judge_summary": costs.get("summary"),
        # a set, or injected probes (a build without the labelled sets they are drawn from has none)
        "missing": [name for name, file, _ in SETS if not (data / file).exists()]
        + [f"{name}/ ({what})" for name, what in PROBE_PARTS if not (data / name / "manifest.json").exists()],
        "sets": sets,
        "probes": probes,
    }
    write_json(out / "real.json", result)
    (out / "report.md").write_text(real_markdown(result))
    return result


def pair_outcomes(
    eval_folder: Path, each: Callable[[Path, list], Any] | None = None
) -> dict[str, dict[str, int]]:
    """Per set (RM-Bench per difficulty) and pair id, 1 when the judge was right, from the judgments of the
    sets an ``eval real`` folder holds (:data:`SETS`; its probes are not pairs). ``each``: called with every
    set's folder and judgments as they are read (a check of the judgments beside the count)."""

    found: dict[str, dict[str, int]] = {}
    for folder in sorted(
        eval_folder / name for name, _, _ in SETS if (eval_folder / name / "judgments.jsonl").exists()
    ):
        by_pair: dict[str, list] = {}
        judgments = read_records(folder / "judgments.jsonl", "judgment")
        if each is not None:
            each(folder, judgments)
        for j in judgments:
            by_pair.setdefault(j.probe_id, []).append(j)
        for pid, js in by_pair.items():
            if {j.view for j in js} not in ({"pair"}, set(ORDERS)):
                continue
            subset = str(js[0].meta.get("subset", "all"))
            name = folder.name
            if name == "rm-bench":
                name = f"rm-bench {subset.rsplit(' ', 1)[-1]}"
            found.setdefault(name, {})[pid] = int(all(j.verdict == j.correct for j in js))
    return found


def not_real(data: Path, manifest: dict[str, Any] | None) -> str:
    """Why ``data`` is not a ``build real`` folder (no manifest, or another builder's), with the folder
    meant where it is plain: the sources' folder to build from, or the build real folder above."""
    if manifest is None:
        found = "no manifest.json" if data.is_dir() else not_a_folder(data)
        hint = (
            f"; it holds the sources: build from them first (`biasaware build real --real {data} --out DATA`)"
            if (data / "alpaca_eval").is_dir()
            else f" (a real-text study's folder: its data is {data / 'data'})"
            if (data / "data" / "manifest.json").is_file()
            else ""
        )
    else:
        found = f"a folder written by `biasaware build {manifest['kind']}`"
        try:
            above = read_json(data.parent / "manifest.json", "manifest")
        except BiasAwareError:
            above = {"kind": None}
        hint = f" ({data.parent} is one)" if "kind" not in above else ""
    return f"{found}; --data is a folder written by `biasaware build real`{hint}"


@contextmanager
def unreadable_removes(out: Path, names: list[str]) -> Iterator[dict[str, str]]:
    """When nearly every view of a set is too long for the judge (:class:`Unreadable`), the sets this run
    began in ``out`` are removed: the corrected command (a larger --max-length, --truncation) has other
    settings, which what this run judged would refuse. Sets judged by earlier runs stay. The caller
    keeps the set it judges in the dict yielded (``"set"``), which the error names."""
    fresh = [name for name in names if not (out / name / "judgments.jsonl").exists()]
    at: dict[str, str] = {}
    try:
        yield at
    except Unreadable as error:
        for name in fresh:
            shutil.rmtree(out / name, ignore_errors=True)
        if "set" not in at:
            raise
        raise Unreadable(f"set {at['set']}: {error}; no set of this run is kept") from None


def sampled(file: Path, limit: int | None, seed: int) -> list[PreferencePair]:
    """The pairs of a set that ``eval general`` judges: all, or its seeded sample of ``limit``."""

    pairs = load_benchmark(str(file))
    return sample_pairs(pairs, limit, seed) if limit else pairs


def expected_sets(manifest: dict[str, Any]) -> set[str]:
    """The sets a ``build real`` folder holds by its manifest (each source given to it, with pairs)."""
    names = {n for n, src in manifest.get("sources", {}).items() if src.get("pairs")} - {"alpaca-eval"}
    keys = {"masterkey-null"} if manifest.get("split", {}).get("null_model_pairs") else set()
    return names | {"heldout"} | keys
