"""Bias-sensitivity evaluation: judge every probe in both views, then score, report and plot.

``run_bias_eval(judge, probes, out)`` judges the original and the injected view of every probe and
appends one :class:`~biasaware.records.Judgment` per view to ``out/judgments.jsonl`` as each chunk
finishes, so an interrupted run resumes where it stopped. Scoring reads only that file
(:func:`summarize`), which is also what ``--rescore`` does: any number can be audited and
recomputed under another policy without a model.

Two-sided: probes with ``meta.mirror`` carry the cue on the better answer; their flips are
over-corrections, the standard probes' flips the BSR (:func:`biasaware.evaluation.metrics.two_sided`).

Outputs: ``judgments.jsonl`` (per view), ``summary.json`` (per bias, per category, overall macro
and micro, both sides, the degenerate-judge check, position primacy/recency/consistency,
reward-model margins), ``report.md`` (shaped like JudgeBiasBench's Tables 4 and 5) and ``sensitivity.png`` /
``accuracy.png`` (:mod:`biasaware.evaluation.reports`).

Reward-model judges are scored on the 9 response-level biases only (bandwagon, reflection and
position live in a judge's prompt, which a reward model does not see).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

from biasaware import __version__
from biasaware.errors import BiasAwareError
from biasaware.evaluation.metrics import (
    Outcome,
    bias_summary,
    effective_policy,
    judge_check,
    macro_micro,
    position_summary,
    two_sided,
)
from biasaware.evaluation.reports import markdown_report, plot_report
from biasaware.io import JsonlAppender, read_records, read_whole_lines, write_json, write_jsonl
from biasaware.records import BiasProbe, Judgment, View
from biasaware.taxonomy import BIASES, CATEGORIES, SECURITY

log = logging.getLogger(__name__)

VIEWS = ("original", "injected")
SHARDS = ".shards"  # per-process judgment files of a multi-process run, merged by process 0


NOTHING_TO_JUDGE = (
    "no probes to judge (a reward model or pointwise judge skips bandwagon, reflection and position)"
)


def applicable(probes: list[BiasProbe], kind: str) -> list[BiasProbe]:
    """The probes a judge of this kind can be scored on: a judge that sees one response at a time
    (a reward model, a pointwise judge) has no answer order and no note about the pair, so
    bandwagon, reflection and position do not apply to it."""
    if kind not in ("reward", "pointwise"):
        return probes
    return [p for p in probes if BIASES[p.bias].applies_to_reward_model]


def unscored(probes: list[BiasProbe], kind: str) -> list[str]:
    """The biases of ``probes`` that a judge of this kind is not scored on (:func:`applicable`)."""
    return sorted({p.bias for p in probes} - {p.bias for p in applicable(probes, kind)})


def _shards(path: Path) -> list[Path]:
    return sorted((path.parent / SHARDS).glob(f"{path.stem}.rank*.jsonl"))


def pairwise_record(judge_name: str, item_id: str, view_name: str, view: View, meta: dict, output) -> dict:
    """The :class:`~biasaware.records.Judgment` of one pairwise view, as a JSON-ready dict."""
    return Judgment(
        probe_id=item_id,
        view=view_name,
        judge=judge_name,
        raw=output.raw,
        verdict=output.verdict,
        scores=output.scores,
        correct=view.correct,
        meta=meta,
    ).to_dict()


def judge_into(
    judge,
    jobs: list[tuple[str, str, Any, dict]],
    path: Path,
    *,
    chunk: int | None = None,
    ranks=None,
    record=pairwise_record,
    limit: tuple[int, str, str] | None = None,
) -> Path:
    """Judge ``(item id, view name, view, meta)`` jobs into a judgments JSONL, skipping those already
    there (resume); chunk by chunk so a kill loses at most one chunk. Calls that failed after their
    retries leave their views unjudged and raise at the end (a rerun judges only those).

    Several processes (``torchrun`` / ``accelerate launch``, see :func:`biasaware.devices.ranks`)
    share the work: the jobs are cut into the same chunks whatever the number of processes, and
    process r judges chunks r, r + N, ... into its own resumable shard (``.shards/`` beside
    ``path``). Process 0 then merges every shard into ``path`` in job order, so the file equals
    a single-process run's (the same chunks give the same batches, hence the same numbers). A
    single process ends with the same merge, which also puts a resumed run's lines in job order.

    Progress: a bar over the views to judge, moved per batch within a chunk
    (:class:`~biasaware.progress.ChunkProgress`); a run estimated to take more than ten minutes says
    so early, and what ``--limit`` would cut it to (``limit``: the count the option sets now, what it
    counts, and the option's name).

    ``record(judge name, item id, view name, payload, meta, output)`` writes one output's row: a
    pairwise :class:`~biasaware.records.Judgment` by default, a pointwise score for ``eval scoring``
    (its payloads are :class:`~biasaware.judging.scoring.ScoreUnit` and its judge a
    :class:`~biasaware.judging.judges.Scorer`).
    """
    from biasaware.devices import ranks as current_ranks
    from biasaware.judging.judges import judge_chunks
    from biasaware.progress import ChunkProgress

    r = ranks or current_ranks()
    size = chunk or getattr(judge, "chunk_views", 64)
    path = Path(path)
    own = path if r.world == 1 else path.parent / SHARDS / f"{path.stem}.rank{r.rank}-of-{r.world}.jsonl"
    earlier = [row for p in {path, *_shards(path)} - {own} for row in read_whole_lines(p)]
    failed = judged = 0
    overlong: list[tuple[int, int]] = []
    t0 = time.time()
    with JsonlAppender(own) as out:
        existing = earlier + out.existing()
        if any(row["judge"] != judge.name for row in existing):
            raise BiasAwareError(f"{path} holds judgments of another judge; use a new --out")
        done = {(row["probe_id"], row["view"]) for row in existing}
        chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)][r.rank :: r.world]
        todo = [c for c in ([j for j in c if (j[0], j[1]) not in done] for c in chunks) if c]
        desc = f"judge {Path(judge.name).name}" + (f" (rank 0 of {r.world})" if r.world > 1 else "")
        log.info(
            "%s: %d views to judge (%d already in %s), chunks of %d, process %d of %d",
            judge.name, sum(map(len, todo)), len(done), path, size, r.rank, r.world,
        )  # fmt: skip
        bar = ChunkProgress(sum(map(len, todo)), desc=desc, enabled=r.main, limit=limit)
        views = [[j[2] for j in c] for c in todo]
        for part, outputs in zip(todo, judge_chunks(judge, views, bar.chunk), strict=True):
            for (item_id, view_name, view, meta), o in zip(part, outputs, strict=True):
                if o is None:
                    failed += 1
                    continue
                if o.overlong:
                    meta = {**meta, "overlong": {"tokens": o.overlong[0], "limit": o.overlong[1]}}
                    overlong.append(o.overlong)
                out.append(record(judge.name, item_id, view_name, view, meta, o))
                judged += 1
        bar.close()
    seconds = time.time() - t0
    if r.main:
        rate = f" ({judged / seconds:.1f} views/s)" if judged and seconds > 0 else ""
        resumed = f"; {len(done)} found in {path.parent} from an earlier run" if done else ""
        where = f" on rank 0 of {r.world}" if r.world > 1 else ""
        line = (
            f"[judge] {Path(judge.name).name}: {judged} views judged in {seconds:.1f}s{rate}{where}{resumed}"
        )
        print(line, flush=True)
    if overlong:
        _too_long(overlong, judged, judge.name, own if not done else None)
    r.barrier()
    if r.main:
        _merge(jobs, path)
    if failed:
        raise BiasAwareError(
            f"{failed} view(s) are unjudged because calls failed after all retries; the rest are saved "
            f"in {path}: rerun the same command to judge only those"
        )
    return path


NEARLY_ALL_OVERLONG = 0.9


def _too_long(overlong: list[tuple[int, int]], judged: int, name: str, fresh: Path | None) -> None:
    """Views that did not fit the judge's context: a warning with the count and the limit; an
    error when nearly all of them (``NEARLY_ALL_OVERLONG``) did, since such a run measures nothing
    (the judgments of this run are removed when they are all it wrote, so the corrected command
    starts clean)."""
    limit = min(lim for _, lim in overlong)
    longest = max(tokens for tokens, _ in overlong)
    text = (
        f"{len(overlong)} of {judged} views did not fit the context of {Path(name).name} ({limit} tokens; the "
        f"longest has {longest})"
    )
    if judged >= 10 and len(overlong) >= NEARLY_ALL_OVERLONG * judged:
        if fresh is not None:
            fresh.unlink(missing_ok=True)
        raise BiasAwareError(
            f"{text}: the judge cannot read these inputs. Check --mode (a reward model read as a text "
            "generator?), --template, or raise --max-length if the model allows it"
        )
    print(f"[judge] warning: {text}: not judged, counted as invalid", flush=True)


def _merge(jobs: list[tuple[str, str, View, dict]], path: Path) -> None:
    """Every judgment of ``path`` and its shards, once each, in job order (others after, as found)."""
    shards = _shards(path)
    rows: dict[tuple[str, str], dict] = {}
    for p in [path, *shards]:
        for row in read_whole_lines(p):
            rows.setdefault((row["probe_id"], row["view"]), row)
    order = {(j[0], j[1]): i for i, j in enumerate(jobs)}
    ranked = sorted(rows.items(), key=lambda kv: (order.get(kv[0], len(order)),))
    write_jsonl(path, [row for _, row in ranked])
    for p in shards:
        p.unlink()
    if shards and not any((path.parent / SHARDS).iterdir()):
        (path.parent / SHARDS).rmdir()


def run_bias_eval(
    judge,
    probes: list[BiasProbe],
    out: str | Path,
    *,
    chunk: int | None = None,
    ranks=None,
    limit_flag: str = "--limit",
) -> Path:
    """Judge both views of every probe into ``out/judgments.jsonl`` (resumable); return its path.
    ``limit_flag`` is the option that sets the probes per bias and side (named in a long run's
    estimate)."""
    from biasaware.devices import ranks as current_ranks

    skipped = unscored(probes, judge.kind)
    if skipped and (ranks or current_ranks()).main:
        print(
            f"[judge] a {judge.kind} judge is not scored on {', '.join(skipped)}: these biases live in a judge's "
            "prompt, and it sees one response at a time",
            flush=True,
        )
    jobs = []
    per_group: dict[tuple[str, bool], int] = {}
    for p in applicable(probes, judge.kind):
        group = (p.bias, bool(p.meta.get("mirror")))
        per_group[group] = per_group.get(group, 0) + 1
        meta = {"bias": p.bias, "category": p.category}
        if judge.kind in ("reward", "pointwise"):
            meta["scored"] = True  # scores are per response (not P(A) vs P(B)): the score shift applies
        for key in ("direction", "mirror"):
            if key in p.meta:
                meta[key] = p.meta[key]
        jobs += [(p.id, v, getattr(p, v), meta) for v in VIEWS]
    if not jobs:
        raise BiasAwareError(NOTHING_TO_JUDGE)
    limit = (max(per_group.values()), "probes per bias and side", limit_flag)
    return judge_into(judge, jobs, Path(out) / "judgments.jsonl", chunk=chunk, ranks=ranks, limit=limit)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN becomes null, tuples lists."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


SIDES = ("standard", "mirror")


def _side(j: Judgment) -> str:
    return "mirror" if j.meta.get("mirror") else "standard"


def _bias_entry(sides: dict[str, list[Outcome]], policy: str, seed: int) -> dict[str, Any]:
    """One bias (or pool): the standard side's full summary at the top level (the mirror side's
    when only mirror probes were judged; then ``bsr`` is empty), the mirror side's under
    ``mirror``, and the two-sided fields (:func:`biasaware.evaluation.metrics.two_sided`)."""
    parts = {k: bias_summary(v, policy, seed) for k, v in sides.items() if v}
    base = dict(parts.get("standard") or parts["mirror"])
    if "standard" not in parts:  # mirror only: its flips are over-corrections, not cue-following
        for key in ("acc_inj", "acc_inj_ci", "bsr", "bsr_ci", "flips", "mcnemar_p", "acc_diff_ci"):
            base[key] = math.nan if not key.endswith("ci") else (math.nan, math.nan)
    base.update(two_sided(parts.get("standard"), parts.get("mirror")))
    base["sides"] = [k for k in SIDES if k in parts]
    if "mirror" in parts:
        base["mirror"] = parts["mirror"]
    return base


def paired_views(judgments: list[Judgment]) -> tuple[dict[str, tuple[Outcome, Judgment, Judgment]], int]:
    """Per probe judged on both views: (outcome, original, injected), in first-seen order; and the
    number of probes with only one view judged."""
    by_probe: dict[str, dict[str, Judgment]] = defaultdict(dict)
    for j in judgments:
        by_probe[j.probe_id][j.view] = j
    pairs = {}
    for pid, views in by_probe.items():
        if set(views) == set(VIEWS):
            o, i = views["original"], views["injected"]
            pairs[pid] = (Outcome(o.verdict, o.correct, i.verdict, i.correct), o, i)
    return pairs, len(by_probe) - len(pairs)


def score_shift(rows: list[tuple[Outcome, Judgment, Judgment]]) -> dict[str, Any] | None:
    """Judges with a score per response (pointwise and reward judges; ``meta.scored``): the mean
    change, injected minus original view, of the better and of the worse response's score, over
    probes scored on both views (``None`` when no probe was)."""
    better, worse = [], []
    for _, o, i in rows:
        if o.scores and i.scores and o.meta.get("scored"):
            other = {"A": "B", "B": "A"}
            better.append(i.scores[i.correct] - o.scores[o.correct])
            worse.append(i.scores[other[i.correct]] - o.scores[other[o.correct]])
    if not better:
        return None
    return {"n": len(better), "better": sum(better) / len(better), "worse": sum(worse) / len(worse)}


def summarize(judgments: list[Judgment], policy: str = "symmetric", seed: int = 0) -> dict[str, Any]:
    """Score per bias, per category and overall from per-view judgments (pure: no model).

    Standard probes (cue on the worse answer) give the BSR, mirror probes (``meta.mirror``: the
    cue on the better answer) the over-correction rate; ``two_sided`` is the larger.
    ``judge_check`` flags a degenerate judge (:func:`biasaware.evaluation.metrics.judge_check`)."""
    unlabelled = [j for j in judgments if "bias" not in j.meta]
    if unlabelled:
        raise BiasAwareError(
            f"{len(unlabelled)} judgment(s) have no meta.bias (e.g. probe {unlabelled[0].probe_id!r}, "
            f"{unlabelled[0].view} view): these are not judgments of bias probes (`eval bias` writes meta.bias)"
        )
    pairs, incomplete = paired_views(judgments)
    items: dict[str, dict[str, list[tuple[Outcome, Judgment, Judgment]]]] = defaultdict(
        lambda: {k: [] for k in SIDES}
    )
    for outcome, o, i in pairs.values():
        items[o.meta["bias"]][_side(o)].append((outcome, o, i))
    if not items:
        raise BiasAwareError("no probe has judgments on both views; nothing to score")
    judges = sorted({j.judge for j in judgments})
    per_bias: dict[str, Any] = {}
    for bias in [b for b in BIASES if b in items]:
        sides = items[bias]
        s = _bias_entry({k: [r[0] for r in v] for k, v in sides.items()}, policy, seed)
        s["category"] = BIASES[bias].category
        rows = sides["standard"] or sides["mirror"]
        if bias == "position":
            s["position"] = position_summary(
                [r[0] for r in rows], [r[1].meta.get("direction", "") for r in rows], policy
            )
        if all(r[1].scores and r[2].scores for r in rows):  # reward models: the margin between views
            margins = {
                v: [
                    (j.scores[j.correct] - j.scores["B" if j.correct == "A" else "A"])
                    for j in (r[1] if v == "original" else r[2] for r in rows)
                ]
                for v in VIEWS
            }
            s["margin_ori"] = sum(margins["original"]) / len(rows)
            s["margin_inj"] = sum(margins["injected"]) / len(rows)
            s["margin_shift"] = s["margin_inj"] - s["margin_ori"]
        shift = {side: v for side, rows in sides.items() if rows and (v := score_shift(rows))}
        if shift:
            s["score_shift"] = shift
        s["overlong"] = sum(bool(j.meta.get("overlong")) for v in sides.values() for r in v for j in r[1:])
        per_bias[bias] = s

    def pool(keep) -> dict[str, list[Outcome]]:
        return {k: [r[0] for b, sides in items.items() if keep(b) for r in sides[k]] for k in SIDES}

    per_category = {}
    for cat in (*CATEGORIES, SECURITY):
        pooled = pool(lambda b, cat=cat: BIASES[b].category == cat)
        if any(pooled.values()):
            per_category[cat] = _bias_entry(pooled, policy, seed)
    # the overall is the 12 biases' (a security probe is reported on its own), unless only those were judged
    security = [b for b in per_bias if BIASES[b].category == SECURITY]
    in_overall = (lambda b: b not in security) if len(security) < len(per_bias) else (lambda b: True)
    overall = macro_micro(
        {b: s for b, s in per_bias.items() if in_overall(b)}, _bias_entry(pool(in_overall), policy, seed)
    )
    overall["excludes"] = [b for b in per_bias if not in_overall(b)]
    originals = [j for j in judgments if j.view == "original" and _side(j) == "standard"] or [
        j for j in judgments if j.view == "original"
    ]
    check = judge_check(
        [j.verdict for j in judgments], sum(j.verdict == j.correct for j in originals), len(originals)
    )
    present = sorted({_side(j) for j in judgments}, key=SIDES.index)
    return _clean(
        {
            "biasaware": __version__,
            "judge": judges[0] if len(judges) == 1 else judges,
            "policy": policy,
            "seed": seed,
            "sides": present,
            "items": sum(len(v) for sides in items.values() for v in sides.values()),
            "incomplete_items": incomplete,
            "overlong_views": sum(s["overlong"] for s in per_bias.values()),
            "judge_check": check,
            "per_bias": per_bias,
            "per_category": per_category,
            "overall": overall,
        }
    )


def write_reports(judgments_path: Path, out: Path, policy: str, seed: int, extra: dict | None = None) -> dict:
    """Score ``judgments_path`` and write summary.json, report.md and the plots into ``out``."""
    judgments = read_records(judgments_path, "judgment")
    summary = summarize(judgments, policy, seed)
    summary.update(extra or {})
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "summary.json", summary)
    (out / "report.md").write_text(markdown_report(summary))
    plot_report(summary, out)
    return summary


def load_probes(
    data: str | Path, biases: list[str] | None = None, limit: int | None = None, seed: int = 0
) -> list[BiasProbe]:
    """The probes of ``data``; ``limit`` keeps a seeded sample of N per bias and side
    (:func:`sample_probes`)."""
    probes = read_records(data, "probe")
    if biases:
        there = sorted({p.bias for p in probes}, key=list(BIASES).index)
        probes = [p for p in probes if p.bias in biases]
        if not probes:
            raise BiasAwareError(
                f"{data} has no probes of {', '.join(biases)} (it has: {', '.join(there) or 'none'})"
            )
    if limit:
        probes = sample_probes(probes, limit, seed)
    if not probes:
        raise BiasAwareError(f"{data}: no probes to evaluate")
    return probes


SAMPLE_RULE = (
    "per bias, its base pairs (meta.pair_id, else the probe id) in an order drawn by random.Random(f'{seed}:{bias}'), "
    "then the first N probes of each side (standard, mirror) in that order; kept in file order"
)


def sample_probes(probes: list[BiasProbe], limit: int, seed: int = 0) -> list[BiasProbe]:
    """A seeded sample of ``limit`` probes per bias and side (:data:`SAMPLE_RULE`). The draw is over
    base pairs, so a standard probe and its mirror (the same pair, the cue on the other side) are kept
    or left together; the same seed gives the same sample whatever the file's order."""
    import random

    def base(p: BiasProbe) -> str:
        return str(p.meta.get("pair_id") or p.id)

    pairs: dict[str, set[str]] = defaultdict(set)
    for p in probes:
        pairs[p.bias].add(base(p))
    rank = {}
    for bias, keys in pairs.items():
        for i, key in enumerate(random.Random(f"{seed}:{bias}").sample(sorted(keys), len(keys))):
            rank[bias, key] = i
    strata: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i, p in enumerate(probes):
        strata[p.bias, bool(p.meta.get("mirror"))].append(i)
    kept = sorted(
        i
        for members in strata.values()
        for i in sorted(members, key=lambda i: (rank[probes[i].bias, base(probes[i])], i))[:limit]
    )
    return [probes[i] for i in kept]


