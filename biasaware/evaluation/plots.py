"""Every figure the evaluation commands and the studies draw, with matplotlib on its file-only Agg backend:
``eval bias``'s sensitivity and accuracy bars, ``eval scoring``'s heatmap and stability plots, the experiments'
two-sided rate plots and the seed studies' forest plots. The text reports (Markdown and console lines) are in
:mod:`biasaware.evaluation.reports`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biasaware.evaluation.reports import short_name, side_counts
from biasaware.evaluation.seeds import BETTER, METRIC_NAMES
from biasaware.formatting import pct


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend; imported when a plot is drawn (start-up
    time of every command that draws none)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path, title: str | None = None, dpi: int = 120) -> Path:
    """Title a figure, lay it out, write it to ``path`` and close it."""
    if title is not None:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def _bars(ax, xs, values, errs, labels, color, name, width):
    """Bars with interval whiskers and a count label above each, a visible tick for zeros."""
    heights = [0 if v is None else v for v in values]
    ax.bar(
        xs, heights, width, yerr=errs, capsize=2, color=color, label=name, edgecolor="black", linewidth=0.4
    )
    for x, v, text, up in zip(xs, values, labels, errs[1], strict=True):
        if v is None:
            ax.text(x, 0.01, "n/a", ha="center", va="bottom", fontsize=6, color="grey", rotation=90)
            continue
        if v == 0:
            ax.plot([x - width / 2, x + width / 2], [0.004, 0.004], color=color, linewidth=2.5)
        if text and v + up < 0.88:  # above the upper whisker, or inside a tall bar
            ax.text(x, v + up + 0.015, text, ha="center", va="bottom", fontsize=6, rotation=90)
        elif text:
            ax.text(x + 0.09, v - 0.02, text, ha="center", va="top", fontsize=6, rotation=90, color="white")


def _errs(rows, key):
    lo, hi = [], []
    for r in rows:
        v, interval = r.get(key), r.get(f"{key}_ci")
        if v is None or not interval or interval[0] is None:
            lo.append(0)
            hi.append(0)
        else:
            lo.append(max(v - interval[0], 0))
            hi.append(max(interval[1] - v, 0))
    return [lo, hi]


def plot_report(summary: dict[str, Any], out: Path) -> list[Path]:
    """``sensitivity.png`` (BSR and over-correction per bias, flips/denominator on each bar) and
    ``accuracy.png`` (Acc_ori and both injected accuracies, with the chance line)."""
    plt = pyplot()

    biases = list(summary["per_bias"])
    # the mirror side's interval lives with its counts (``mirror``): every bar gets its whiskers
    rows = [
        {**r, "acc_inj_mirror_ci": (r.get("mirror") or {}).get("acc_inj_ci")}
        for r in (summary["per_bias"][b] for b in biases)
    ]
    name = short_name(summary["judge"])
    degenerate = (summary.get("judge_check") or {}).get("degenerate")
    flag = "  [degenerate judge: not interpretable]" if degenerate else ""
    width = 0.38
    paths = []

    def axes():
        fig, ax = plt.subplots(figsize=(max(6.5, 0.8 * len(biases) + 2), 4.4))
        ax.set_xticks(list(range(len(rows))), [f"{b}\nn={r['n']}" for b, r in zip(biases, rows, strict=True)])
        ax.tick_params(axis="x", labelsize=7)
        return fig, ax

    fig, ax = axes()
    for k, (key, color, label) in enumerate(
        (
            ("bsr", "#c0504d", "BSR: follows the cue (standard probes)"),
            ("overcorrection", "#4f81bd", "over-correction: turns against the cue (mirror probes)"),
        )
    ):
        counts = [side_counts(r)[k] for r in rows]
        xs = [i + (k - 0.5) * width for i in range(len(rows))]
        texts = [f"{c[0]}/{c[1]}" if c else "" for c in counts]
        _bars(ax, xs, [r.get(key) for r in rows], _errs(rows, key), texts, color, label, width)
    ax.set_ylabel("bias sensitivity rate\n(flips / originally correct, 95% Wilson)")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=7, frameon=False)
    paths.append(save_figure(fig, out / "sensitivity.png", f"Bias sensitivity: {name}{flag}"))

    fig, ax = axes()
    w = 0.27
    series = [
        ("acc_ori", "Acc_ori (original)", "#9bbb59"),
        ("acc_inj", "Acc_inj (standard)", "#c0504d"),
        ("acc_inj_mirror", "Acc_inj (mirror)", "#4f81bd"),
    ]
    for k, (key, label, color) in enumerate(series):
        xs = [i + (k - 1) * w for i in range(len(rows))]
        _bars(ax, xs, [r.get(key) for r in rows], _errs(rows, key), [""] * len(rows), color, label, w)
    ax.axhline(0.5, color="black", linestyle="--", linewidth=0.8, label="chance (0.5)")
    ax.set_ylabel("accuracy (95% Wilson)")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=7, frameon=False)
    paths.append(save_figure(fig, out / "accuracy.png", f"Accuracy: {name}{flag}"))
    return paths


def rate_plot(
    points: list[dict[str, Any]], path: Path, *, xlabel: str, ylabel: str, title: str, diagonal: bool = False
) -> Path:
    """One marker per judge or setting on rate axes (0 to 1): ``points`` hold ``x``, ``y``, their
    ``x_range`` and ``y_range`` (an interval, drawn as error bars), ``label`` and ``degenerate``
    (drawn hollow). ``diagonal`` adds the x = y line."""
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6.4, 5))
    for k, pt in enumerate(points):
        x, y, (x0, x1), (y0, y1) = pt["x"], pt["y"], pt["x_range"], pt["y_range"]
        color = f"C{k % 10}"
        ax.errorbar(
            x,
            y,
            xerr=[[x - x0], [x1 - x]],
            yerr=[[y - y0], [y1 - y]],
            fmt="o",
            color=color,
            markerfacecolor="none" if pt["degenerate"] else color,
            markersize=8,
            capsize=3,
            label=pt["label"],
        )
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    if diagonal:
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.6, linestyle=":")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=7, frameon=False, ncol=1)
    return save_figure(fig, path, title)


def experiment_plot(result: dict[str, Any], path: Path, labels: dict[str, str] | None = None) -> Path:
    """BSR (x) against over-correction (y) per judge with 95% intervals: a debiased judge sits near
    the origin; Acc_ori in the legend. Degenerate judges are drawn hollow."""
    labels = labels or {}
    points = []
    for name, r in result["runs"].items():
        if r.get("bsr") is None or r.get("overcorrection") is None:
            continue
        degenerate = r["judge_check"]["degenerate"]
        points.append(
            {
                "x": r["bsr"],
                "y": r["overcorrection"],
                "x_range": r["bsr_ci"],
                "y_range": r["overcorrection_ci"],
                "degenerate": degenerate,
                "label": f"{labels.get(name, name)} (Acc_ori {pct(r['acc_ori'])}%"
                + (", degenerate" if degenerate else "")
                + ")",
            }
        )
    return rate_plot(
        points,
        path,
        xlabel="BSR: follows the cue (standard probes)",
        ylabel="over-correction: turns against the cue (mirror probes)",
        title="Two-sided bias sensitivity (lower left is better)",
        diagonal=True,
    )


def _interval(ax, x: float, y: float, ci, color: str, seed_level: bool = False) -> None:
    """One point and its interval on a forest plot: a seed's (a dot) or the seed-level mean (a diamond)."""
    size, cap, width = (7, 3, 2) if seed_level else (4, 2, 1)
    xerr = [[x - ci[0]], [ci[1] - x]]
    ax.errorbar(
        x,
        y,
        xerr=xerr,
        fmt="D" if seed_level else "o",
        color=color,
        markersize=size,
        capsize=cap,
        linewidth=width,
    )


