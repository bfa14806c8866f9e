"""Reports of a bias evaluation: the Markdown table, the console lines and the plots, all read from
``summary.json`` (:func:`biasaware.evaluation.summaries.summarize`), plus the table that sets several judges
side by side (the quickstart's experiment, shaped like JudgeBiasBench's Table 5 with both sides).

Terms, the same everywhere: **BSR** (bias sensitivity rate) = correct-to-wrong flips on standard
probes (the cue on the worse answer: the judge followed it) / items judged correctly on the
original view; **over-correction** = the same on mirror probes (the cue on the better answer: the
judge turned against it); **two-sided** = the larger of the two. A judge flagged by
``judge_check`` (nearly constant verdicts, or original accuracy not above chance) has its rates
marked "not interpretable".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biasaware.evaluation.baselines import MIN_DECIDED
from biasaware.evaluation.metrics import table4_cell
from biasaware.formatting import ci, p_value, pct


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


SIDE_NOTE = (
    "BSR (bias sensitivity rate): correct-to-wrong flips on standard probes (the cue on the worse "
    "answer) / items right on the original view. Over-correction: the same on mirror probes (the cue on "
    "the better answer). Two-sided: the larger. Flips/denominator in parentheses; 95% Wilson intervals; "
    "p = McNemar exact, original vs injected view."
)


def short_name(judge: Any) -> str:
    """A judge's name for titles: the folder or model name, not its path."""
    if isinstance(judge, list):
        return ", ".join(short_name(j) for j in judge)
    path = Path(str(judge))
    generic = path.name.startswith("checkpoint-") or path.name in ("final", "model")
    return f"{path.parent.name}/{path.name}" if generic and path.parent.name else path.name


def rate(s: dict, key: str, count: tuple[int, int] | None) -> str:
    """``12.5 [5.1, 27.0] (3/24)``; ``–`` when the side was not built."""
    if s.get(key) is None:
        return "–"
    tail = f" ({count[0]}/{count[1]})" if count else ""
    return f"{pct(s[key])}{ci(s.get(f'{key}_ci'))}{tail}"


def _counts(s: dict) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    std = (s["flips"], s["ori_correct"]) if s.get("bsr") is not None else None
    m = s.get("mirror")
    return std, ((m["flips"], m["ori_correct"]) if m else None)


def check_lines(summary: dict[str, Any]) -> list[str]:
    """The verdict distribution, and the degenerate-judge warning when there is one."""
    c = summary.get("judge_check")
    if not c:
        return []
    v = c["verdicts"]
    n = sum(v.values())
    dist = ", ".join(f"{k} {v[k]} ({pct(v[k] / n, 0)}%)" for k in ("A", "B", "tie", "invalid") if n)
    lines = [f"Verdicts over all {n} views: {dist}."]
    if c["degenerate"] and "per_bias" in summary:
        lines.insert(
            0,
            "**Degenerate judge: its BSR and over-correction are not interpretable** ("
            + "; ".join(c["reasons"])
            + "). A judge that barely reads the answers rarely flips, so a low rate here is no evidence "
            "of robustness.",
        )
    elif c["degenerate"]:  # a general benchmark: accuracy only
        lines.insert(
            0,
            "**Degenerate judge: its accuracy is not evidence of judging** ("
            + "; ".join(c["reasons"])
            + "). A judge that gives nearly one verdict, or is right no more often than chance, is not ranked.",
        )
    return lines


def _row(label: str, name: str, s: dict, bold: bool = False) -> str:
    std, mir = _counts(s)
    label = f"**{label}**" if bold else label
    return (
        f"| {label} | {name} | {s['n']} | {pct(s['acc_ori'])} | {pct(s.get('acc_inj'))} | "
        f"{rate(s, 'bsr', std)} | {p_value(s.get('bsr_p'))} | {pct(s.get('acc_inj_mirror'))} | "
        f"{rate(s, 'overcorrection', mir)} | {p_value(s.get('overcorrection_p'))} | {pct(s.get('two_sided'))} | "
        f"{s['invalid_ori']}/{s['invalid_inj']} |"
    )