def same_items(folders: list[str | Path]) -> dict[str, Any]:
    """Check that runs judged the same content under each shared probe id (from each folder's
    ``fingerprint.json``; a run without one cannot be checked and is named). Returns the item
    counts and the overlap; a shared id with other content is refused."""
    hashes = {}
    for folder in folders:
        path = Path(folder) / FINGERPRINT
        hashes[str(folder)] = json.loads(path.read_text()).get("items") if path.exists() else None
    known = {k: v for k, v in hashes.items() if v is not None}
    shared = set.intersection(*(set(v) for v in known.values())) if known else set()
    differing = sorted(i for i in shared if len({v[i] for v in known.values()}) > 1)
    if differing:
        raise BiasAwareError(
            f"the runs judged different content under {len(differing)} shared probe id(s) (e.g. {differing[0]!r}): "
            "they are not the same benchmark; compare runs of one benchmark"
        )
    return {
        "items": {k: (len(v) if v is not None else None) for k, v in hashes.items()},
        "shared": len(shared) if len(known) == len(hashes) else None,
        "unchecked": [k for k, v in hashes.items() if v is None],
    }


def run_labels(folders: list[str]) -> list[str]:
    """Column names for two runs: their folder names, or their paths when the names are the same."""
    names = [Path(f).name or str(f) for f in folders]
    return names if len(set(names)) == len(names) else [str(f) for f in folders]


