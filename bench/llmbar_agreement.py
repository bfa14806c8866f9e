"""The ``llmbar`` parsers against LLMBar's own parsed winners on its released evaluator runs.

    python bench/llmbar_agreement.py --released DIR [--json OUT]

``DIR`` holds LLMBar's released ``result.json`` files (its repository's
``Dataset/<set>/evaluators/<evaluator>/<prompt>/result.json``, laid out the same way under ``DIR``,
or any folder tree of them: the prompt is the ``result.json`` file's folder name). Each item's
``results`` hold the reply of each order (``swap = False`` / ``swap = True``) and LLMBar's parsed
``winner`` (``"1"`` / ``"2"``: ``output_1`` / ``output_2``, whatever order they were shown in).

Per reply, the prompt decides the format: a name with ``CoT`` is ``llmbar-cot`` (LLMBar's rule:
"Output (x) is better." anywhere), any other ``llmbar`` (a line starting "Output (x)"). Both the
native reading (``--parse native``) and the strict default are applied and mapped back to
``output_1`` / ``output_2`` (a swapped reply's "Output (a)" is ``output_2``).

Printed and written (``--json``): per prompt and overall, the replies where LLMBar's winner is
``1`` or ``2`` (``decided``), how often native agrees with it, how often strict agrees, how often
strict calls the reply invalid (the documented stricter cases: two different verdicts) and how often
strict names the other output (should be none).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from record import results_path, run_main

from biasaware.errors import BiasAwareError
from biasaware.judging.parsers import get_parser

ORDERS = {"swap = False": {"A": "1", "B": "2"}, "swap = True": {"A": "2", "B": "1"}}


def template_of(prompt: str) -> str:
    return "llmbar-cot" if "cot" in prompt.lower() else "llmbar"


def count(path: Path, counts: Counter) -> None:
    prompt = path.parent.name
    template = template_of(prompt)
    native, strict = get_parser(template, "native"), get_parser(template, "strict")
    try:
        items = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BiasAwareError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise BiasAwareError(f"{path}: not LLMBar's result.json (a list of items, each with its results)")
    for item in items:
        for result in item.get("results") or []:
            if not isinstance(result, dict):
                raise BiasAwareError(f"{path}: an item's results are not LLMBar's (a list of objects)")
            for order, letters in ORDERS.items():
                run = result.get(order)
                if not isinstance(run, dict):
                    continue
                completion = run.get("completion")
                reply = completion[0] if isinstance(completion, list) and completion else completion
                winner = str(run.get("winner"))
                counts["replies"] += 1
                if winner not in ("1", "2") or not isinstance(reply, str):
                    counts["undecided"] += 1
                    continue
                counts["decided"] += 1
                n, s = native(reply), strict(reply)
                counts["native_agrees"] += letters.get(n) == winner
                counts["strict_agrees"] += letters.get(s) == winner
                counts["strict_invalid"] += s not in letters
                counts["strict_other"] += s in letters and letters[s] != winner


def rates(c: Counter) -> dict:
    d = c["decided"] or 1
    return {
        **{
            k: c[k]
            for k in (
                "replies",
                "undecided",
                "decided",
                "native_agrees",
                "strict_agrees",
                "strict_invalid",
                "strict_other",
            )
        },
        "native_agreement": round(c["native_agrees"] / d, 4),
        "strict_agreement": round(c["strict_agrees"] / d, 4),
        "strict_invalid_rate": round(c["strict_invalid"] / d, 4),
        "strict_other_rate": round(c["strict_other"] / d, 4),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--released", required=True, help="a folder of LLMBar's released result.json files")
    ap.add_argument("--json", type=results_path, help="write the counts and rates here")
    args = ap.parse_args()
    root = Path(args.released)
    files = sorted(root.rglob("result.json"))
    if not files:
        print(f"no result.json under {root}", file=sys.stderr)
        return 2
    per_prompt: dict[str, Counter] = {}
    per_file: dict[str, Counter] = {}
    for path in files:
        c = Counter()
        count(path, c)
        per_file[str(path.relative_to(root))] = c
        per_prompt.setdefault(path.parent.name, Counter()).update(c)
    overall = sum(per_prompt.values(), Counter())
    print(
        f"{'prompt':12s} {'format':10s} {'decided':>8s} {'native':>8s} {'strict':>8s} {'invalid':>8s} {'other':>6s}"
    )
    for name, c in [*sorted(per_prompt.items()), ("overall", overall)]:
        r = rates(c)
        fmt = template_of(name) if name != "overall" else ""
        print(
            f"{name:12s} {fmt:10s} {r['decided']:8d} {100 * r['native_agreement']:7.1f}% "
            f"{100 * r['strict_agreement']:7.1f}% {100 * r['strict_invalid_rate']:7.1f}% {r['strict_other']:6d}"
        )
    if args.json:
        result = {
            "command": f"python bench/llmbar_agreement.py --released DIR --json {args.json}",
            "files": {k: rates(v) for k, v in per_file.items()},
            "per_prompt": {k: {"format": template_of(k), **rates(v)} for k, v in sorted(per_prompt.items())},
            "overall": rates(overall),
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
