"""Verdict parsers on long adversarial replies: time per parser at 10k and 100k characters.

    python bench/parsers.py                 # every parser, every filler
    python bench/parsers.py --repeat 5

A parser that backtracks over its input grows quadratically: 10x the characters, 100x the time.
Printed per parser: the worst filler's milliseconds at 10k and 100k characters, the growth ratio
(100k / 10k; linear is about 10) and whether 100k stays under the 50 ms goal. The baseline in the
same run is ``str.rstrip`` plus one ``str.count`` over the same text (what any parser must at
least read), so the ratio column ``x read`` says how many passes over the text a parser costs.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

from record import add_json_argument, at_least, run_main, write_record

from biasaware.judging.parsers import PARSERS
from biasaware.judging.score_prompts import parse_score, parse_template

FILLERS = [
    " ",
    "\n",
    "*",
    "[[",
    "[[A",
    "<answer>",
    "<answer>A",
    "Result:",
    "**Result:** ",
    "[RESULT]",
    "final decision is ",
    "Output (",
    "(a",
    "A",
    "AB",
    "Assistant 1: 8\n",
    "8 ",
    "[RESULT] 4 ",
    "[result] iv",
    "[RESULT] (",
    "iv",
]
# the pointwise score parser (eval scoring), under numeric and roman ids
SCORE_PARSERS = {
    "score": partial(parse_score, template=parse_template("baseline")),
    "score-roman": partial(parse_score, template=parse_template("roman")),
}
GOAL_MS = 50.0


def best_ms(fn, text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t0)
    return 1000 * min(times)


def read_once(text: str) -> None:
    text.rstrip()
    text.count("A")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--repeat", type=at_least(1), default=3, help="timed rounds per parser, the best kept (default 3)"
    )
    add_json_argument(ap)
    args = ap.parse_args()
    rows = {}
    print(
        f"{'parser':11s} {'10k ms':>8s} {'100k ms':>8s} {'growth':>7s} {'x read':>7s}  worst filler   < {GOAL_MS:.0f} ms"
    )
    ok = True
    for name, parse in {**PARSERS, **SCORE_PARSERS}.items():
        worst = None
        for filler, (head, tail) in ((f, ht) for f in FILLERS for ht in (("", ""), ("1", "x"))):
            small = head + filler * (10_000 // len(filler)) + tail  # alone, and after a number (judgelm)
            large = head + filler * (100_000 // len(filler)) + tail
            t10, t100 = best_ms(parse, small, args.repeat), best_ms(parse, large, args.repeat)
            base = best_ms(read_once, large, args.repeat)
            if worst is None or t100 > worst[1]:
                worst = (t10, t100, head + filler + tail, base)
        t10, t100, filler, base = worst
        ok &= t100 < GOAL_MS
        rows[name] = {
            "ms_10k": round(t10, 2),
            "ms_100k": round(t100, 2),
            "growth": round(t100 / max(t10, 1e-6), 1),
            "x_read": round(t100 / max(base, 1e-6), 1),
            "worst_filler": filler,
        }
        print(
            f"{name:11s} {t10:8.2f} {t100:8.2f} {t100 / max(t10, 1e-6):7.1f} {t100 / max(base, 1e-6):7.1f}  "
            f"{filler!r:14s} {'yes' if t100 < GOAL_MS else 'NO'}"
        )
    print("all parsers under the goal" if ok else "some parser is over the goal")
    slowest = max(rows, key=lambda n: rows[n]["ms_100k"])
    write_record(args.json, {"goal_ms": GOAL_MS, "parsers": rows, "slowest": slowest, "all_under_goal": ok})
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