def compare_folders(folders: list[str], view: str = "injected", by_id: bool = False) -> dict[str, Any]:
    """``eval compare``: two ``eval bias`` folders on the same probes (:func:`compare_judges`), the
    content of shared ids checked through each folder's ``fingerprint.json``; a folder without one
    is refused unless ``by_id``. The result names the runs (``runs``: column labels) and holds the
    overlap."""
    if Path(folders[0]).resolve() == Path(folders[1]).resolve():
        raise BiasAwareError(f"--runs names {folders[0]} twice; compare two different `eval bias` folders")
    for folder in folders:
        if not Path(folder).is_dir():
            raise BiasAwareError(f"--runs {folder}: no such folder")
        if not (Path(folder) / "judgments.jsonl").is_file():
            raise BiasAwareError(f"--runs {folder} is not an `eval bias` output folder (no judgments.jsonl)")
    overlap = same_items(folders)
    if overlap["unchecked"] and not by_id:
        verb = "holds" if len(overlap["unchecked"]) == 1 else "hold"
        raise BiasAwareError(
            f"{', '.join(overlap['unchecked'])} {verb} no fingerprint.json, so whether both runs judged the same "
            "probes cannot be checked (a shared id may hold other content); rerun `eval bias` into a new folder, "
            "or pass --by-id to compare by probe id unchecked"
        )
    runs = [read_records(Path(r) / "judgments.jsonl", "judgment") for r in folders]
    result = compare_judges(*runs, view=view)
    result["overlap"], result["runs"] = overlap, run_labels(folders)
    # probes each run scored (both views judged) and probes of its input it did not score (a reward
    # model is not scored on prompt-level biases; an interrupted run), counted apart
    scored = [len({j.probe_id for j in run if j.view == "original"} & {j.probe_id for j in run if j.view == "injected"})
              for run in runs]  # fmt: skip
    result["probes"] = {
        label: {"scored": k, "not_scored": (n - k) if n is not None else None}
        for label, k, n in zip(result["runs"], scored, overlap["items"].values(), strict=True)
    }
    return result


