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

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from biasaware import __version__
from biasaware.errors import BiasAwareError
from biasaware.io import JsonlAppender, read_records, write_json
from biasaware.metrics import Outcome, bias_summary, macro_micro, position_summary
from biasaware.records import BiasProbe, Judgment, View
from biasaware.taxonomy import BIASES, CATEGORIES

VIEWS = ("original", "injected")


def applicable(probes: list[BiasProbe], kind: str) -> list[BiasProbe]:
    if kind != "reward":
        return probes
    return [p for p in probes if BIASES[p.bias].applies_to_reward_model]


def judge_into(judge, jobs: list[tuple[str, str, View, dict]], path: Path, *, chunk: int = 64) -> Path:
    """Judge ``(item id, view name, view, meta)`` jobs into a judgments JSONL, skipping those already
    there (resume); chunk by chunk so a kill loses at most one chunk. Calls that failed after their
    retries leave their views unjudged and raise at the end (a rerun judges only those)."""
    failed = 0
    with JsonlAppender(path) as log:
        existing = log.existing()
        if any(r["judge"] != judge.name for r in existing):
            raise BiasAwareError(f"{path} holds judgments of another judge; use a new --out")
        done = {(r["probe_id"], r["view"]) for r in existing}
        pending = [j for j in jobs if (j[0], j[1]) not in done]
        for i in range(0, len(pending), chunk):
            part = pending[i : i + chunk]
            for (item_id, view_name, view, meta), o in zip(
                part, judge.judge([j[2] for j in part]), strict=True
            ):
                if o is None:
                    failed += 1
                    continue
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
                log.append(judgment.to_dict())
    if failed:
        raise BiasAwareError(
            f"{failed} view(s) are unjudged because calls failed after all retries; the rest are saved "
            f"in {path}: rerun the same command to judge only those"
        )
    return path


def run_bias_eval(judge, probes: list[BiasProbe], out: str | Path, *, chunk: int = 64) -> Path:
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
    return judge_into(judge, jobs, Path(out) / "judgments.jsonl", chunk=chunk)


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
