"""Judge throughput on a GPU: the reward, direct and generate paths against baselines measured in
the same run.

    python bench/gpu_judges.py --rm RM_DIR --lm LM_DIR                  # on a GPU machine
    python bench/gpu_judges.py --device cpu --rm minilm-l6 --lm smollm2-135m-instruct --views 64
                                                                        # the script itself, on a CPU

Without a GPU and without ``--device`` it says so and exits 0. For a GPU machine without model
weights, ``../shared/gpu/make_models.py`` writes random-weight judges of a real shape (speed depends
on the shape, not the weights). Printed per path:

* reward (``--rm``): views/s and tokens/s of the eval path (``judge_chunks`` over the same chunks
  ``eval bias`` uses) at each ``--batch-sizes``; its overhead against the bare forward over the same
  pre-tokenised batches already on the device (goal: within 10%); its speed-up over one view at a
  time (two forwards per view, each read back).
* direct (``--lm``): views/s and tokens/s; speed-up over generation of ``--gen-tokens`` tokens.
* generate (``--lm``): views/s and new tokens/s (a fresh reply cache, so every token is generated).
* processes: ``eval bias --mode reward`` through ``torchrun`` with 1 and with N processes
  (``--procs``, default: the number of GPUs; skipped when that is 1), wall time each, and whether
  the two judgments files are identical.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from record import add_json_argument, at_least, run_main, write_record

from biasaware.data.builders import BuildConfig, build_bench
from biasaware.devices import resolve
from biasaware.evaluation.runner import load_probes
from biasaware.judging.judges import JudgeSpec, judge_chunks, load_judge


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device, repeat: int) -> float:
    """Best of ``repeat`` wall times, the device drained before and after each."""
    best = float("inf")
    for _ in range(repeat):
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        best = min(best, time.perf_counter() - t0)
    return best


def reward_path(args, views, device) -> dict:
    # each batch size's model is freed before the next
    return {str(batch): reward_at(args, views, device, batch) for batch in args.batch_sizes}


def reward_at(args, views, device, batch: int) -> dict:
    judge = load_judge(JudgeSpec(name=args.rm, mode="reward", batch_size=batch, device=args.device or "auto"))
    chunks = [views[i : i + judge.chunk_views] for i in range(0, len(views), judge.chunk_views)]
    prepared = [judge.prepare(c) for c in chunks]  # the bare baseline: the same batches, on the device
    ids = [[p.ids[i] for i in b] for p in prepared for b in p.batches]
    tokens = sum(len(t) for b in ids for t in b)
    on_device = [
        {k: v.to(device) for k, v in judge.tokenizer.pad({"input_ids": b}, return_tensors="pt").items()}
        for b in ids
    ]

    def bare():
        with torch.inference_mode():
            for enc in on_device:
                judge.model(**enc).logits[:, 0].float()

    def path():
        for _ in judge_chunks(judge, chunks):
            pass

    loop_views = views[: args.loop_views]

    def one_at_a_time():
        with torch.inference_mode():
            for v in loop_views:
                for response in (v.response_a, v.response_b):
                    text, _ = judge.texts(v.prompt, response)  # (text, cut)
                    enc = judge.tokenizer(text, return_tensors="pt").to(device)
                    judge.model(**enc).logits[0, 0].item()

    path()  # warm-up: allocations and kernels outside the timing
    t_path, t_bare = timed(path, device, args.repeat), timed(bare, device, args.repeat)
    t_loop = timed(one_at_a_time, device, 1) * len(views) / len(loop_views)
    print(
        f"reward {Path(args.rm).name} batch {batch}: eval path {len(views) / t_path:.0f} views/s, "
        f"{tokens / t_path:.0f} tokens/s ({tokens} tokens, {len(ids)} batches); overhead vs bare forward "
        f"{100 * (t_path / t_bare - 1):+.1f}% (goal <= 10%); vs one view at a time {t_loop / t_path:.1f}x"
    )
    return {
        "views_per_s": round(len(views) / t_path, 1),
        "tokens_per_s": round(tokens / t_path),
        "overhead_vs_bare_pct": round(100 * (t_path / t_bare - 1), 1),
        "x_vs_one_at_a_time": round(t_loop / t_path, 2),
    }


def direct_and_generate(args, views, device) -> dict:
    views = views[: args.gen_views]
    direct = load_judge(
        JudgeSpec(name=args.lm, mode="direct", batch_size=args.gen_batch_size, device=args.device or "auto")
    )
    tokens = sum(len(x) for x in direct.prepare(views).ids)
    direct.judge(views[:2])  # warm-up
    t_direct = timed(lambda: direct.judge(views), device, args.repeat)
    print(
        f"direct {Path(args.lm).name} batch {args.gen_batch_size}: {len(views) / t_direct:.0f} views/s, "
        f"{tokens / t_direct:.0f} prompt tokens/s"
    )
    with tempfile.TemporaryDirectory() as cache:
        gen = load_judge(
            JudgeSpec(
                name=args.lm,
                max_tokens=args.gen_tokens,
                batch_size=args.gen_batch_size,
                device=args.device or "auto",
                cache_dir=cache,
            )
        )
        _ = gen.client.backend  # load the model outside the timing
        t_gen = timed(lambda: gen.judge(views), device, 1)
        new = gen.client.stats.completion_tokens
        print(
            f"generate {Path(args.lm).name} batch {args.gen_batch_size}: {len(views) / t_gen:.1f} views/s, "
            f"{new / t_gen:.0f} new tokens/s ({new / len(views):.0f} per view); direct is {t_gen / t_direct:.1f}x faster"
        )
        gen.client.close()
    return {
        "direct_views_per_s": round(len(views) / t_direct, 1),
        "generate_views_per_s": round(len(views) / t_gen, 2),
        "new_tokens_per_view": round(new / len(views), 1),
        "direct_x_vs_generate": round(t_gen / t_direct, 2),
    }


def processes(args, bench: str) -> dict | None:
    n = args.procs or (torch.cuda.device_count() if torch.cuda.is_available() else 1)
    if n < 2:
        print("processes: one GPU here; 1 vs N processes needs 2 or more (--procs N on a CPU)")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        times = {}
        for k in (1, n):
            cmd = [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nproc_per_node",
                str(k),
                "--master_port",
                "29561",
                "-m",
                "biasaware.cli",
                "eval",
                "bias",
                "--judge",
                args.rm,
                "--mode",
                "reward",
                "--data",
                bench,
                "--out",
                f"{tmp}/{k}",
                "--batch-size",
                str(args.batch_sizes[-1]),
                *(["--device", args.device] if args.device else []),
            ]
            t0 = time.perf_counter()
            run = subprocess.run(
                cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}
            )
            times[k] = time.perf_counter() - t0
            if run.returncode != 0:
                print(f"processes: the {k}-process run failed:\n{run.stderr[-2000:]}")
                return {"failed": k}
        same = (
            Path(f"{tmp}/1/judgments.jsonl").read_bytes() == Path(f"{tmp}/{n}/judgments.jsonl").read_bytes()
        )
        print(
            f"processes: eval bias (reward) 1 process {times[1]:.1f}s, {n} processes {times[n]:.1f}s "
            f"({times[1] / times[n]:.2f}x, start-up included); judgments identical: {same}"
        )
    return {"processes": n, "seconds": {str(k): round(t, 1) for k, t in times.items()}, "identical": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rm", default="minilm-l6", help="reward model (folder or built-in name)")
    parser.add_argument(
        "--lm", default="smollm2-135m-instruct", help="causal judge (folder or built-in name)"
    )
    parser.add_argument(
        "--device", help="run here even without a GPU (cpu, cuda:N, ...); default: GPU or skip"
    )
    parser.add_argument(
        "--views", type=at_least(1), default=1024, help="views for the reward-model rates (default 1024)"
    )
    parser.add_argument(
        "--batch-sizes",
        type=lambda s: [at_least(1)(x) for x in s.split(",")],
        default=[16, 64],
        help="reward-model batch sizes, comma-separated (default 16,64)",
    )
    parser.add_argument(
        "--loop-views", type=at_least(1), default=128, help="views timed one at a time (scaled up)"
    )
    parser.add_argument(
        "--gen-views", type=at_least(1), default=64, help="views for direct vs generation (default 64)"
    )
    parser.add_argument(
        "--gen-tokens",
        type=at_least(1),
        default=128,
        help="new tokens per view when generating (default 128)",
    )
    parser.add_argument(
        "--gen-batch-size", type=at_least(1), default=16, help="direct and generation batch size (default 16)"
    )
    parser.add_argument(
        "--repeat", type=at_least(1), default=3, help="timed rounds, the best kept (default 3)"
    )
    parser.add_argument(
        "--procs", type=at_least(1), help="processes for the 1-vs-N run (default: the GPU count)"
    )
    add_json_argument(parser)
    args = parser.parse_args()
    if args.device is None and not torch.cuda.is_available():
        print("gpu_judges: no GPU here; skipped (pass --device cpu to run the script on the CPU)")
        return
    device, dtype = resolve(args.device or "auto", "auto")
    print(f"device {device}, dtype {dtype}, torch {torch.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        build_bench(BuildConfig(n_per_bias=max(4, args.views // 18 + 1), corpus_size=2500), tmp)
        probes = load_probes(tmp)
        views = [
            v
            for p in probes
            if p.bias not in ("bandwagon", "reflection", "position")
            for v in (p.original, p.injected)
        ][: args.views]
        figures = {
            "device": str(device),
            "dtype": str(dtype).removeprefix("torch."),
            "reward": reward_path(args, views, device),
            "direct_and_generate": direct_and_generate(args, views, device),
            "processes": processes(args, tmp),
        }
    write_record(args.json, figures)


if __name__ == "__main__":
    run_main(main)
