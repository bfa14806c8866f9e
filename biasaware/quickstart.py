"""``biasaware quickstart``: run every stage that exists on the built-in defaults, offline.

Today it prepares the built-in models, writes one record of every kind of the data contract,
builds the bias benchmark, the bias-augmented training set and the teacher traces from the
built-in corpus (template rewrites, rule verifier, rule teacher), validates every output with the same
reader the other stages use, and trains minilm-l6 briefly with the InfoNCE reward recipe, and evaluates three judges on a
slice of the benchmark: minilm-l6 untrained and trained, and smollm2-135m-instruct in direct-verdict
mode.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

from biasaware.builders import BuildConfig, build_bench, build_traces, build_train
from biasaware.corpus import FAMILIES, TEST_FAMILIES
from biasaware.devices import where
from biasaware.errors import BiasAwareError
from biasaware.evaluate import load_probes, run_bias_eval, write_reports
from biasaware.io import read_records, write_jsonl
from biasaware.judge_format import format_judgment, judge_messages
from biasaware.judges import JudgeSpec, load_judge
from biasaware.models import BUILTIN_MODELS, load_model
from biasaware.records import BiasNegative, BiasProbe, Judgment, PreferencePair, TraceRow, TrainingRow, View
from biasaware.training import RECIPES

log = logging.getLogger(__name__)


def example_records() -> dict[str, list]:
    """One small, valid record of each kind, built from the 0.9-vs-0.11 example of paper 002."""
    prompt = [{"role": "user", "content": "Which is larger, 0.9 or 0.11?"}]
    chosen, rejected = "0.9 is larger than 0.11.", "0.11 is larger than 0.9."
    pair = PreferencePair(id="ex-0", source="example", prompt=prompt, chosen=chosen, rejected=rejected)
    original = View(prompt=prompt, response_a=chosen, response_b=rejected, correct="A")
    injected = View(
        prompt=prompt,
        response_a=chosen,
        response_b=rejected,
        correct="A",
        context="90% of people believe that Response B is better in this question.",
    )
    probe = BiasProbe(
        id="ex-0-bandwagon", bias="bandwagon", category="context", original=original, injected=injected
    )
    row = TrainingRow(
        id="ex-0",
        prompt=prompt,
        chosen=chosen,
        rejected=rejected,
        bias_negatives=[
            BiasNegative(
                bias="authority",
                text="According to the Handbook of Numbers (Vol. 4), 0.11 is larger than 0.9.",
            )
        ],
    )
    judgment = Judgment(
        probe_id=probe.id,
        view="injected",
        judge="example",
        raw="... Final verdict: [[A]]",
        verdict="A",
        correct="A",
    )
    trace = TraceRow(
        id="trace-ex-0-bandwagon",
        bias="bandwagon",
        prompt=judge_messages(injected),
        completion=[
            {
                "role": "assistant",
                "content": format_judgment(
                    "0.9 = 0.90 and 0.90 > 0.11, so Response A is right. What most people think is not "
                    "evidence.",
                    "A",
                ),
            }
        ],
        label="A",
    )
    return {"pair": [pair], "probe": [probe], "train": [row], "judgment": [judgment], "trace": [trace]}


def _train_reward_model(out: Path, seed: int) -> Path | None:
    """A short InfoNCE run of minilm-l6 on the quickstart rows through the real recipe (a smoke
    demonstration; the rows come from the built-in corpus's train families, the probes from its
    three held-out families)."""
    script = RECIPES / "reward.py"
    if not script.exists():  # an installed package without the repository's recipes/
        print("[train] skipped: recipes/ is not next to the package (run from a clone)")
        return None
    target = out / "ckpt" / "minilm-l6-infonce"
    cmd = [
        sys.executable,
        str(script),
        "--config",
        str(RECIPES / "configs" / "minilm-l6" / "reward_infonce.yaml"),
        "--train_file",
        str(out / "train" / "train.jsonl"),
        "--output_dir",
        str(target),
        "--max_train_rows",
        "320",
        "--save_strategy",
        "no",
        "--disable_tqdm",  # on a terminal TRL's own progress bar shows; otherwise a line before and after
        "false" if sys.stdout.isatty() else "true",
        "--seed",
        str(seed),
    ]
    t0 = time.time()
    tty = sys.stdout.isatty()
    print("[train] recipes/reward.py: minilm-l6, InfoNCE, 320 rows x 6 candidates, 1 epoch ...", flush=True)
    run = subprocess.run(cmd, stdout=None if tty else subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        raise BiasAwareError(
            f"the reward recipe failed (exit {run.returncode})"
            + (f":\n{run.stdout[-2000:]}" if run.stdout else "")
        )
    print(f"[train] done in {time.time() - t0:.0f}s: {target}")
    return target


def run_quickstart(out: Path, seed: int = 0, device: str = "auto", dtype: str = "auto") -> None:
    place = where(device, dtype)  # an unavailable device fails before anything is written
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    print(f"[models] judges run on {place['device']} in {place['dtype']}")
    for name, spec in BUILTIN_MODELS.items():
        model, _ = load_model(name, spec.kinds[0])
        n = sum(p.numel() for p in model.parameters()) / 1e6
        print(f"[models] {name}: ready as {spec.kinds[0]} model ({n:.1f}M parameters)")
    for kind, records in example_records().items():
        path = write_jsonl(out / "examples" / f"{kind}.jsonl", records)
        back = read_records(path, kind)
        print(f"[data] {path}: {len(back)} valid {kind} record(s)")
    cfg = BuildConfig(seed=seed)
    bench = build_bench(cfg, out / "bench")
    kept = {b: m["kept"] for b, m in bench["biases"].items()}
    print(
        f"[build] bench: {sum(kept.values())} probes over {len(kept)} biases ({bench['verifier']} verifier, "
        f"held-out task families: {', '.join(TEST_FAMILIES)}): {kept}"
    )
    train = build_train(cfg, out / "train")
    print(
        f"[build] train: {train['rows']} rows with {cfg.n_negatives} bias negatives each (the other "
        f"{len(FAMILIES) - len(TEST_FAMILIES)} task families)"
    )
    traces = build_traces(cfg, out / "traces")
    n_traces = sum(m["traces"] for m in traces["biases"].values())
    print(f"[build] traces: {n_traces} SFT rows from the {traces['teacher']} teacher")
    for path, kind in (
        (out / "bench", "probe"),
        (out / "train" / "train.jsonl", "train"),
        (out / "traces" / "traces.jsonl", "trace"),
    ):
        print(f"[validate] {path}: {len(read_records(path, kind))} valid {kind} records")
    ckpt = _train_reward_model(out, seed)
    common = {"device": device, "dtype": dtype}
    judges = [
        ("eval-rm", JudgeSpec(name="minilm-l6", mode="reward", **common), 20),
        ("eval-rm-trained", JudgeSpec(name=str(ckpt), mode="reward", **common) if ckpt else None, 20),
        ("eval-direct", JudgeSpec(name="smollm2-135m-instruct", mode="direct", **common), 10),
    ]
    for name, spec, limit in judges:
        if spec is None:
            continue
        judge = load_judge(spec)
        probes = load_probes(out / "bench", limit=limit)
        summary = write_reports(run_bias_eval(judge, probes, out / name), out / name, "symmetric", seed)
        micro = summary["overall"]["micro"]
        print(
            f"[eval] {name}: {Path(judge.name).name} ({judge.kind}, {limit} probes per bias): "
            f"Acc_ori {100 * micro['acc_ori']:.1f}, Acc_inj {100 * micro['acc_inj']:.1f}, "
            f"BSR {100 * micro['bsr']:.1f}; report {out / name / 'report.md'}"
        )
    print(f"[done] quickstart finished in {time.time() - t0:.1f}s; outputs in {out}")