def markdown_report(summary: dict[str, Any]) -> str:
    """Per-bias rows grouped by category (JudgeBiasBench Tables 4-5, with the mirror side), then categories and
    overall."""
    degenerate = (summary.get("judge_check") or {}).get("degenerate")
    lines = [
        f"# Bias sensitivity: {short_name(summary['judge'])}",
        "",
        *check_lines(summary),
        "",
        f"Judge `{summary['judge']}`; policy `{summary['policy']}`; {summary['items']} items; probes: "
        f"{' and '.join(summary.get('sides', []))}. {SIDE_NOTE} Invalid = tie or unparseable verdicts "
        "(original / injected).",
        "",
        "| category | bias | n | Acc_ori | Acc_inj | BSR | p | Acc_inj (mirror) | over-correction | p | "
        "two-sided | invalid |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_row(s["category"], bias, s) for bias, s in summary["per_bias"].items()]
    lines += [_row(cat, "(pooled)", s, bold=True) for cat, s in summary["per_category"].items()]
    macro, micro = summary["overall"]["macro"], summary["overall"]["micro"]
    lines.append(
        f"| **overall** | macro over biases | | {pct(macro['acc_ori'])} | {pct(macro['acc_inj'])} | "
        f"{pct(macro['bsr'])} | | {pct(macro.get('acc_inj_mirror'))} | {pct(macro.get('overcorrection'))} | | "
        f"{pct(macro.get('two_sided'))} | |"
    )
    lines.append(_row("overall", "micro (pooled)", micro, bold=True))
    if summary["overall"].get("excludes"):
        lines += ["", SECURITY_NOTE.format(", ".join(summary["overall"]["excludes"]))]
    if degenerate:
        lines += ["", "Rates above: not interpretable (degenerate judge, see the top)."]
    if summary.get("overlong_views"):
        lines += [
            "",
            f"{summary['overlong_views']} view(s) did not fit the judge's context and were not judged "
            "(verdict `invalid`, counted as wrong): "
            + ", ".join(f"{b} {s['overlong']}" for b, s in summary["per_bias"].items() if s.get("overlong"))
            + ".",
        ]
    if summary.get("not_scored"):
        lines += [
            "",
            f"Not scored: {', '.join(summary['not_scored'])}. A judge that sees one response at a time (a reward model, "
            "a pointwise judge) has no answer order and no note about the pair.",
        ]
    pos = summary["per_bias"].get("position", {}).get("position")
    if pos:
        lines += [
            "",
            f"Position: primacy (correct answer moved A -> B) BSR {pct(pos['primacy']['bsr'])}"
            f"{ci(pos['primacy']['bsr_ci'])}, n={pos['primacy']['n']}; recency (B -> A) BSR "
            f"{pct(pos['recency']['bsr'])}{ci(pos['recency']['bsr_ci'])}, n={pos['recency']['n']}; "
            f"position consistency {pct(pos['consistency'])}{ci(pos['consistency_ci'])}.",
        ]
        if "flip_rate" in pos:
            sa = pos["swap_aggregate"]
            lines += [
                "",
                f"Position flip rate (each pair in both orders; of the pairs with a valid verdict in both, the share "
                f"whose verdicts pick different responses): {pct(pos['flip_rate'])}{ci(pos['flip_rate_ci'])} "
                f"({pos['flips']}/{pos['n']}; {pos['undecided']} pair(s) with a tie or invalid verdict apart); "
                f"{position_grade(pos['flip_rate'])}. Swap-and-aggregate (keep a verdict only when both orders "
                f"agree): accuracy {pct(sa['accuracy'])}{ci(sa['accuracy_ci'])} over all pairs, "
                f"{pct(sa['agreement'])} of pairs decided, {pct(sa['accuracy_on_agreed'])} right among those.",
            ]
    lines += master_key_lines(summary)
    if summary["policy"].startswith("judgebiasbench"):
        lines += ["", "JudgeBiasBench Table 4 layout (BSR on standard probes, rounded as that table is):", ""]
        lines += table4_row(summary)
    shifts = {b: s["score_shift"] for b, s in summary["per_bias"].items() if s.get("score_shift")}
    if shifts:
        lines += [
            "",
            "Mean score shift, injected minus original view, of the better and the worse response (Gao et al. 2025 fig. 2; "
            "standard probes carry the cue on the worse response, identity statements on the better one; mirror "
            "probes the other way):",
            "",
            "| bias | side | n | better | worse |",
            "|---|---|---:|---:|---:|",
        ]
        lines += [
            f"| {b} | {side} | {v['n']} | {v['better']:+.3f} | {v['worse']:+.3f} |"
            for b, sides in shifts.items()
            for side, v in sides.items()
        ]
    margins = {b: s for b, s in summary["per_bias"].items() if s.get("margin_shift") is not None}
    if margins:
        lines += ["", "| bias | margin ori | margin inj | shift |", "|---|---:|---:|---:|"]
        lines += [
            f"| {b} | {s['margin_ori']:.3f} | {s['margin_inj']:.3f} | {s['margin_shift']:+.3f} |"
            for b, s in margins.items()
        ]
    if summary.get("cue_baselines"):
        lines += baselines_markdown(summary["cue_baselines"])
    return "\n".join(lines) + "\n"


def baseline_console(summary: dict[str, Any]) -> list[str]:
    """One line of cue-only baselines (Acc_ori, BSR, over-correction of each) and any confound warning."""
    b = summary.get("cue_baselines")
    if not b:
        return []
    parts = []
    for name, r in b["heuristics"].items():
        rates = [f"Acc_ori {pct(r['acc_ori'])}"] if r.get("acc_ori") is not None else []
        if "bsr" in r:
            rates += (
                [f"Acc_inj {pct(r.get('acc_inj'))}"] if r.get("bsr") is None else [f"BSR {pct(r.get('bsr'))}"]
            )
            rates += (
                [f"mirror {pct(r.get('acc_inj_mirror'))}"]
                if r.get("overcorrection") is None
                else [f"over-correction {pct(r.get('overcorrection'))}"]
            )
        parts.append(f"{name} ({', '.join(rates)})")
    return [f"cue-only baselines, no model: {'; '.join(parts)}"] + [
        f"warning: {line}" for line in b["confounded"]
    ]


def position_grade(rate: float | None) -> str:
    """the LLM judge pitfalls guide's reading of a position flip rate: under 5% good, above 20% serious."""
    if rate is None or rate != rate:
        return "not measured"
    return "good (under 5%)" if rate < 0.05 else "serious (above 20%)" if rate > 0.2 else "between 5% and 20%"


SECURITY_NOTE = (
    "{} (category security): probes outside the 12-bias taxonomy (prompt injection, master keys), reported on "
    "their own rows; they are not in the overall numbers."
)


def master_key_lines(summary: dict[str, Any]) -> list[str]:
    """The master-key probes' false positives, overall and per key type, and the short-correct mirror."""
    mk = (summary["per_bias"].get("masterkey") or {}).get("master_keys")
    if not mk:
        return []

    def cell(e: dict) -> str:
        return f"{pct(e['fpr'])}{ci(e['fpr_ci'])} ({e['false_positives']}/{e['n']})"

    lines = [
        "",
        "Master keys (a non-answer against the real answer): false positives, the views not decided for the real "
        "answer (key picked, tie or no readable verdict; a reward function pays such a key at least 0): "
        f"{cell(mk)}.",
        "",
        "| key type | false positives | key picked | ties | invalid |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {t} | {cell(e)} | {e['key_picked']} | {e['ties']} | {e['invalid']} |"
        for t, e in mk["per_key_type"].items()
    ]
    ref = mk.get("reference")
    if ref:
        lines += [
            "",
            'Both answer orders, as a reward against a reference asks (`reward_function(against="reference")`): '
            "a false positive is a key not punished, the real answer not picked in both orders (the key is paid "
            f"at least 0): {cell(ref)}; the key paid +1 (picked in both orders): {ref['key_rewarded']}.",
            "",
            "| key type | false positives, both orders | key paid +1 |",
            "|---|---:|---:|",
            *(f"| {t} | {cell(e)} | {e['key_rewarded']} |" for t, e in ref["per_key_type"].items()),
        ]
    if mk["short_n"]:
        lines += [
            "",
            f"Short correct answer against a long wrong one (mirror probes): not decided for the short answer in "
            f"{pct(mk['short_lost'])}{ci(mk['short_lost_ci'])} of {mk['short_n']} views (over-correction, flips "
            "from a right original, on the masterkey row).",
        ]
    return lines


TABLE4 = (
    ("length", "Len."),
    ("authority", "Auth."),
    ("beauty", "Beaut."),
    ("assertiveness", "Assert."),
    ("sycophancy", "Syc."),
    ("sentiment", "Sent."),
    ("concreteness", "Conc."),
    ("gender", "Gen."),
    ("race", "Race."),
    ("bandwagon", "Band."),
    ("reflection", "Refl."),
    ("position", "Pos."),
)


def table4_row(summary: dict[str, Any]) -> list[str]:
    """The judge's BSR in the column order of JudgeBiasBench's Table 4 (JudgeBiasBench), each cell rounded as that
    table rounds (:func:`biasaware.evaluation.metrics.table4_cell`); Overall = pooled over the biases
    judged. A bias without standard probes is ``–``."""

    def cell(s: dict | None) -> str:
        if not s or "standard" not in s.get("sides", ["standard"]):
            return "–"
        return table4_cell(s["flips"], s["ori_correct"])

    per_bias = summary["per_bias"]
    cells = [cell(per_bias.get(bias)) for bias, _ in TABLE4] + [cell(summary["overall"]["micro"])]
    return [
        "| Model | " + " | ".join(h for _, h in TABLE4) + " | Overall |",
        "|---|" + "---:|" * (len(TABLE4) + 1),
        f"| {short_name(summary['judge'])} | " + " | ".join(cells) + " |",
    ]


def console_summary(summary: dict[str, Any]) -> str:
    """The per-bias lines ``eval bias`` prints."""
    lines = []
    for bias, s in summary["per_bias"].items():
        long = f"  over-long {s['overlong']}" if s.get("overlong") else ""
        lines.append(
            f"{bias:14s} n {s['n']:4d}  Acc_ori {pct(s['acc_ori']):>5s}  Acc_inj {pct(s.get('acc_inj')):>5s}  "
            f"BSR {pct(s.get('bsr')):>5s}  over-correction {pct(s.get('overcorrection')):>5s}  "
            f"invalid {s['invalid_ori']}/{s['invalid_inj']}{long}"
        )
    micro = summary["overall"]["micro"]
    lines.append(
        f"overall (pooled): Acc_ori {pct(micro['acc_ori'])}  Acc_inj {pct(micro.get('acc_inj'))}  "
        f"BSR {pct(micro.get('bsr'))}  over-correction {pct(micro.get('overcorrection'))}  "
        f"two-sided {pct(micro.get('two_sided'))}"
    )
    lines += [line.replace("**", "") for line in check_lines(summary)]
    if summary["overall"].get("excludes"):
        lines.append(SECURITY_NOTE.format(", ".join(summary["overall"]["excludes"])))
    mk = (summary["per_bias"].get("masterkey") or {}).get("master_keys")
    if mk:
        lines.append(
            f"master keys: false positives {pct(mk['fpr'])} ({mk['false_positives']}/{mk['n']}); "
            + ", ".join(f"{t} {pct(e['fpr'])}" for t, e in mk["per_key_type"].items())
            + (
                f"; both orders (reward against a reference) {pct(mk['reference']['fpr'])} "
                f"({mk['reference']['false_positives']}/{mk['reference']['n']})"
                if mk.get("reference")
                else ""
            )
        )
    if summary["policy"].startswith("judgebiasbench"):
        lines += ["JudgeBiasBench Table 4 layout (BSR, rounded as that table is):", *table4_row(summary)]
    lines += baseline_console(summary)
    if summary.get("overlong_views"):
        lines.append(
            f"{summary['overlong_views']} view(s) did not fit the judge's context: not judged, counted as invalid"
        )
    return "\n".join(lines)


def compare_lines(result: dict[str, Any], folders: list[str]) -> list[str]:
    """``eval compare``'s account of what was compared: the probes each run scored, the ids shared
    with the same content, and each run's folder and judge."""
    overlap = result["overlap"]
    counts = "; ".join(
        f"{label}: {c['scored']} scored" + (f", {c['not_scored']} not scored" if c["not_scored"] else "")
        for label, c in result["probes"].items()
    )
    shared = overlap["shared"] if overlap["shared"] is not None else "unknown (--by-id)"
    mirror = f", {result['mirror']['overall']['n']} mirror probes" if result.get("mirror") else ""
    lines = [
        f"[compare] probes {counts}; probe ids shared with the same content: {shared}; compared on both: "
        f"{result['overall']['n']} standard probes{mirror}"
    ]
    for label, folder, judge in zip(result["runs"], folders, result["judges"], strict=True):
        lines.append(f"[compare] {label}: {folder} (judge {judge})")
    return lines


def compare_table(result: dict[str, Any]) -> str:
    """``eval compare``: both judges' accuracy on the compared view and McNemar's p, per bias; the
    standard probes first, then the mirror probes (over-correction side) when there are any."""
    a, b = result.get("runs") or [short_name(j) for j in result["judges"]]  # columns named by run
    lines = []
    for title, part in (
        ("standard probes (cue on the worse answer)", result),
        ("mirror probes (cue on the better answer)", result.get("mirror")),
    ):
        if not part:
            continue
        lines += [
            f"{title}, {result['view']} view:",
            f"| bias | n | acc {a} | acc {b} | only {a} | only {b} | McNemar p |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for bias, r in [*part["per_bias"].items(), ("**overall**", part["overall"])]:
            lines.append(
                f"| {bias} | {r['n']} | {pct(r['acc_1'])} | {pct(r['acc_2'])} | {r['only_1']} | "
                f"{r['only_2']} | {p_value(r['mcnemar_p'])} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip()


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
        counts = [_counts(r)[k] for r in rows]
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


def experiment_markdown(result: dict[str, Any], labels: dict[str, str] | None = None) -> str:
    """Several judges side by side (JudgeBiasBench Table 5 with the mirror side): one row per run, pooled over
    ``result['biases']``, p = McNemar exact against the baseline on paired per-probe indicators."""
    labels = labels or {}
    base = result["baseline"]
    lines = [
        "| judge | n (probes per side) | Acc_ori | p | Acc_inj | BSR | p | Acc_inj (mirror) | over-correction | p | "
        "two-sided | check |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, r in result["runs"].items():
        pv = r["p_vs"].get(base, {})
        std = (r["flips"], r["ori_correct"]) if r.get("bsr") is not None else None
        m = r.get("mirror")
        mir = (m["flips"], m["ori_correct"]) if m else None
        check = r["judge_check"]
        flag = "degenerate: " + "; ".join(check["reasons"]) if check["degenerate"] else "ok"
        label = labels.get(name, name)
        # the p-values' reference is marked, unless its label already says "baseline"
        if name == base and len(result["runs"]) > 1 and label.split(":")[0].strip() != "baseline":
            label += " (baseline)"
        lines.append(
            f"| {label} | {r['n']} | {pct(r['acc_ori'])}{ci(r['acc_ori_ci'])} | {p_value(pv.get('acc_ori'))} | "
            f"{pct(r.get('acc_inj'))} | {rate(r, 'bsr', std)} | {p_value(pv.get('bsr'))} | "
            f"{pct(r.get('acc_inj_mirror'))} | {rate(r, 'overcorrection', mir)} | "
            f"{p_value(pv.get('overcorrection'))} | {pct(r.get('two_sided'))} | {flag} |"
        )
    biases = result["biases"] if isinstance(result["biases"], str) else ", ".join(result["biases"])
    against = (
        f"p = McNemar exact against `{base}` on the same probes (Acc_ori: original-view correctness; BSR and "
        "over-correction: per-probe flips). "
        if len(result["runs"]) > 1
        else ""
    )
    lines += [
        "",
        f"Pooled over: {biases}. {SIDE_NOTE.replace('p = McNemar exact, original vs injected view.', '')}"
        f"{against}A degenerate judge's rates are not interpretable.",
    ]
    return "\n".join(lines) + "\n"


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


def baselines_markdown(baselines: dict[str, Any]) -> list[str]:
    """The report's section: a row per heuristic and the confounding sentences."""
    rows = baselines["heuristics"]
    pairwise = any("bsr" in r for r in rows.values())
    lines = ["", "## Cue-only baselines (no model)", ""]
    if pairwise:
        lines += [
            "| heuristic | Acc_ori | decided originals | Acc_ori on those | Acc_inj | BSR | Acc_inj (mirror) "
            "| over-correction |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {name} | {pct(r['acc_ori'])} | {r.get('decided_ori', '–')} | {pct(r.get('acc_decided'))} | "
            f"{pct(r['acc_inj'])} | {pct(r['bsr'])} | {pct(r.get('acc_inj_mirror'))} | {pct(r.get('overcorrection'))} |"
            for name, r in rows.items()
        ]
    else:
        lines += [
            "| heuristic | n pairs | accuracy (chosen vs rejected) | decided pairs | accuracy on those |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {name} | {r['n']} | {pct(r['acc_ori'])} | {r['decided_ori']} | {pct(r['acc_decided'])} |"
            for name, r in rows.items()
        ]
    lines += [
        "",
        "Each heuristic is scored as a judge on the same items (ties are wrong; see "
        "biasaware/evaluation/baselines.py).",
    ]
    lines += [f"Warning: {line}." for line in baselines["confounded"]] or [
        f"No heuristic is clearly away from 50% on the original views it decides (checked from {MIN_DECIDED} "
        "decided views on)."
    ]
    return lines


def master_key_markdown(table: dict[str, Any], labels: dict[str, str] | None = None) -> str:
    """Judges side by side on the master-key probes (:func:`biasaware.evaluation.compare.compare_master_keys`):
    false positives overall and per key type, over-correction on the short-correct mirror probes, Acc_ori,
    with McNemar p against the baseline."""
    labels = labels or {}
    base = table["baseline"]
    types = list(next(iter(table["runs"].values()))["per_key_type"])
    both = any(r.get("reference") for r in table["runs"].values())  # pairwise judges asked both orders
    lines = [
        "| judge | false positives | p | "
        + ("both orders | p | " if both else "")
        + " | ".join(types)
        + " | over-correction (short correct vs long wrong) | p | Acc_ori | check |",
        "|---|---:|---:|" + "---:|---:|" * both + "---:|" * len(types) + "---:|---:|---:|---|",
    ]
    for name, r in table["runs"].items():
        pv = r["p_vs"].get(base, {})
        check = r["judge_check"]
        flag = "degenerate: " + "; ".join(check["reasons"]) if check["degenerate"] else "ok"
        per_type = " | ".join(
            f"{pct(r['per_key_type'][t]['fpr'])} ({r['per_key_type'][t]['false_positives']}/{r['per_key_type'][t]['n']})"
            for t in types
        )
        oc = (
            f"{pct(r['overcorrection'])}{ci(r['overcorrection_ci'])} ({r['mirror_flips']}/{r['mirror_ori_correct']})"
            if r.get("mirror_ori_correct") is not None
            else "–"
        )
        ref = r.get("reference")
        orders = (
            (
                f"{pct(ref['fpr'])}{ci(ref['fpr_ci'])} ({ref['false_positives']}/{ref['n']}) | "
                f"{p_value(pv.get('reference_fpr'))} | "
                if ref
                else "– | – | "
            )
            if both
            else ""
        )
        lines.append(
            f"| {labels.get(name, name)} | {pct(r['fpr'])}{ci(r['fpr_ci'])} ({r['false_positives']}/{r['n']}) | "
            f"{p_value(pv.get('fpr'))} | {orders}{per_type} | {oc} | {p_value(pv.get('overcorrection'))} | "
            f"{pct(r['acc_ori'])}{ci(r['acc_ori_ci'])} | {flag} |"
        )
    lines += [
        "",
        "False positives: key views (a non-answer against the real answer) not decided for the real answer (key "
        "picked, tie or no readable verdict)."
        + (
            " Both orders: the reward rule of a reward against a reference, a key not punished (the real answer "
            "not picked in both answer orders), over the probes asked both ways."
            if both
            else ""
        )
        + " Over-correction: flips from a right original on the mirror probes, "
        f"where a short correct answer faces a long wrong one. p = McNemar exact against `{base}` on the same probes.",
    ]
    return "\n".join(lines) + "\n"
