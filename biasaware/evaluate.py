"""Bias-sensitivity evaluation: judge every probe in both views, then score, report and plot.

``run_bias_eval(judge, probes, out)`` judges the original and the injected view of every probe and
appends one :class:`~biasaware.records.Judgment` per view to ``out/judgments.jsonl`` as each chunk
finishes, so an interrupted run resumes where it stopped. Scoring reads only that file
(:func:`summarize`), which is also what ``--rescore`` does: any number can be audited and
recomputed under another policy without a model.

Outputs: ``judgments.jsonl`` (per view), ``summary.json`` (per bias, per category, overall macro
and micro, position primacy/recency/consistency, reward-model margins), ``report.md`` (shaped like
002's Tables 4 and 5) and ``bsr.png`` / ``accuracy.png``.

Reward-model judges are scored on the 9 response-level biases only (bandwagon, reflection and
position live in a judge's prompt, which a reward model does not see).
"""

from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from biasaware import __version__
from biasaware.errors import BiasAwareError
from biasaware.io import JsonlAppender, read_records, read_whole_lines, write_json, write_jsonl
from biasaware.metrics import Outcome, bias_summary, macro_micro, position_summary
from biasaware.records import BiasProbe, Judgment, View
from biasaware.taxonomy import BIASES, CATEGORIES

log = logging.getLogger(__name__)

VIEWS = ("original", "injected")
SHARDS = ".shards"  # per-process judgment files of a multi-process run, merged by process 0


def applicable(probes: list[BiasProbe], kind: str) -> list[BiasProbe]:
    if kind != "reward":
        return probes
    return [p for p in probes if BIASES[p.bias].applies_to_reward_model]


def _shards(path: Path) -> list[Path]:
    return sorted((path.parent / SHARDS).glob(f"{path.stem}.rank*.jsonl"))