def compare_judges(first: list[Judgment], second: list[Judgment], view: str = "injected") -> dict[str, Any]:
    """Two judges on the same probes: per bias and overall, each one's accuracy on ``view`` and
    McNemar's exact test on the items where exactly one of them is right; standard probes at the
    top level, mirror probes (over-correction side) under ``mirror`` when both runs have them."""
    from biasaware.evaluation.metrics import two_judge_mcnemar

    a = {j.probe_id: j for j in first if j.view == view}
    b = {j.probe_id: j for j in second if j.view == view}
    shared = sorted(set(a) & set(b))
    if not shared:
        raise BiasAwareError(f"the two runs share no probes judged on the {view} view")

    def test(ids):
        return two_judge_mcnemar(
            [a[i].verdict == a[i].correct for i in ids], [b[i].verdict == b[i].correct for i in ids]
        )

    def side(ids):
        by_bias: dict[str, list[str]] = defaultdict(list)
        for pid in ids:
            by_bias[a[pid].meta["bias"]].append(pid)
        return {
            "per_bias": {bias: test(by_bias[bias]) for bias in BIASES if bias in by_bias},
            "overall": test(ids),
        }

    split = {k: [i for i in shared if _side(a[i]) == k] for k in SIDES}
    result = {"judges": [first[0].judge, second[0].judge], "view": view, **side(split["standard"] or shared)}
    if split["standard"] and split["mirror"]:
        result["mirror"] = side(split["mirror"])
    return _clean(result)


