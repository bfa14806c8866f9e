"""How fluently the template rewrites read on real answers: the ``fluency`` verifier's gaps per bias and side.

The injected probes of ``build real`` (the same source pairs, seed and rewriter; ``--n`` per bias and side) are
built again with ``--verifier fluency`` and a margin no gap reaches, so every probe is kept with its gap
(:mod:`biasaware.data.fluency`). Beside them, the reference: the gaps of sentences the answers' writers wrote
themselves (:func:`~biasaware.data.fluency.natural_gaps`). Printed per bias and side: the probes, the median and
90th percentile gap, and the share over each margin.

    .venv/bin/python bench/real_fluency.py --data runs/real/data --n 20 \\
        --json docs/results/real/fluency.json

``--data`` is a folder written by ``biasaware build real`` (or ``quickstart --real``'s ``out/data``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from record import add_json_argument, at_least, run_main, write_record

from biasaware.data.builders import BuildConfig, build_bench
from biasaware.data.fluency import DEFAULT_MODEL, MARGIN, FluencyScorer, natural_gaps
from biasaware.io import read_records

MARGINS = (0.5, MARGIN, 2.0)


def summary(gaps: list[float]) -> dict:
    """The median, 90th percentile and largest gap, and the share over each margin (percent)."""
    if not gaps:
        return {"n": 0}
    ordered = sorted(gaps)
    return {
        "n": len(gaps),
        "median": round(statistics.median(gaps), 3),
        "p90": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 3),
        "max": round(ordered[-1], 3),
        "over": {str(m): round(100 * sum(g > m for g in gaps) / len(gaps), 1) for m in MARGINS},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="a build real folder")
    parser.add_argument("--n", type=at_least(1), default=20, help="probes per bias and side")
    parser.add_argument("--natural", type=at_least(1), default=100, help="answers for the natural reference")
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"the language model scoring fluency (default {DEFAULT_MODEL})"
    )
    parser.add_argument("--work", help="the probe folder (default: a temporary one)")
    add_json_argument(parser)
    args = parser.parse_args()
    source = Path(args.data) / "probe-pairs.jsonl"
    work = Path(args.work or tempfile.mkdtemp(prefix="fluency-"))
    t0 = time.perf_counter()
    config = BuildConfig(
        source=str(source),
        n_per_bias=args.n,
        seed=0,
        verifier="fluency",
        fluency_margin=1e9,
        direction="both",
        llm={"model": args.model},
    )
    manifest = build_bench(config, work)
    per_bias = {}
    for path in sorted(work.glob("*.jsonl")):
        gaps = [p.meta["fluency_gap"] for p in read_records(path, "probe") if "fluency_gap" in p.meta]
        if gaps:
            side = "mirror" if path.stem.endswith("-mirror") else "standard"
            per_bias[f"{path.stem.removesuffix('-mirror')} {side}"] = summary(gaps)
    built = time.perf_counter() - t0
    scorer = FluencyScorer(args.model)
    natural = summary(natural_gaps(read_records(source, "pair"), scorer, args.natural, seed=0))
    print(
        f"{'bias and side':28} {'n':>4} {'median':>7} {'p90':>7} "
        + " ".join(f"{'>' + str(m):>6}" for m in MARGINS)
    )
    for name, row in {**per_bias, "natural sentences": natural}.items():
        over = " ".join(f"{row['over'][str(m)]:6.1f}" for m in MARGINS)
        print(f"{name:28} {row['n']:4d} {row['median']:7.3f} {row['p90']:7.3f} {over}")
    write_record(
        args.json,
        {
            "model": args.model,
            "n_per_bias": args.n,
            "source_pairs": manifest["source_pairs"],
            "margins": list(MARGINS),
            "per_bias": per_bias,
            "natural": natural,
            "seconds": {"probes": round(built, 1), "total": round(time.perf_counter() - t0, 1)},
        },
    )


if __name__ == "__main__":
    run_main(main)
