"""``biasaware quickstart``: the main job, offline on the built-in defaults, and the experiment that
shows what two-sided measurement is for.

1. Prepare the built-in models and write one record of every kind of the data contract.
2. Build from the built-in corpus's fact families (biasaware/data/facts.py): the benchmark on the four
   held-out families, both directions (standard and mirror probes), and training rows on the other
   six with natural cues (each pair's cue on the chosen answer in 70% of rows), once with paper-style
   bias negatives and once balanced; teacher traces for SFT. Validate every output.
3. Train four minilm-l6 reward models through recipes/reward.py on the same budget: baseline
   (hinge on the natural pairs), paper (InfoNCE with bias negatives), balanced (InfoNCE on balanced
   rows), balanced+keys (the balanced rows with master-key and short-correct rows); and a few steps of SFT then GRPO of smollm2-135m-instruct through ``accelerate launch`` (a smoke
   test of the path; ``quickstart --generative``, :mod:`biasaware.experiments.generative`, is the real experiment).
4. Evaluate the three, and smollm2 zero-shot and its SFT+GRPO smoke checkpoint in direct mode (their
   verdict distributions and the degenerate-judge check), on both directions; write one table shaped like JudgeBiasBench's Table 5 with the
   two-sided columns and McNemar p against the baseline (``report.md``, ``report.json``,
   ``two_sided.png``), each judge's own report under ``eval/``. Every judge is also judged on the
   master-key probes (``bench-masterkey``: a non-answer against the real answer, and a short correct
   answer against a long wrong one), into ``eval-masterkey/``; the report's master-key table gives
   the false positives per key type and the over-correction.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import replace
from pathlib import Path

from biasaware.data.builders import NATURAL_CUES, BuildConfig, build_bench, build_traces, build_train
from biasaware.data.facts import FACT_TEST_FAMILIES
from biasaware.devices import where
from biasaware.errors import check_seed
from biasaware.evaluation.baselines import bias_baselines
from biasaware.evaluation.compare import compare_master_keys, compare_runs
from biasaware.evaluation.plots import experiment_plot
from biasaware.evaluation.reports import baselines_markdown, experiment_markdown, master_key_markdown
from biasaware.evaluation.runner import load_probes
from biasaware.experiments.parts import (
    Stages,
    claim_folder,
    evaluate_judge,
    folder_dtype,
    name_within,
    run_stage,
)
from biasaware.formatting import ci, p_value, pct
from biasaware.io import read_records, write_json, write_jsonl
from biasaware.judging.judge_format import format_judgment, judge_messages
from biasaware.judging.judges import JudgeSpec
from biasaware.judging.models import BUILTIN_MODELS, load_model
from biasaware.recipes import CONFIGS
from biasaware.records import BiasNegative, BiasProbe, Judgment, PreferencePair, TraceRow, TrainingRow, View
from biasaware.training.run_folder import trained

PROBES = 25  # per bias and side
ZERO_SHOT = "smollm2 zero-shot"
ZERO_SHOT_PROBES = 4  # per bias and side
SMOKE_MODEL = "smollm2-135m-instruct"
SMOKE = "smollm2 SFT+GRPO smoke"  # 2 SFT and 2 GRPO steps: a check that the path runs, not a result

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


QUICK_CUES = NATURAL_CUES
KEY_SHARE = 0.3  # the share of balanced pairs that also give a master-key row and a short-correct row
EXPERIMENT = {  # name: (recipe config under recipes/configs/minilm-l6, training rows folder, what it is)
    "baseline": ("reward_two_sided_baseline.yaml", "train-paper", "hinge on natural pairs"),
    "paper": ("reward_two_sided_paper.yaml", "train-paper", "InfoNCE + 4 bias negatives (JudgeBiasBench)"),
    "balanced": ("reward_two_sided_balanced.yaml", "train-balanced", "InfoNCE on balanced rows"),
    "balanced+keys": (
        "reward_two_sided_balanced.yaml",
        "train-balanced-keys",
        f"InfoNCE on balanced rows with master-key and short-correct rows (share {KEY_SHARE})",
    ),
}
MASTER_KEY_PROBES = 50  # per side, on the held-out fact families
MASTER_KEY_LIMIT = 10  # per side for the smollm2 judges (a 135M model reads judge prompts slowly on a CPU)


def train_reward_models(out: Path, seed: int) -> dict[str, Path]:
    """The minilm-l6 reward models of the experiment (:data:`EXPERIMENT`), each through
    the reward recipe on the same budget (1,200 scored candidates)."""
    done = {}
    for name, (config, rows, what) in EXPERIMENT.items():
        target = done[name] = out / "ckpt" / name
        if trained(target):  # a rerun of the quickstart: this model is finished (its card says so)
            print(f"[train] {name}: {target} is already trained", flush=True)
            continue
        flags = {
            "config": CONFIGS / "minilm-l6" / config,
            "train_file": out / rows / "train.jsonl",
            "output_dir": target,
            "seed": seed,
        }
        print(f"[train] {name}: minilm-l6, {what} (recipes/configs/minilm-l6/{config}) ...", flush=True)
        seconds = run_stage("reward", flags, f"the reward recipe ({name})", out / "run.log")
        print(f"[train] {name} done in {seconds:.0f}s: {target}", flush=True)
    return done


def train_generative(out: Path, seed: int, model: str = SMOKE_MODEL) -> Path:
    """A few steps of SFT on the teacher traces, then GRPO from that checkpoint, of ``model`` (its
    configs under ``recipes/configs/<model>``) through ``accelerate launch``: the one stage of the
    main job launched so, on purpose, to check the launcher a multi-GPU run uses (the generative path
    runs; no claim about quality at this size)."""
    configs = CONFIGS / model
    sft, grpo = out / "ckpt" / "smollm2-sft", out / "ckpt" / "smollm2-grpo"
    common = {"seed": seed, "save_strategy": "no", "logging_steps": 1}
    if trained(grpo):
        print(f"[train] {model} SFT+GRPO: {grpo} is already trained", flush=True)
        return grpo
    t0 = time.time()
    print(f"[train] {model}: SFT (2 steps) then GRPO (2 steps) via accelerate launch ...", flush=True)
    if not trained(sft):  # an interrupted GRPO step starts from the SFT one
        flags = {
            "config": configs / "sft.yaml",
            "train_file": out / "traces" / "traces.jsonl",
            "output_dir": sft,
            "max_steps": 2,
            "per_device_train_batch_size": 2,
            **common,
        }
        run_stage("sft", flags, "the SFT recipe", out / "run.log", how="accelerate", cpu=True)
    flags = {
        "config": configs / "grpo.yaml",
        "model_name_or_path": sft,
        "output_dir": grpo,
        "max_steps": 2,
        "train_file": out / "train-paper" / "train.jsonl",
        "max_completion_length": 48,
        **common,
    }
    run_stage("grpo", flags, "the GRPO recipe", out / "run.log", how="accelerate", cpu=True)
    # only the GRPO checkpoint is scored: the SFT one (517 MB) was its starting point
    shutil.rmtree(sft, ignore_errors=True)
    print(f"[train] {model} SFT+GRPO done in {time.time() - t0:.0f}s: {grpo}", flush=True)
    return grpo


def build_data(out: Path, seed: int) -> None:
    """The benchmark (held-out fact families, both directions) and the training data (natural cues;
    paper and balanced augmentation) and teacher traces."""
    bench = build_bench(BuildConfig(seed=seed, families="facts", n_per_bias=PROBES), out / "bench")
    kept = sum(m["kept"] for m in bench["biases"].values())
    mirror = sum(m["kept"] for m in bench["mirror"].values())
    print(
        f"[build] bench: {kept} standard + {mirror} mirror probes over {len(bench['biases'])} biases "
        f"({bench['verifier']} verifier; held-out fact families: {', '.join(FACT_TEST_FAMILIES)})"
    )
    cues = ",".join(QUICK_CUES)
    natural = BuildConfig(seed=seed, families="facts", cues="natural", biases=cues)
    paper = build_train(replace(natural, max_rows=200), out / "train-paper")
    rates = paper["cues"]["observed"]
    share = sum(c["on_chosen"] for c in rates.values()) / max(sum(c["pairs"] for c in rates.values()), 1)
    print(
        f"[build] train-paper: {paper['rows']} natural pairs (one cue each from {cues}; on the chosen side in "
        f"{pct(share, 0)}%, rate 0.7) with {natural.n_negatives} bias negatives each"
    )
    balanced = build_train(replace(natural, augment="balanced", max_rows=150), out / "train-balanced")
    print(f"[build] train-balanced: {balanced['rows']} rows ({balanced['pairs']} pairs x 4 cue placements)")
    keyed = build_train(
        replace(natural, augment="balanced", max_rows=150, key_negatives=KEY_SHARE),
        out / "train-balanced-keys",
    )
    print(
        f"[build] train-balanced-keys: the balanced rows and {keyed['key_negatives']['rows']} master-key rows "
        f"(rejected: a non-answer; {keyed['key_negatives']['key_types']}) with as many short-correct rows"
    )
    keys = build_bench(
        BuildConfig(seed=seed, families="facts", n_per_bias=MASTER_KEY_PROBES, biases="masterkey"),
        out / "bench-masterkey",
    )
    print(
        f"[build] bench-masterkey: {keys['biases']['masterkey']['kept']} key probes "
        f"({keys['biases']['masterkey']['key_types']}) + {keys['mirror']['masterkey']['kept']} short-correct "
        "mirror probes"
    )
    traces = build_traces(BuildConfig(seed=seed, families="facts", n_traces_per_bias=4), out / "traces")
    n_traces = sum(m["traces"] for m in traces["biases"].values())
    print(f"[build] traces: {n_traces} SFT rows from the {traces['teacher']} teacher")
    for path, kind in (
        (out / "bench", "probe"),
        (out / "train-paper" / "train.jsonl", "train"),
        (out / "train-balanced" / "train.jsonl", "train"),
        (out / "train-balanced-keys" / "train.jsonl", "train"),
        (out / "bench-masterkey", "probe"),
        (out / "traces" / "traces.jsonl", "trace"),
    ):
        print(f"[validate] {path}: {len(read_records(path, kind))} valid {kind} records")


def run_quickstart(
    out: Path, seed: int = 0, device: str = "auto", dtype: str = "auto", generative: bool = True
) -> None:
    """The main job (see the module docstring); ``generative=False`` leaves out the smollm2 SFT and
    GRPO steps (the reduced experiment the slow test runs)."""
    check_seed(seed, "seed")
    # --dtype left out on a rerun keeps the folder's own, as the studies do
    place = where(device, folder_dtype(out, dtype, "quickstart.json"))  # an unavailable device fails here
    # the judges' dtype as it resolves, left out where it is auto's here (folders made before it resume)
    usual = where(device)["dtype"]
    mine = {"seed": seed, **({"dtype": place["dtype"]} if place["dtype"] != usual else {})}
    claim_folder(out, "quickstart.json", mine, "a quickstart run", {"dtype": usual})
    t0 = time.time()
    stages = Stages(out / "stages.json")
    print(f"[models] judges run on {place['device']} in {place['dtype']}")
    for name, spec in BUILTIN_MODELS.items():
        model, _ = load_model(name, spec.kinds[0])
        n = sum(p.numel() for p in model.parameters()) / 1e6
        print(f"[models] {name}: ready as {spec.kinds[0]} model ({n:.1f}M parameters)")
    for kind, records in example_records().items():
        path = write_jsonl(out / "examples" / f"{kind}.jsonl", records)
        back = read_records(path, kind)
        print(f"[data] {path}: {len(back)} valid {kind} record(s)")
    stages.record("models and examples", time.time() - t0, True)
    mark, built = time.time(), (out / "bench" / "manifest.json").exists()
    build_data(out, seed)
    stages.record("build", time.time() - mark, not built)
    mark, todo = time.time(), not all(trained(out / "ckpt" / name) for name in EXPERIMENT)
    ckpts = train_reward_models(out, seed)
    stages.record("train reward models", time.time() - mark, todo)
    mark = time.time()
    smoke = None
    if generative:
        todo = not trained(out / "ckpt" / "smollm2-grpo")
        smoke = train_generative(out, seed)
        stages.record("train smollm2 (SFT, GRPO)", time.time() - mark, todo)
    mark, judged = time.time(), (out / "eval").exists()
    common = {"device": device, "dtype": dtype}
    judges = {
        name: (JudgeSpec(name=str(path), mode="reward", **common), None) for name, path in ckpts.items()
    }
    # a 135M model reads long judge prompts slowly on a CPU: a few probes per bias and side show its verdicts
    judges[ZERO_SHOT] = (JudgeSpec(name=SMOKE_MODEL, mode="direct", **common), ZERO_SHOT_PROBES)
    # the smoke steps' checkpoint, scored on the same probes: GRPO to a score runs every time
    if smoke is not None:
        judges[SMOKE] = (JudgeSpec(name=str(smoke), mode="direct", **common), ZERO_SHOT_PROBES)
    runs, key_runs = {}, {}
    for name, (spec, limit) in judges.items():
        folder = out / "eval" / name.replace(" ", "-")
        evaluate_judge(name, spec, out / "bench", folder, limit=limit, seed=seed)
        runs[name] = folder
        key_runs[name] = out / "eval-masterkey" / name.replace(" ", "-")
        keys_limit = MASTER_KEY_LIMIT if limit else None
        evaluate_judge(
            f"{name}, master keys", spec, out / "bench-masterkey", key_runs[name], limit=keys_limit, seed=seed
        )
    stages.record("evaluate", time.time() - mark, not judged)
    experiment_runs = {k: v for k, v in runs.items() if k in EXPERIMENT}
    if "baseline" in experiment_runs:
        result = name_within(
            compare_runs(experiment_runs, "baseline", biases=list(QUICK_CUES), seed=seed), out
        )
        small = {k: runs[k] for k in (ZERO_SHOT, SMOKE) if k in runs}
        zero_shot = name_within(compare_runs(small, ZERO_SHOT, biases=list(QUICK_CUES), seed=seed), out)
        result["zero_shot"] = zero_shot
        trained_keys = {k: v for k, v in key_runs.items() if k in EXPERIMENT}
        result["master_keys"] = name_within(compare_master_keys(trained_keys, "baseline", seed=seed), out)
        small_keys = {k: key_runs[k] for k in (ZERO_SHOT, SMOKE) if k in key_runs}
        result["master_keys_zero_shot"] = name_within(
            compare_master_keys(small_keys, ZERO_SHOT, seed=seed), out
        )
        result["command"] = "biasaware quickstart"
        result["stage_seconds"], result["resumed_seconds"] = stages.finish(time.time() - t0)
        write_json(out / "report.json", result)
        experiment_plot(result, out / "two_sided.png")

        # what the cue alone would do on the table's probes (no model): the reference for BSR
        result["cue_baselines"] = bias_baselines(load_probes(out / "bench", list(QUICK_CUES)), seed=seed)
        tables = (
            experiment_markdown(result)
            + "\n"
            + experiment_markdown(zero_shot)
            + "\n".join(baselines_markdown(result["cue_baselines"]))
            + "\n\nMaster keys (a non-answer against the real answer; "
            + f"{MASTER_KEY_PROBES} probes per side, the smollm2 judges {MASTER_KEY_LIMIT}):\n\n"
            + master_key_markdown(result["master_keys"])
            + "\n"
            + master_key_markdown(result["master_keys_zero_shot"])
        )
        (out / "report.md").write_text(experiment_report(result, tables, runs, out))
        print("\n" + tables)
        for line in experiment_checks(result):
            print(f"[check] {line}")
    print(
        f"[done] quickstart finished in {time.time() - t0:.1f}s; outputs in {out} (report: {out / 'report.md'})"
    )


README_LABELS = {
    "baseline": "baseline: hinge on natural pairs",
    "paper": "paper: InfoNCE + bias negatives",
    "balanced": "balanced: InfoNCE on balanced rows",
}


def readme_table(result: dict) -> str:
    """The README's two-sided table, from the quickstart's ``report.json`` alone (a test checks that
    the README shows this): Acc_ori, BSR and over-correction with 95% intervals and flips, McNemar p
    against the baseline (over-correction of balanced also against paper), the zero-shot judge."""

    def cell(r: dict, key: str, side: dict) -> str:
        return f"{pct(r[key])}{ci(r.get(key + '_ci'))} ({side['flips']}/{side['ori_correct']})"

    def p(x: float | None) -> str:
        return p_value(x, 2, small=1e-3, compact=True)

    lines = [
        "| judge (minilm-l6 unless said) | Acc_ori | BSR (standard probes) | p | over-correction (mirror probes) | p | "
        "two-sided |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, label in README_LABELS.items():
        r = result["runs"][name]
        pv = r["p_vs"].get("baseline", {})
        oc_p = p(pv.get("overcorrection"))
        if name == "balanced" and "paper" in r["p_vs"]:
            oc_p += f" (vs paper: {p(r['p_vs']['paper']['overcorrection'])})"
        lines.append(
            f"| {label} | {pct(r['acc_ori'])}{ci(r['acc_ori_ci'])} | {cell(r, 'bsr', r)} | {p(pv.get('bsr'))} | "
            f"{cell(r, 'overcorrection', r['mirror'])} | {oc_p} | {pct(r['two_sided'])} |"
        )
    z = result["zero_shot"]["runs"][ZERO_SHOT]
    check = z["judge_check"]
    flag = (
        f'degenerate: "{check["top_letter"]}" on {pct(check["top_share"], 0)}% of views'
        if check["degenerate"]
        else pct(z["two_sided"])
    )
    lines.append(
        f"| smollm2-135m-instruct zero-shot, direct ({ZERO_SHOT_PROBES} probes per bias and side) | "
        f"{pct(z['acc_ori'])}{ci(z['acc_ori_ci'])} | {pct(z['bsr'])} ({z['flips']}/{z['ori_correct']}) | | "
        f"{pct(z['overcorrection'])} ({z['mirror']['flips']}/{z['mirror']['ori_correct']}) | | {flag} |"
    )
    return "\n".join(lines)


def experiment_checks(result: dict) -> list[str]:
    """What the experiment shows, in words, with the p-values (nothing is asserted here: the slow
    test asserts the directions)."""
    r = result["runs"]
    if not {"baseline", "paper", "balanced"} <= set(r):
        return []
    base, paper, bal = r["baseline"], r["paper"], r["balanced"]

    def line(text, a, b, key, p):
        return f"{text}: {pct(a[key])} -> {pct(b[key])} (McNemar p {p_value(p)})"

    return [
        line("paper vs baseline, BSR", base, paper, "bsr", paper["p_vs"]["baseline"]["bsr"]),
        line(
            "paper vs baseline, over-correction",
            base,
            paper,
            "overcorrection",
            paper["p_vs"]["baseline"]["overcorrection"],
        ),
        line("balanced vs baseline, BSR", base, bal, "bsr", bal["p_vs"]["baseline"]["bsr"]),
        line(
            "balanced vs paper, over-correction",
            paper,
            bal,
            "overcorrection",
            bal["p_vs"]["paper"]["overcorrection"],
        ),
        f"Acc_ori: baseline {pct(base['acc_ori'])}, paper {pct(paper['acc_ori'])}, balanced {pct(bal['acc_ori'])}",
    ]


def experiment_report(result: dict, table: str, runs: dict[str, Path], out: Path) -> str:
    lines = [
        "# Two-sided debiasing on the built-in corpus",
        "",
        "Four minilm-l6 reward models trained on the same budget (1,200 scored candidates) on six fact families "
        "whose superficial cue sits on the chosen answer in 70% of pairs (`build train --cues natural`): the "
        "baseline (hinge on those pairs), paper-style (InfoNCE with 4 bias negatives per row, JudgeBiasBench sec. 5.1), "
        "balanced (InfoNCE on rows with the cue on neither, either and both answers) and balanced+keys (the "
        f"balanced rows, and for {KEY_SHARE:.0%} of pairs a row whose rejected side is a master key and a short-correct "
        "row, `--key-negatives`). Evaluated on four held-out "
        f"fact families with standard probes (the cue on the worse answer) and mirror probes (the same cue on the "
        f"better answer), {PROBES} per bias and side; the table pools the five trained cues. Below it, "
        f"smollm2-135m-instruct zero-shot (direct verdicts, {ZERO_SHOT_PROBES} probes per bias and side).",
        "",
        table,
        "Checks: " + "; ".join(experiment_checks(result)) + ".",
        "",
        "![two-sided](two_sided.png)",
        "",
        "Per-judge reports (every bias, per-instance judgments next to each): "
        + ", ".join(f"[{name}]({Path(folder).relative_to(out)}/report.md)" for name, folder in runs.items()),
        "",
        Stages.describe(result.get("stage_seconds", {}), result.get("resumed_seconds", {})),
    ]
    return "\n".join(lines) + "\n"