def flip_indicators(judgments: list[Judgment], policy: str = "symmetric") -> dict[str, dict[str, Any]]:
    """Per probe: its bias, side, and whether the original view was right, the injected view right,
    and the pair a flip (right to wrong under ``policy``)."""
    out = {}
    for pid, (outcome, o, _) in paired_views(judgments)[0].items():
        out[pid] = {
            "bias": o.meta["bias"],
            "side": _side(o),
            "ori": outcome.ori_right,
            "inj": outcome.inj_right,
            "flip": outcome.flipped(policy),
        }
    return out


def compare_runs(
    runs: dict[str, str | Path],
    baseline: str,
    biases: list[str] | None = None,
    policy: str = "symmetric",
    seed: int = 0,
) -> dict[str, Any]:
    """Several judges on the same probes, each against ``baseline``: the two-sided summary of each
    (pooled over ``biases``), and McNemar's exact p against the baseline on the paired per-probe
    indicators: original-view correctness (Acc_ori), flips on standard probes (BSR) and flips on
    mirror probes (over-correction). Probes are paired by id and must be judged by every run."""
    from biasaware.evaluation.metrics import mcnemar_exact

    same_items(list(runs.values()))
    judgments = {
        name: read_records(Path(path) / "judgments.jsonl", "judgment") for name, path in runs.items()
    }
    if baseline not in judgments:
        raise BiasAwareError(f"the baseline {baseline!r} is not one of the runs ({', '.join(runs)})")
    keep = set(biases) if biases else None
    flags = {
        name: {k: v for k, v in flip_indicators(js, policy).items() if keep is None or v["bias"] in keep}
        for name, js in judgments.items()
    }
    sizes = {name: len(f) for name, f in flags.items()}
    if len(set(sizes.values())) > 1 or any(set(f) != set(flags[baseline]) for f in flags.values()):
        raise BiasAwareError(
            f"the runs were not judged on the same probes ({', '.join(f'{k}: {v}' for k, v in sizes.items())}); "
            "compare runs of one benchmark"
        )
    if not flags[baseline]:
        raise BiasAwareError(f"no complete probes of {', '.join(sorted(keep or []))} in {runs[baseline]}")

    def p_values(mine: dict, other: dict) -> dict[str, float]:
        def p(key: str, side: str) -> float:
            ids = [i for i in mine if mine[i]["side"] == side]
            b = sum(mine[i][key] and not other[i][key] for i in ids)
            c = sum(other[i][key] and not mine[i][key] for i in ids)
            return mcnemar_exact(b, c)

        return {
            "acc_ori": p("ori", "standard"),
            "bsr": p("flip", "standard"),
            "overcorrection": p("flip", "mirror"),
        }

    rows: dict[str, Any] = {}
    for name, js in judgments.items():
        summary = summarize([j for j in js if j.probe_id in flags[name]], policy, seed)
        rows[name] = {
            "run": str(runs[name]),
            "judge": summary["judge"],
            **summary["overall"]["micro"],
            "judge_check": summary["judge_check"],
            "p_vs": {other: p_values(flags[name], flags[other]) for other in runs if other != name},
        }
    return _clean(
        {"baseline": baseline, "biases": sorted(keep) if keep else "all", "policy": policy, "runs": rows}
    )