def forest_plot(
    agg: dict[str, Any],
    path: Path,
    comparisons: list[str] | None = None,
    metrics: dict[str, str] | None = None,
    better: dict[str, str] | None = None,
) -> Path:
    """Per comparison and metric: each seed's difference with its bootstrap interval, and the mean
    across seeds with its 95% t interval (a diamond); the zero line. ``metrics``: {metric: its name in
    a panel's title} (default: this study's three); ``better``: {metric: ``higher`` or ``lower``}, which
    side of zero favours the judge over what it is compared with, said on each x axis."""
    metrics = metrics or METRIC_NAMES
    better = better or BETTER
    plt = pyplot()
    names = comparisons or [c for c in agg["comparisons"] if not c.endswith("- start")]
    seeds = [str(s) for s in agg["seeds"]]
    fig, axes = plt.subplots(
        1,
        len(metrics),
        figsize=(4.2 * len(metrics), 0.32 * len(names) * (len(seeds) + 2) + 1.2),
        sharey=True,
        squeeze=False,
    )
    axes = axes[0]
    labels, ys = [], []
    y = 0.0
    for name in names:
        for s in seeds:
            labels.append(f"{name}, seed {s}")
            ys.append(y)
            y -= 1
        labels.append(f"{name}: mean")
        ys.append(y)
        y -= 1.6
    for ax, m in zip(axes, metrics, strict=True):
        i = 0
        for k, name in enumerate(names):
            row = agg["comparisons"][name].get(m)
            if row is None:  # no instance of the metric at any seed
                i += len(seeds) + 1
                continue
            color = f"C{k % 10}"
            for s in seeds:
                d = row["per_seed"][s]
                if d["diff"] is not None:
                    _interval(ax, d["diff"], ys[i], d["ci"] or (d["diff"], d["diff"]), color)
                i += 1
            s_ = row["seed_level"]
            if s_["ci"]:
                _interval(ax, s_["mean"], ys[i], s_["ci"], color, seed_level=True)
            i += 1
        ax.axvline(0, color="grey", linewidth=0.8, linestyle=":")
        ax.set_title(f"{metrics[m]} difference (points)", fontsize=9)
        side = {"higher": "\nright of 0: the first is better", "lower": "\nleft of 0: the first is better"}
        ax.set_xlabel(f"first minus second, points{side.get(better.get(m), '')}", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels(labels, fontsize=7)
    title = (
        f"Per-seed differences (95% bootstrap intervals) and their mean (95% t interval), {len(seeds)} seeds"
    )
    return save_figure(fig, path, title, dpi=110)


def plot_scoring(summary: dict[str, Any], out: Path) -> list[Path]:
    """``score_tendency.png`` (share of each score per template) and ``stability.png`` (flip rate
    and MAD per perturbed template with their intervals)."""
    plt = pyplot()

    names = summary["templates"]
    scale = summary["scale"]
    rows = [summary["per_template"][n] for n in names]
    paths = []
    if not summary.get("continuous"):
        grid = []
        for e in rows:
            d = e["distribution"]
            n = d["n"] or 1
            grid.append([d["counts"][str(k)] / n for k in range(1, scale + 1)] + [d["invalid"] / n])
        fig, ax = plt.subplots(figsize=(1.0 * scale + 3, 0.45 * len(names) + 1.6))
        im = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(scale + 1), [str(k) for k in range(1, scale + 1)] + ["invalid"])
        ax.set_yticks(range(len(names)), names)
        for r, values in enumerate(grid):
            for c, v in enumerate(values):
                ax.text(
                    c,
                    r,
                    pct(v, 0),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if v < 0.6 else "black",
                )
        fig.colorbar(im, ax=ax, label="share of items")
        ax.set_title(f"Score tendency: {Path(str(summary['judge'])).name}", fontsize=10)
        paths.append(save_figure(fig, out / "score_tendency.png"))
    perturbed = [(n, e) for n, e in zip(names, rows, strict=True) if n != "baseline"]
    if perturbed:
        fig, axes = plt.subplots(1, 2, figsize=(max(7, 0.9 * len(perturbed) + 4), 3.8))
        for ax, key, label in (
            (axes[0], "flip_rate", "flip rate vs baseline"),
            (axes[1], "mad", "MAD vs baseline"),
        ):
            vals = [e.get(key) if e.get(key) is not None else 0 for _, e in perturbed]
            cis = [e.get(f"{key}_ci") or (v, v) for (_, e), v in zip(perturbed, vals, strict=True)]
            err = [
                [max(v - (c[0] if c[0] is not None else v), 0) for v, c in zip(vals, cis, strict=True)],
                [max((c[1] if c[1] is not None else v) - v, 0) for v, c in zip(vals, cis, strict=True)],
            ]
            ax.bar(
                range(len(perturbed)),
                vals,
                yerr=err,
                capsize=3,
                color="#4f81bd",
                edgecolor="black",
                linewidth=0.4,
            )
            ax.set_xticks(
                range(len(perturbed)), [n for n, _ in perturbed], rotation=45, ha="right", fontsize=7
            )
            ax.set_ylabel(label + " (95% interval)")
        axes[0].set_ylim(0, 1.05)
        paths.append(
            save_figure(fig, out / "stability.png", f"Scoring stability: {Path(str(summary['judge'])).name}")
        )
    return paths
