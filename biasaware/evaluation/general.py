"""General judge benchmarks: accuracy with the JudgeBiasBench protocol.

Generative judges see every pair in both orders (views ``chosen_first`` and ``chosen_second``); a
pair counts as correct only when both verdicts pick the chosen response (``pair_acc``). Also
reported: JudgeBench's accuracy (``judgebench_acc``: more of the two verdicts right than wrong, a tie or an
unreadable verdict neither; the report counts the pairs it calls right and ``pair_acc`` does not), single-order accuracy over all views (``single_acc``), the share of pairs whose two
verdicts pick the same response (``consistency``, both verdicts valid), the share given the same letter
in both orders, of the pairs with two readable verdicts (``same_letter``: picked by position), and invalid
verdicts.
Reward models score each pair once (view ``pair``): correct when the chosen response scores
strictly higher (``accuracy``; equal scores are wrong and counted as ``ties``).

**Verbosity** (the LLM judge pitfalls guide): over the decided views whose responses differ in length (words), how often
the judge picked the longer one (``longer_picked``), next to how often the longer one is the
better one in the data (``longer_is_better``): a judge that picks the longer response more often
than the data warrants leans on length; and Spearman's rho between the length difference (A
minus B) and the verdict (A: 1, B: 0).

The views are built by :func:`biasaware.evaluation.runner.general_jobs` and judged by
:func:`~biasaware.evaluation.runner.run_general_eval`; the summary is
:func:`biasaware.evaluation.summaries.summarize_general` and the report
:func:`biasaware.evaluation.reports.general_markdown`.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from biasaware.data.upstream import load_upstream
from biasaware.devices import ranks
from biasaware.errors import BiasAwareError, check_seed
from biasaware.evaluation.baselines import general_baselines
from biasaware.evaluation.reports import general_markdown
from biasaware.evaluation.resume import input_records, judge_or_rescore
from biasaware.evaluation.runner import run_general_eval
from biasaware.evaluation.summaries import sample_record, summarize_general, verdicts_agree
from biasaware.io import check_out_folder, read_records, write_json
from biasaware.records import PreferencePair

SAMPLE_RULE = (
    "each subset (meta.subset) its share of N in proportion to its size (largest remainders first, ties by name), "
    "drawn by random.Random(seed) over the subsets in name order; kept in benchmark order"
)


def sample_pairs(pairs: list[PreferencePair], limit: int, seed: int = 0) -> list[PreferencePair]:
    """A seeded sample of ``limit`` pairs, stratified by subset (``meta.subset``): each subset gets its
    share of ``limit`` in proportion to its size (largest remainders first, ties by subset name), drawn
    at random within the subset; the result keeps the benchmark's order. A benchmark sorted by subset
    is then measured on every subset, not on the first one."""

    if limit >= len(pairs):
        return list(pairs)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        groups[str(p.meta.get("subset", "all"))].append(i)
    quotas = {g: limit * len(ix) / len(pairs) for g, ix in groups.items()}
    take = {g: int(q) for g, q in quotas.items()}
    for g in sorted(groups, key=lambda g: (-(quotas[g] - take[g]), g))[: limit - sum(take.values())]:
        take[g] += 1
    rng = random.Random(seed)
    chosen = sorted(i for g in sorted(groups) for i in rng.sample(groups[g], take[g]))
    return [pairs[i] for i in chosen]


def write_general_reports(judgments_path: Path, out: Path, benchmark: str, extra: dict | None = None) -> dict:
    judgments = read_records(judgments_path, "judgment")
    if "run" in (extra or {}):  # the judge's rule known: a rescore of edited verdicts is refused
        verdicts_agree(out, judgments, extra["run"].get("spec"))
    summary = summarize_general(judgments)
    summary.update({"benchmark": benchmark, **(extra or {})})
    summary["judgments"] = len(judgments)  # every line: a rescore of a file that lost one is refused
    write_json(out / "summary.json", summary)
    (out / "report.md").write_text(general_markdown(summary, benchmark))
    return summary


def evaluate_general(
    spec,
    benchmark: str | None,
    out: str | Path,
    *,
    split: str | None = None,
    limit: int | None = None,
    rescore: bool = False,
    seed: int = 0,
    judge=None,
) -> dict[str, Any] | None:
    """``eval general``: judge a benchmark's pairs (both orders for generative judges) into ``out``
    and write the reports; process 0 of a multi-process launch returns the summary. ``limit``: a
    seeded sample of that many pairs, stratified by subset (:func:`sample_pairs`). ``judge``: one already
    loaded (several benchmarks judged by one model)."""

    check_seed(seed, "seed")
    out = check_out_folder(out)  # a file, or a place it cannot write: named before the model loads
    if benchmark and not rescore and Path(benchmark).exists() and out.resolve() == Path(benchmark).resolve():
        raise BiasAwareError(
            f"--out {out} is the benchmark {benchmark}: judgments there would break it; write elsewhere"
        )
    if rescore and (out / "summary.json").exists():  # the judgments' benchmark, whatever was named
        benchmark = json.loads((out / "summary.json").read_text()).get("benchmark") or benchmark

    seen: list[list[PreferencePair]] = []

    left_out: list[str] = []
    skipped: list[str] = []

    def pairs():
        # a released set's malformed rows (PandaLM's responses stored as booleans) are skipped, each named
        loaded = load_upstream(benchmark, split, bad_rows="skip")
        line = loaded.left_out_line()
        skipped.extend(loaded.skipped)
        said = [line] if line else []
        if loaded.skipped:
            said.append(f"{len(loaded.skipped)} malformed row(s) skipped, the first: {loaded.skipped[0]}")
        if line:  # said, and kept in the summary: never dropped without a word
            left_out.append(line)
        if ranks().main:
            for words in said:
                print(f"[general] {benchmark}: {words}", flush=True)
        seen.append(sample_pairs(loaded.pairs, limit, seed) if limit else loaded.pairs)
        return seen[-1]

    extra = judge_or_rescore(
        spec, out, rescore, pairs, run_general_eval, target=benchmark, command="eval general", judge=judge
    )
    if not ranks().main:
        return None
    if seen:
        extra["cue_baselines"] = general_baselines(seen[-1])  # the cue-only heuristics on the same pairs
        if left_out:
            extra["left_out"] = left_out[0]
        if skipped:
            extra["skipped_rows"] = skipped
        if limit:  # what --limit drew, so the sample can be named and drawn again
            extra["sample"] = sample_record(limit, seed, "pairs, stratified by subset", SAMPLE_RULE, seen[-1])
    else:
        extra.update(input_records(out))
    return write_general_reports(out / "judgments.jsonl", out, str(benchmark or "benchmark"), extra)
