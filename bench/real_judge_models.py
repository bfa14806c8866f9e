"""Which reward model the real-text experiment trains: accuracy against time, per candidate model.

Each model is trained as the experiment's baseline arm (``biasaware.experiments.real_study``: the same natural
pairs drawn with the same seed, the same reward recipe and config, texts cut to 256 tokens) on a small budget,
then judged by ``eval real`` on the same seeded sample of every set. Printed per model: training seconds,
evaluation seconds, and the accuracies the experiment reports; the ratios are against the first model, from the
same run.

    .venv/bin/python bench/real_judge_models.py --data runs/real/data
    .venv/bin/python bench/real_judge_models.py --data runs/real/data --pairs 96 --limit 40 \\
        --models minilm-l6,smollm2-135m-instruct --json docs/results/bench/real-judge-models.json

``--data`` is a folder written by ``biasaware build real`` (or ``quickstart --real``'s ``out/data``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from record import add_json_argument, at_least, run_main, write_record

from biasaware.devices import where
from biasaware.evaluation.real_text import pair_outcomes
from biasaware.experiments.real_study import METRICS, SeedRun, metric_value

SHOWN = ("heldout", "human labels", "rm-bench hard", "rm-bench easy", "curated", "key false positives")


def bench_model(model: str, data: Path, pairs: int, limit: int, seed: int, work: Path) -> dict:
    run = SeedRun(
        work / model.replace("/", "_"), seed, data, {"model": model, "pairs": pairs, "limit": limit}
    )
    run.probe_limit = 1  # the probes are the experiment's; this bench compares the pairs' accuracies
    run.out.mkdir(parents=True, exist_ok=True)
    run.pairs("natural")
    run.rows("paper")
    place = where("cpu", "auto")
    ((_, _, train),) = run.training("baseline", place)
    t0 = time.perf_counter()
    train()
    trained = time.perf_counter() - t0
    t0 = time.perf_counter()
    run.evaluate("baseline", place)
    judged = time.perf_counter() - t0
    per_pair = pair_outcomes(run.out / "eval" / "baseline")
    return {
        "train_s": round(trained, 1),
        "eval_s": round(judged, 1),
        "pairs": {m: sum(len(per_pair.get(s, {})) for s in METRICS[m][0]) for m in SHOWN},
        **{m: metric_value(per_pair, m) for m in SHOWN},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a `biasaware build real` folder")
    parser.add_argument(
        "--models", default="minilm-l6,smollm2-135m-instruct", help="comma list; the first is the baseline"
    )
    parser.add_argument("--pairs", type=at_least(1), default=96, help="natural training pairs (default 96)")
    parser.add_argument("--limit", type=at_least(1), default=40, help="pairs judged per set (default 40)")
    parser.add_argument("--seed", type=at_least(0), default=0)
    add_json_argument(parser)
    args = parser.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    figures: dict = {"pairs": args.pairs, "limit": args.limit, "seed": args.seed, "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            row = bench_model(model, Path(args.data), args.pairs, args.limit, args.seed, Path(tmp))
            figures["models"][model] = row
            print(
                f"{model}: train {row['train_s']} s, eval {row['eval_s']} s; "
                + "; ".join(f"{m} {row[m]:.1f}" for m in SHOWN if row[m] is not None),
                flush=True,
            )
    first = figures["models"][models[0]]
    for model in models[1:]:
        row = figures["models"][model]
        row["time_vs_first"] = {k: round(row[k] / first[k], 2) for k in ("train_s", "eval_s") if first[k]}
        print(
            f"{model} / {models[0]}: training {row['time_vs_first'].get('train_s')}x, "
            f"evaluation {row['time_vs_first'].get('eval_s')}x; accuracy "
            + "; ".join(
                f"{m} {row[m] - first[m]:+.1f}" for m in SHOWN if row[m] is not None and first[m] is not None
            )
        )
    write_record(args.json, figures)


if __name__ == "__main__":
    run_main(main)
