"""What running a call's common prefix once saves a direct-verdict judge, against whole prompts in the
same run, on the generative study's benchmark views; and what it changes in the verdicts.

The generative study scores every checkpoint on a fixed benchmark (``build_bench_once``: the cpu
preset's 55 probes a side of the five trained cues, both views of each). Every view is rendered from
one template, so the prompts share their first tokens; ``DirectVerdictJudge`` runs that prefix once per
call and each batch on the rest (``biasaware/judging/judges.py``, "Shared prefix"). Here the same
judge judges the same views both ways, chunk by chunk as an evaluation calls it (``chunk_views``
views a call), alternating which way goes first, so the machine's drift weighs on both alike.
Printed and recorded: seconds per view each way (a call judges its distinct views once, as an
evaluation does; the rate is per view asked), the speed-up, the prefix's share of the tokens run, and
how many verdicts flipped and how far P(A) moved. Give it the cores alone: beside another torch
process on the same cores the two ways' times scatter so much that their ratio says little.

    .venv/bin/python bench/shared_prefix.py                               # smollm2, every view
    .venv/bin/python bench/shared_prefix.py --views 256 --model runs/generative/seed-0/ckpt/start-sft
    .venv/bin/python bench/shared_prefix.py --json docs/results/bench/shared-prefix.json
    .venv/bin/python bench/shared_prefix.py --model runs/generative/seed-0/ckpt/start-sft --reference

``--reference`` also judges the views in float32 with whole prompts and counts, for each way, the verdicts
that differ from it and how far P(A) moved: in bfloat16 both ways round, each its own way.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import torch
from record import add_json_argument, at_least, run_main, write_record  # bench/, next to this script

from biasaware.devices import resolve_device
from biasaware.experiments.generative import TRAINED_CUES, build_bench_once, make_budget, study_precision
from biasaware.io import read_records
from biasaware.judging.judges import DirectVerdictJudge, JudgeSpec


def timed(judge: DirectVerdictJudge, views, shared: bool, cache_arg) -> tuple[float, list[float]]:
    """Seconds and P(A) per view of one call, the prefix shared or not."""
    judge.cache_arg = cache_arg if shared else None
    t = time.perf_counter()
    out = judge.judge(views)
    judge.cache_arg = cache_arg
    return time.perf_counter() - t, [o.scores["A"] for o in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m-instruct", help="a built-in name or a checkpoint folder")
    ap.add_argument("--views", type=at_least(0), default=0, help="the first N views only (0: all)")
    ap.add_argument(
        "--dtype",
        default="auto",
        help="the judge's weights (auto: the study's own: bfloat16 where the device computes it, else float32)",
    )
    ap.add_argument(
        "--reference",
        action="store_true",
        help="also judge the views in float32 with whole prompts and count how far each way is from it",
    )
    add_json_argument(ap)
    args = ap.parse_args()
    budget = make_budget("cpu")
    work = Path(tempfile.mkdtemp(prefix="bench-prefix-"))
    build_bench_once(work, budget)
    probes = [p for p in read_records(work / "bench", "probe") if p.bias in TRAINED_CUES]
    views = [v for p in probes for v in (p.original, p.injected)]
    views = views[: args.views] if args.views else views
    dtype = args.dtype
    if dtype == "auto":
        dtype = study_precision(work, resolve_device("auto"), "auto")
    judge = DirectVerdictJudge(
        JudgeSpec(name=args.model, mode="direct", template=budget.template, dtype=dtype)
    )
    cache_arg = judge.cache_arg
    if cache_arg is None:
        raise SystemExit(f"{args.model}: its forward takes no cache; there is nothing to compare")
    chunks = [views[i : i + judge.chunk_views] for i in range(0, len(views), judge.chunk_views)]
    prefixes, distinct, tokens, shared_tokens = [], 0, 0, 0
    for chunk in chunks:  # what each call runs: its distinct prompts, and the prefix they share
        prepared = judge.prepare(chunk)
        run = [i for b in prepared.batches for i in b]
        prefixes.append(prepared.prefix)
        distinct += len(run)
        tokens += sum(len(prepared.ids[i]) for i in run)
        shared_tokens += prepared.prefix * len(run)
    share = shared_tokens / tokens
    judge.judge(views[:8])  # warm-up
    seconds = {"whole": 0.0, "shared": 0.0}
    p_a: dict[str, list[float]] = {"whole": [], "shared": []}
    for k, chunk in enumerate(chunks):
        for way in ("whole", "shared") if k % 2 == 0 else ("shared", "whole"):
            s, p = timed(judge, chunk, way == "shared", cache_arg)
            seconds[way] += s
            p_a[way].extend(p)
    per = {w: seconds[w] / len(views) for w in seconds}
    flips = sum((a > 0.5) != (b > 0.5) for a, b in zip(p_a["whole"], p_a["shared"], strict=True))
    shift = max(abs(a - b) for a, b in zip(p_a["whole"], p_a["shared"], strict=True))
    print(
        f"\n{args.model} ({judge.dtype}, {torch.get_num_threads()} threads), {len(views)} views "
        f"({distinct} distinct) in {len(chunks)} calls; prefix {min(prefixes)}-{max(prefixes)} tokens, "
        f"{100 * share:.1f}% of the tokens run"
    )
    print("\n| judged | s a view | speed-up | what sharing changed |\n|---|---:|---:|---|")
    print(f"| whole prompts | {per['whole']:.4f} | 1.00x | |")
    print(
        f"| prefix shared | {per['shared']:.4f} | {per['whole'] / per['shared']:.2f}x | {flips} of "
        f"{len(views)} verdicts flipped; P(A) moved at most {shift:.2g} |"
    )
    against = {}
    if args.reference:  # float32, whole prompts: which way's rounding strays further from it
        judge = DirectVerdictJudge(
            JudgeSpec(name=args.model, mode="direct", template=budget.template, dtype="float32")
        )
        judge.cache_arg = None
        ref = [o.scores["A"] for c in chunks for o in judge.judge(c)]
        for way, got in p_a.items():
            against[way] = {
                "verdicts_differ": sum((a > 0.5) != (b > 0.5) for a, b in zip(ref, got, strict=True)),
                "max_p_a_shift": float(f"{max(abs(a - b) for a, b in zip(ref, got, strict=True)):.3g}"),
                "mean_p_a_shift": float(
                    f"{sum(abs(a - b) for a, b in zip(ref, got, strict=True)) / len(ref):.3g}"
                ),
            }
            print(
                f"against float32, whole prompts: {way} differs in {against[way]['verdicts_differ']} of {len(ref)} "
                f"verdicts; P(A) by at most {against[way]['max_p_a_shift']:.2g}, on average {against[way]['mean_p_a_shift']:.2g}"
            )
    write_record(
        args.json,
        {
            "model": args.model,
            "dtype": str(judge.dtype).removeprefix("torch."),
            "views": len(views),
            "distinct_views": distinct,
            "calls": len(chunks),
            "prefix_tokens": [min(prefixes), max(prefixes)],
            "prefix_share_of_tokens": round(share, 4),
            "seconds_per_view": {w: round(s, 4) for w, s in per.items()},
            "speedup": round(per["whole"] / per["shared"], 2),
            "verdicts_flipped": flips,
            "max_p_a_shift": float(f"{shift:.3g}"),
            **({"against_float32_whole": against} if against else {}),
        },
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    run_main(main)