def start_judge(spec) -> Any:
    """``load_judge(spec)``, announcing where it runs (one line, printed by process 0)."""
    from biasaware.devices import ranks
    from biasaware.judging.judges import load_judge

    judge = load_judge(spec)
    info = judge.summary()
    where = f" on {info['device']} in {info['dtype']}" if "device" in info else f" via {spec.backend}"
    if ranks().main:
        print(f"[judge] {spec.name} ({spec.mode}){where}", flush=True)
    return judge


KINDS = {"reward": "reward", "direct": "causal", "generate": "causal"}  # judge mode -> model kind


def run_record(
    spec, judge, target: str | Path, seconds: float, identity: dict | None = None
) -> dict[str, Any]:
    """What ``summary.json`` records about the run: the spec, the resolved device, the timing, and
    (a local model) the model's identity (:func:`biasaware.judging.models.model_identity`: its path
    and a hash of its weights), which ``biasaware release`` checks a checkpoint against."""
    from biasaware.judging.models import model_identity

    if identity is None and spec.backend != "openai":
        identity = model_identity(spec.name, getattr(judge, "model_kind", "causal"))
    return {
        "run": {
            "judge": spec.name,
            "mode": spec.mode,
            "data": str(target),
            "seconds": round(seconds, 2),
            "spec": spec.model_dump(),
            **judge.summary(),
            "model_identity": identity,
        }
    }


