"""Benchmark: LLM rewrites through the build path at concurrency 1 vs 64.

Starts the localhost OpenAI-compatible endpoint (:mod:`biasaware.judging.fake_server`) with a fixed
latency per request, then runs ``build_bench`` with the LLM rewriter on the built-in corpus
(one superficial bias, ``--items`` items, two rewrites each: 1,000 rewrites by default) once per
concurrency, each with a fresh cache, and prints the wall times, their ratio and the latency
bound (calls x latency / concurrency: identical requests are sent once).

    .venv/bin/python bench/llm_rewrites.py            # 1,000 rewrites, 100 ms, concurrency 1 and 64
    .venv/bin/python bench/llm_rewrites.py --items 100
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from contextlib import contextmanager

from record import add_json_argument, at_least, run_main, write_record

from biasaware.data.builders import BuildConfig, build_bench
from biasaware.judging.fake_server import FakeChatServer


def _serve(latency: float, ports, stop) -> None:
    with FakeChatServer(latency=latency) as server:
        ports.put(server.base_url)
        stop.wait()


@contextmanager
def endpoint(latency: float):
    """The endpoint in its own process, as a real server would be (no shared GIL with the client)."""
    ctx = mp.get_context("spawn")
    ports, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_serve, args=(latency, ports, stop), daemon=True)
    proc.start()
    try:
        yield ports.get(timeout=60)
    finally:
        stop.set()
        proc.join(timeout=10)


def run(base_url: str, items: int, concurrency: int) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = BuildConfig(
            biases="authority",
            n_per_bias=items,
            rewriter="llm",
            verifier="rule",
            llm={
                "model": "bench",
                "base_url": base_url,
                "concurrency": concurrency,
                "cache_dir": f"{tmp}/cache",
                "progress": False,
            },
        )
        t0 = time.perf_counter()
        manifest = build_bench(cfg, f"{tmp}/out")
        return time.perf_counter() - t0, manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--items", type=at_least(1), default=500, help="items; each needs 2 rewrites (default 500)"
    )
    parser.add_argument(
        "--latency", type=at_least(0, float), default=0.1, help="seconds per request (default 0.1)"
    )
    parser.add_argument(
        "--concurrency",
        type=at_least(1),
        nargs=2,
        default=[1, 64],
        metavar=("LOW", "HIGH"),
        help="the two concurrencies compared (default 1 64)",
    )
    add_json_argument(parser)
    args = parser.parse_args()
    rewrites = 2 * args.items
    times, runs = {}, {}
    with endpoint(args.latency) as base_url:
        for c in args.concurrency:
            seconds, manifest = run(base_url, args.items, c)
            calls = manifest["llm"]["rewriter"]["calls"]  # identical requests are sent once
            times[c] = seconds
            bound = calls * args.latency / c
            runs[str(c)] = {
                "rewrites": rewrites,
                "calls": calls,
                "seconds": round(seconds, 2),
                "bound": round(bound, 2),
            }
            print(
                f"concurrency {c:3d}: {rewrites} rewrites ({calls} calls) in {seconds:7.2f}s  "
                f"(latency bound {bound:.2f}s; {seconds / bound:.2f}x the bound)"
            )
    low, high = args.concurrency
    print(f"speed-up {low} -> {high}: {times[low] / times[high]:.1f}x")
    write_record(
        args.json,
        {"latency": args.latency, "concurrency": runs, "speed_up": round(times[low] / times[high], 1)},
    )


if __name__ == "__main__":
    run_main(main)