def judge_into(
    judge, jobs: list[tuple[str, str, View, dict]], path: Path, *, chunk: int | None = None, ranks=None
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
    """
    from biasaware.devices import ranks as current_ranks
    from biasaware.judges import judge_chunks
    from biasaware.progress import progress_bar

    r = ranks or current_ranks()
    size = chunk or getattr(judge, "chunk_views", 64)
    path = Path(path)
    own = path if r.world == 1 else path.parent / SHARDS / f"{path.stem}.rank{r.rank}-of-{r.world}.jsonl"
    earlier = [row for p in {path, *_shards(path)} - {own} for row in read_whole_lines(p)]
    failed = judged = 0
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
        bar = progress_bar(sum(map(len, todo)), desc=desc, unit="view", enabled=r.main)
        for part, outputs in zip(todo, judge_chunks(judge, [[j[2] for j in c] for c in todo]), strict=True):
            for (item_id, view_name, view, meta), o in zip(part, outputs, strict=True):
                if o is None:
                    failed += 1
                    continue
                if o.overlong:
                    meta = {**meta, "overlong": {"tokens": o.overlong[0], "limit": o.overlong[1]}}
                judgment = Judgment(
                    probe_id=item_id,
                    view=view_name,
                    judge=judge.name,
                    raw=o.raw,
                    verdict=o.verdict,
                    scores=o.scores,
                    correct=view.correct,
                    meta=meta,
                )
                out.append(judgment.to_dict())
                judged += 1
            bar.update(len(part))
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
    r.barrier()
    if r.main:
        _merge(jobs, path)
    if failed:
        raise BiasAwareError(
            f"{failed} view(s) are unjudged because calls failed after all retries; the rest are saved "
            f"in {path}: rerun the same command to judge only those"
        )
    return path


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
    judge, probes: list[BiasProbe], out: str | Path, *, chunk: int | None = None, ranks=None
) -> Path:
    """Judge both views of every probe into ``out/judgments.jsonl`` (resumable); return its path."""
    jobs = []
    for p in applicable(probes, judge.kind):
        meta = {"bias": p.bias, "category": p.category}
        for key in ("direction", "mirror"):
            if key in p.meta:
                meta[key] = p.meta[key]
        jobs += [(p.id, v, getattr(p, v), meta) for v in VIEWS]
    if not jobs:
        raise BiasAwareError("no probes to judge (a reward model skips bandwagon, reflection and position)")
    return judge_into(judge, jobs, Path(out) / "judgments.jsonl", chunk=chunk, ranks=ranks)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN becomes null, tuples lists."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def summarize(judgments: list[Judgment], policy: str = "symmetric", seed: int = 0) -> dict[str, Any]:
    """Score per bias, per category and overall from per-view judgments (pure: no model)."""
    by_probe: dict[str, dict[str, Judgment]] = defaultdict(dict)
    for j in judgments:
        by_probe[j.probe_id][j.view] = j
    items: dict[str, list[tuple[Outcome, Judgment, Judgment]]] = defaultdict(list)
    incomplete = 0
    for views in by_probe.values():
        if set(views) != set(VIEWS):
            incomplete += 1
            continue
        o, i = views["original"], views["injected"]
        items[o.meta["bias"]].append((Outcome(o.verdict, o.correct, i.verdict, i.correct), o, i))
    if not items:
        raise BiasAwareError("no probe has judgments on both views; nothing to score")
    mirror = {bool(j.meta.get("mirror")) for j in judgments}
    if len(mirror) > 1:
        raise BiasAwareError("these judgments mix mirror and standard probes; score them apart")
    judges = sorted({j.judge for j in judgments})
    per_bias: dict[str, Any] = {}
    for bias in [b for b in BIASES if b in items]:
        rows = items[bias]
        s = bias_summary([r[0] for r in rows], policy, seed)
        s["category"] = BIASES[bias].category
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
        s["overlong"] = sum(bool(j.meta.get("overlong")) for r in rows for j in r[1:])
        per_bias[bias] = s
    per_category = {}
    for cat in CATEGORIES:
        pooled = [r[0] for b, rows in items.items() if BIASES[b].category == cat for r in rows]
        if pooled:
            per_category[cat] = bias_summary(pooled, policy, seed)
    overall = macro_micro(
        per_bias, bias_summary([r[0] for rows in items.values() for r in rows], policy, seed)
    )
    return _clean(
        {
            "biasaware": __version__,
            "judge": judges[0] if len(judges) == 1 else judges,
            "policy": policy,
            "seed": seed,
            "mirror": mirror.pop(),
            "items": sum(len(r) for r in items.values()),
            "incomplete_items": incomplete,
            "overlong_views": sum(s["overlong"] for s in per_bias.values()),
            "per_bias": per_bias,
            "per_category": per_category,
            "overall": overall,
        }
    )


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _ci(ci: list | None) -> str:
    return "" if not ci or ci[0] is None else f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def markdown_report(summary: dict[str, Any]) -> str:
    """Per-bias rows grouped by category (002 Tables 4-5), then categories and overall."""
    lines = [
        f"# Bias sensitivity: {summary['judge']}",
        "",
        f"Policy `{summary['policy']}`; {summary['items']} items; percentages with 95% intervals "
        "(Wilson); invalid = tie or unparseable verdicts (original / injected); p = McNemar exact.",
        "",
        *(
            [
                "Mirror probes: every cue sits on the other side, so BSR here counts over-corrections "
                "(a right verdict lost when the cue moved to the right answer).",
                "",
            ]
            if summary.get("mirror")
            else []
        ),
        "| category | bias | n | Acc_ori | Acc_inj | BSR | invalid | p |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for bias, s in summary["per_bias"].items():
        lines.append(
            f"| {s['category']} | {bias} | {s['n']} | {_pct(s['acc_ori'])} | {_pct(s['acc_inj'])} | "
            f"{_pct(s['bsr'])}{_ci(s['bsr_ci'])} | {s['invalid_ori']}/{s['invalid_inj']} | {s['mcnemar_p']:.3g} |"
        )
    for cat, s in summary["per_category"].items():
        lines.append(
            f"| **{cat}** | (pooled) | {s['n']} | {_pct(s['acc_ori'])} | {_pct(s['acc_inj'])} | "
            f"{_pct(s['bsr'])}{_ci(s['bsr_ci'])} | {s['invalid_ori']}/{s['invalid_inj']} | {s['mcnemar_p']:.3g} |"
        )
    macro, micro = summary["overall"]["macro"], summary["overall"]["micro"]
    lines.append(
        f"| **overall** | macro over biases | | {_pct(macro['acc_ori'])} | {_pct(macro['acc_inj'])} | "
        f"{_pct(macro['bsr'])} | | |"
    )
    lines.append(
        f"| **overall** | micro (pooled) | {micro['n']} | {_pct(micro['acc_ori'])} | {_pct(micro['acc_inj'])} | "
        f"{_pct(micro['bsr'])}{_ci(micro['bsr_ci'])} | {micro['invalid_ori']}/{micro['invalid_inj']} | "
        f"{micro['mcnemar_p']:.3g} |"
    )
    if summary.get("overlong_views"):
        lines += [
            "",
            f"{summary['overlong_views']} view(s) did not fit the judge's context and were not judged "
            "(verdict `invalid`, counted as wrong): "
            + ", ".join(f"{b} {s['overlong']}" for b, s in summary["per_bias"].items() if s.get("overlong"))
            + ".",
        ]
    pos = summary["per_bias"].get("position", {}).get("position")
    if pos:
        lines += [
            "",
            f"Position: primacy (correct answer moved A -> B) BSR {_pct(pos['primacy']['bsr'])}"
            f"{_ci(pos['primacy']['bsr_ci'])}, n={pos['primacy']['n']}; recency (B -> A) BSR "
            f"{_pct(pos['recency']['bsr'])}{_ci(pos['recency']['bsr_ci'])}, n={pos['recency']['n']}; "
            f"position consistency {_pct(pos['consistency'])}{_ci(pos['consistency_ci'])}.",
        ]
    margins = {b: s for b, s in summary["per_bias"].items() if s.get("margin_shift") is not None}
    if margins:
        lines += ["", "| bias | margin ori | margin inj | shift |", "|---|---:|---:|---:|"]
        lines += [
            f"| {b} | {s['margin_ori']:.3f} | {s['margin_inj']:.3f} | {s['margin_shift']:+.3f} |"
            for b, s in margins.items()
        ]
    return "\n".join(lines) + "\n"


def plot_report(summary: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    biases = list(summary["per_bias"])
    rows = [summary["per_bias"][b] for b in biases]
    x = range(len(biases))
    paths = []

    def err(key):
        lo = [
            (r[key] or 0) - (r[f"{key}_ci"][0] if r[f"{key}_ci"][0] is not None else r[key] or 0)
            for r in rows
        ]
        hi = [
            (r[f"{key}_ci"][1] if r[f"{key}_ci"][1] is not None else r[key] or 0) - (r[key] or 0)
            for r in rows
        ]
        return [lo, hi]

    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(biases)), 4))
    ax.bar(x, [r["bsr"] or 0 for r in rows], yerr=err("bsr"), capsize=3, color="#c0504d")
    ax.set_xticks(list(x), biases, rotation=45, ha="right")
    ax.set_ylabel("BSR (95% Wilson interval)")
    ax.set_ylim(0, 1)
    ax.set_title(f"Bias success rate: {summary['judge']}")
    fig.tight_layout()
    paths.append(out / "bsr.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(biases)), 4))
    w = 0.4
    ax.bar(
        [i - w / 2 for i in x],
        [r["acc_ori"] or 0 for r in rows],
        w,
        yerr=err("acc_ori"),
        capsize=2,
        label="Acc_ori",
    )
    ax.bar(
        [i + w / 2 for i in x],
        [r["acc_inj"] or 0 for r in rows],
        w,
        yerr=err("acc_inj"),
        capsize=2,
        label="Acc_inj",
    )
    ax.set_xticks(list(x), biases, rotation=45, ha="right")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title(f"Original vs injected accuracy: {summary['judge']}")
    fig.tight_layout()
    paths.append(out / "accuracy.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


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
    data: str | Path, biases: list[str] | None = None, limit: int | None = None
) -> list[BiasProbe]:
    probes = read_records(data, "probe")
    if biases:
        probes = [p for p in probes if p.bias in biases]
    if limit:
        kept, seen = [], defaultdict(int)
        for p in probes:
            if seen[p.bias] < limit:
                kept.append(p)
                seen[p.bias] += 1
        probes = kept
    if not probes:
        raise BiasAwareError(f"{data}: no probes to evaluate")
    return probes


def compare_judges(first: list[Judgment], second: list[Judgment], view: str = "injected") -> dict[str, Any]:
    """Two judges on the same probes: per bias and overall, each one's accuracy on ``view`` and
    McNemar's exact test on the items where exactly one of them is right."""
    from biasaware.metrics import two_judge_mcnemar

    a = {j.probe_id: j for j in first if j.view == view}
    b = {j.probe_id: j for j in second if j.view == view}
    shared = sorted(set(a) & set(b))
    if not shared:
        raise BiasAwareError(f"the two runs share no probes judged on the {view} view")
    by_bias: dict[str, list[str]] = defaultdict(list)
    for pid in shared:
        by_bias[a[pid].meta["bias"]].append(pid)

    def test(ids):
        return two_judge_mcnemar(
            [a[i].verdict == a[i].correct for i in ids], [b[i].verdict == b[i].correct for i in ids]
        )

    return _clean(
        {
            "judges": [first[0].judge, second[0].judge],
            "view": view,
            "per_bias": {bias: test(by_bias[bias]) for bias in BIASES if bias in by_bias},
            "overall": test(shared),
        }
    )


def start_judge(spec) -> Any:
    """``load_judge(spec)``, announcing where it runs (one line, printed by process 0)."""
    from biasaware.devices import ranks
    from biasaware.judges import load_judge

    judge = load_judge(spec)
    info = judge.summary()
    where = f" on {info['device']} in {info['dtype']}" if "device" in info else f" via {spec.backend}"
    if ranks().main:
        print(f"[judge] {spec.name} ({spec.mode}){where}", flush=True)
    return judge


def run_record(spec, judge, target: str | Path, seconds: float) -> dict[str, Any]:
    """What ``summary.json`` records about the run: the spec, the resolved device, the timing."""
    return {
        "run": {
            "judge": spec.name,
            "mode": spec.mode,
            "data": str(target),
            "seconds": round(seconds, 2),
            "spec": spec.model_dump(),
            **judge.summary(),
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
) -> dict[str, Any] | None:
    """``eval bias``: judge every probe of ``data`` with the judge ``spec`` describes into ``out``
    (or, with ``rescore``, only score ``out/judgments.jsonl`` again), then score and write the
    reports. In a multi-process launch every process judges its share; process 0 merges, writes
    and returns the summary, the others return ``None``."""
    from biasaware.devices import ranks

    out = Path(out)
    extra = judge_or_rescore(
        spec, out, rescore, lambda: load_probes(data, biases, limit), run_bias_eval, target=data
    )
    if not ranks().main:
        return None
    return write_reports(out / "judgments.jsonl", out, policy, seed, extra)


def judge_or_rescore(spec, out: Path, rescore: bool, load_items, run, *, target) -> dict[str, Any]:
    """The judging half of ``eval bias`` and ``eval general``: with ``rescore`` only check that
    ``out/judgments.jsonl`` exists; otherwise resolve the device (an unavailable one fails first),
    load the items (bad data fails before a model is loaded), load the judge and ``run(judge,
    items, out)``. Returns what ``summary.json`` records about the run (``{}`` when rescoring)."""
    if rescore:
        if not (out / "judgments.jsonl").exists():
            raise BiasAwareError(f"--rescore needs {out / 'judgments.jsonl'} from an earlier run")
        return {}
    spec.where()
    items = load_items()
    judge = start_judge(spec)
    t0 = time.time()
    run(judge, items, out)
    return run_record(spec, judge, target, time.time() - t0)


def console_summary(summary: dict[str, Any]) -> str:
    """The per-bias lines ``eval bias`` prints."""
    lines = []
    if summary["mirror"]:
        lines.append("mirror probes: each cue sits on the other side; BSR counts over-corrections")
    for bias, s in summary["per_bias"].items():
        bsr = "  –  " if s["bsr"] is None else f"{100 * s['bsr']:5.1f}"
        long = f"  over-long {s['overlong']}" if s.get("overlong") else ""
        lines.append(
            f"{bias:14s} n {s['n']:4d}  Acc_ori {100 * s['acc_ori']:5.1f}  Acc_inj {100 * s['acc_inj']:5.1f}  "
            f"BSR {bsr}  invalid {s['invalid_ori']}/{s['invalid_inj']}{long}"
        )
    micro = summary["overall"]["micro"]
    bsr = "–" if micro["bsr"] is None else f"{100 * micro['bsr']:.1f}"
    lines.append(
        f"overall (pooled): Acc_ori {100 * micro['acc_ori']:.1f}  Acc_inj {100 * micro['acc_inj']:.1f}  BSR {bsr}"
    )
    if summary.get("overlong_views"):
        lines.append(
            f"{summary['overlong_views']} view(s) did not fit the judge's context: not judged, counted as invalid"
        )
    return "\n".join(lines)