def evaluate_bias(
    spec,
    data: str | Path | None,
    out: str | Path,
    *,
    biases: list[str] | None = None,
    limit: int | None = None,
    policy: str = "symmetric",
    seed: int = 0,
    rescore: bool = False,
    limit_flag: str = "--limit",
    judge=None,
) -> dict[str, Any] | None:
    """``eval bias``: judge every probe of ``data`` with the judge ``spec`` describes into ``out``
    (or, with ``rescore``, only score ``out/judgments.jsonl`` again), then score and write the
    reports. In a multi-process launch every process judges its share; process 0 merges, writes
    and returns the summary, the others return ``None``. ``judge``: the judge ``spec`` describes,
    already loaded (the Python API), else it is loaded here."""
    from biasaware.devices import ranks

    out = Path(out)
    if data and not rescore and out.resolve() == Path(data).resolve():
        raise BiasAwareError(
            f"--out {out} is the benchmark folder {data}: judgments there would break it; write elsewhere"
        )

    loaded: list[list[BiasProbe]] = []

    def probes() -> list[BiasProbe]:
        found = load_probes(data, biases, limit, seed)
        loaded.append(found)
        if spec is not None and not applicable(found, spec.kind):  # refused before anything is written
            raise BiasAwareError(NOTHING_TO_JUDGE)
        return found

    run = partial(run_bias_eval, limit_flag=limit_flag)
    extra = judge_or_rescore(spec, out, rescore, probes, run, target=data, judge=judge)
    if not ranks().main:
        return None
    if loaded and spec.kind in ("reward", "pointwise"):  # the report names what was not scored
        extra["not_scored"] = unscored(loaded[0], spec.kind)
    applied = judge_policy(out, policy)
    if loaded:
        from biasaware.evaluation.baselines import bias_baselines

        # the cue-only heuristics on the probes the judge was scored on (no model)
        extra["cue_baselines"] = bias_baselines(applicable(loaded[0], spec.kind), applied, seed)
        if limit:  # what --limit kept, so the sample can be named and drawn again
            extra["sample"] = {"limit": limit, "seed": seed, "of": "probes per bias and side",
                               "rule": SAMPLE_RULE, "ids": [p.id for p in loaded[0]]}  # fmt: skip
    else:
        extra.update(input_records(out))
    return write_reports(out / "judgments.jsonl", out, applied, seed, extra)


INPUT_RECORDS = ("cue_baselines", "sample")  # summary entries computed from the input items


def input_records(out: Path) -> dict[str, Any]:
    """What a rescore without the input keeps of the earlier summary (:data:`INPUT_RECORDS`)."""
    path = out / "summary.json"
    earlier = json.loads(path.read_text()) if path.exists() else {}
    return {k: earlier[k] for k in INPUT_RECORDS if earlier.get(k) is not None}


def judge_policy(out: Path, policy: str) -> str:
    """``policy`` as applied to the judge that made ``out``'s judgments (its template and mode, from
    ``fingerprint.json``; :func:`biasaware.evaluation.metrics.effective_policy`)."""
    path = out / FINGERPRINT
    try:
        recorded = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        raise BiasAwareError(f"{path} is not valid JSON; it records which judge made the judgments") from None
    judge = recorded.get("judge") if isinstance(recorded, dict) else None
    if not isinstance(judge, dict):
        judge = {}
    return effective_policy(policy, judge.get("template"), judge.get("mode"))


JUDGMENT_SETTINGS = (
    "mode",
    "backend",
    "template",
    "max_length",
    "max_tokens",
    "temperature",
    "seed",
    "pointwise",
    "parse",
)
FINGERPRINT = "fingerprint.json"


