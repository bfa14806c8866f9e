"""Benchmark the judges of the evaluation path against baselines measured in the same run.

1. Reward-model scoring (``RewardModelJudge.judge``: deduplicated, length-sorted batches) vs a
   one-example-at-a-time loop over the same views (goal: at least 5x), and vs one text at a time
   over the distinct texts only (the share of batching alone).
2. The same eval path vs the bare model forward over the same pre-tokenised, length-sorted
   batches (goal: overhead at most 15%).
3. Direct-verdict mode (one forward pass per view) vs generation mode with the default template
   (``--gen-tokens`` new tokens per view, greedy) on the same views (goal: at least 5x).

    .venv/bin/python bench/judge_scoring.py                    # minilm-l6 and smollm2-135m-instruct
    .venv/bin/python bench/judge_scoring.py --views 64 --gen-views 8
    .venv/bin/python bench/judge_scoring.py --judge runs/ckpt/smollm2-135m-instruct-sft   # a judge that reasons
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

import torch
from record import add_json_argument, at_least, run_main, write_record

from biasaware.data.builders import BuildConfig, build_bench
from biasaware.evaluation.runner import load_probes
from biasaware.judging.judges import JudgeSpec, load_judge


def clock(fns: dict, repeat: int = 3) -> dict[str, float]:
    """Best wall time of each function over ``repeat`` rounds, run in turn (load drifts hit all)."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, f in fns.items():
            t0 = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rm", default="minilm-l6", help="the reward model (a built-in name or a folder; default minilm-l6)"
    )
    parser.add_argument(
        "--judge",
        default="smollm2-135m-instruct",
        help="the generative judge for direct vs generation (default smollm2-135m-instruct)",
    )
    parser.add_argument(
        "--views", type=at_least(1), default=256, help="views for the reward-model benchmarks"
    )
    parser.add_argument("--gen-views", type=at_least(1), default=16, help="views for direct vs generation")
    parser.add_argument(
        "--gen-tokens", type=at_least(1), default=128, help="new tokens per view in generation mode"
    )
    parser.add_argument("--batch-size", type=at_least(1), default=16, help="reward-model batch size")
    parser.add_argument(
        "--repeat", type=at_least(1), default=5, help="rounds for the reward-model timings (best of)"
    )
    parser.add_argument(
        "--gen-batch-size",
        type=at_least(1),
        default=8,
        help="direct and generation batch size (CLI default 8)",
    )
    add_json_argument(parser)
    args = parser.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        build_bench(BuildConfig(n_per_bias=max(4, args.views // 18), corpus_size=600), tmp)
        probes = load_probes(tmp)
    views = [
        v
        for p in probes
        if p.bias not in ("bandwagon", "reflection", "position")
        for v in (p.original, p.injected)
    ]
    views = views[: args.views]

    rm = load_judge(JudgeSpec(name=args.rm, mode="reward", batch_size=args.batch_size, device="cpu"))
    texts = list(
        dict.fromkeys(
            rm.texts(v.prompt, r)[0]
            for v in views
            for r in (v.response_a, v.response_b)  # (text, cut)
        )
    )

    def loop_views():  # what a script without the eval path does: both responses of every view
        for v in views:
            for response in (v.response_a, v.response_b):
                enc = rm.tokenizer(
                    rm.texts(v.prompt, response)[0],
                    truncation=True,
                    max_length=rm.limit,
                    return_tensors="pt",
                )
                with torch.no_grad():
                    rm.model(**enc)

    def loop():  # the same, over the distinct texts only, rendered beforehand
        for t in texts:
            enc = rm.tokenizer(t, truncation=True, max_length=rm.limit, return_tensors="pt")
            with torch.no_grad():
                rm.model(**enc)

    order = sorted(texts, key=lambda t: len(rm.tokenizer(t, add_special_tokens=False)["input_ids"]))
    batches = [
        rm.tokenizer(
            order[i : i + args.batch_size],
            padding=True,
            truncation=True,
            max_length=rm.limit,
            return_tensors="pt",
        )
        for i in range(0, len(order), args.batch_size)
    ]

    def bare():
        for enc in batches:
            with torch.no_grad():
                rm.model(**enc)

    t = clock({"path": lambda: rm.judge(views), "loop": loop, "views": loop_views, "bare": bare}, args.repeat)
    t_path, t_loop, t_views, t_bare = t["path"], t["loop"], t["views"], t["bare"]
    print(f"reward model {args.rm}: {len(views)} views, {len(texts)} distinct texts, batch {args.batch_size}")
    print(
        f"  eval path {t_path:.3f}s | one view at a time {t_views:.3f}s | one distinct text at a time "
        f"{t_loop:.3f}s | bare forward on pre-tokenised batches {t_bare:.3f}s"
    )
    print(f"  speed-up vs one view at a time (2 forwards per view): {t_views / t_path:.1f}x (goal >= 5x)")
    print(f"  speed-up vs one distinct text at a time (batching alone): {t_loop / t_path:.1f}x")
    print(f"  overhead vs bare forward: {100 * (t_path / t_bare - 1):+.1f}% (goal <= 15%)")
    reward = {
        "model": args.rm,
        "views": len(views),
        "distinct_texts": len(texts),
        "batch_size": args.batch_size,
        "repeat": args.repeat,
        "seconds": {k: round(v, 3) for k, v in t.items()},
        "speed_up_vs_views": round(t_views / t_path, 1),
        "speed_up_vs_texts": round(t_loop / t_path, 1),
        "overhead_vs_bare_pct": round(100 * (t_path / t_bare - 1), 1),
    }

    gen_views = views[: args.gen_views]
    direct = load_judge(
        JudgeSpec(name=args.judge, mode="direct", batch_size=args.gen_batch_size, device="cpu")
    )
    cache = tempfile.mkdtemp(prefix="bench-cache-")  # a fresh reply cache: every generation is real
    spec = JudgeSpec(
        name=args.judge,
        max_tokens=args.gen_tokens,
        batch_size=args.gen_batch_size,
        device="cpu",
        cache_dir=cache,
    )
    gen = load_judge(spec)
    _ = gen.client.backend  # load the model outside the timing
    direct.judge(gen_views[:1])  # first-call allocations outside the timing
    t = clock({"direct": lambda: direct.judge(gen_views), "gen": lambda: gen.judge(gen_views)}, repeat=1)
    t_direct, t_gen = t["direct"], t["gen"]
    print(f"judge {args.judge}: {len(gen_views)} views, batch {args.gen_batch_size}")
    print(
        f"  direct verdict {t_direct:.2f}s | generation ({args.gen_tokens} new tokens, greedy) {t_gen:.2f}s"
    )
    stats = gen.client.stats
    print(
        f"  generation produced {stats.completion_tokens / max(stats.calls, 1):.0f} new tokens per view on average"
    )
    print(f"  speed-up: {t_gen / t_direct:.1f}x (goal >= 5x)")
    direct_vs_generate = {
        "judge": args.judge,
        "views": len(gen_views),
        "batch_size": args.gen_batch_size,
        "max_new_tokens": args.gen_tokens,
        "seconds": {k: round(v, 2) for k, v in t.items()},
        "new_tokens_per_view": round(stats.completion_tokens / max(stats.calls, 1), 1),
        "speed_up": round(t_gen / t_direct, 1),
    }
    write_record(args.json, {"reward": reward, "direct_vs_generate": direct_vs_generate})
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    run_main(main)