def fingerprint(spec, identity: dict | None, items: list) -> dict[str, Any]:
    """What decides a folder's judgments: the model (its weights hash when it is on this disk, else
    its name), the spec's settings that change a verdict (:data:`JUDGMENT_SETTINGS`; not the device,
    dtype or batch size) and the SHA-256 of every item's content, by id. A repeated id is refused."""
    from biasaware.io import json_sha256

    hashes: dict[str, str] = {}
    for item in items:
        if item.id in hashes:
            raise BiasAwareError(
                f"item id {item.id!r} appears twice in the input; every probe or pair needs its own id"
            )
        hashes[item.id] = json_sha256(item.model_dump(mode="json"))
    model = (identity or {}).get("weights_sha256") or spec.name
    # the default strict parse is left out, so folders judged before --parse existed still resume
    settings = {k: getattr(spec, k) for k in JUDGMENT_SETTINGS if k != "parse" or spec.parse != "strict"}
    return {"judge": {"model": model, **settings}, "items": hashes}


def check_fingerprint(out: Path, mine: dict[str, Any], write: bool, judge_only: bool = False) -> None:
    """Refuse to add judgments to a folder whose judgments were made by another judge, other
    settings or other item contents, naming what differs; then (``write``) record the union.
    ``judge_only`` checks the judge and its settings alone (before the items are final)."""
    path, judged = out / FINGERPRINT, out / "judgments.jsonl"
    # judgments there already (an empty file left by a run that failed at its first call is none)
    earlier = (judged.exists() and judged.stat().st_size > 0) or any((out / SHARDS).glob("*.jsonl"))
    if path.exists():
        try:
            theirs = json.loads(path.read_text())
        except json.JSONDecodeError:
            raise BiasAwareError(f"{path} is not valid JSON; use a new --out") from None
        diff = [k for k in mine["judge"] if mine["judge"][k] != theirs.get("judge", {}).get(k)]
        if diff and earlier:
            what = ", ".join(
                f"{k}: {theirs.get('judge', {}).get(k)!r} there, {mine['judge'][k]!r} now" for k in diff
            )
            raise BiasAwareError(f"{out} holds judgments made with other settings ({what}); use a new --out")
        if judge_only:
            return
        old = theirs.get("items", {}) if earlier else {}
        changed = [i for i, h in mine["items"].items() if i in old and old[i] != h]
        if changed:
            raise BiasAwareError(
                f"{out} holds judgments of {len(changed)} item(s) whose content differs from this input under the "
                f"same id (e.g. {changed[0]!r}); use a new --out"
            )
        missing = [i for i in old if i not in mine["items"]]
        if missing:
            raise BiasAwareError(
                f"{out} holds judgments of {len(missing)} item(s) that are not in this input (e.g. {missing[0]!r}: "
                "another benchmark, a smaller --limit or another --seed); use a new --out"
            )
        mine = {"judge": mine["judge"], "items": {**old, **mine["items"]}}
    elif earlier:
        raise BiasAwareError(
            f"{out} holds judgments without a record of the judge and items that made them (an older biasaware); "
            "use a new --out"
        )
    if write:
        out.mkdir(parents=True, exist_ok=True)
        write_json(path, mine)


def judge_or_rescore(
    spec, out: Path, rescore: bool, load_items, run, *, target, judge=None
) -> dict[str, Any]:
    """The judging half of ``eval bias`` and ``eval general``: with ``rescore`` only check that
    ``out/judgments.jsonl`` exists; otherwise resolve the device (an unavailable one fails first),
    load the items (bad data fails before a model is loaded), load the judge and ``run(judge,
    items, out)``. Returns what ``summary.json`` records about the run (when rescoring: the earlier
    summary's run record, marked ``rescored``, so the judge's identity is not lost)."""
    if rescore:
        if not (out / "judgments.jsonl").exists():
            raise BiasAwareError(f"--rescore needs {out / 'judgments.jsonl'} from an earlier run")
        try:
            earlier = json.loads((out / "summary.json").read_text()).get("run")
        except (OSError, ValueError):
            earlier = None
        return {"run": {**earlier, "rescored": True}} if isinstance(earlier, dict) else {}
    from biasaware.devices import ranks
    from biasaware.judging.models import model_identity

    spec.where()
    items = load_items()
    identity = None if spec.backend == "openai" else model_identity(spec.name, KINDS.get(spec.mode, "causal"))
    mine = fingerprint(spec, identity, items)
    check_fingerprint(out, mine, write=False)  # a folder of other judgments fails before a model loads
    judge = judge if judge is not None else start_judge(spec)
    r = ranks()
    check_fingerprint(out, mine, write=r.main)  # nothing is written by a run whose judge fails to load
    r.barrier()  # no process judges (and writes a shard) before process 0 has checked and recorded the folder
    t0 = time.time()
    run(judge, items, out)
    return run_record(spec, judge, target, time.time() - t0, identity)
