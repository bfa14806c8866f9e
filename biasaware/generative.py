"""``biasaware quickstart --generative``: the two-sided experiment for generative judges, on a budget
that a 2-core CPU finishes in about an hour (a GPU preset is larger).

Design. A generative judge's training cost is set by tokens: every SFT step and every GRPO step runs
the model forward and backward over each row's whole judge prompt, whatever the reply's length. So
the experiment trains the short letter-first ``verdict`` format (:mod:`biasaware.judging.prompts`;
about 120 tokens a view on the built-in fact pairs, against about 220 for the reasoning format), the
reply is the verdict letter (the loss covers a handful of tokens, TRL's fused LM head computes
log-probabilities only there), the lower layers are frozen (``trainable_layers``: no backward
through them), gradient checkpointing is off (it would run every forward twice), and GRPO samples a
few tokens per completion. Evaluation reads the verdict from the last position's logits (direct
mode) on the larger probe sample, and parses generated replies (generate mode) on a smaller one.

Stages (each resumable: a rerun into the same ``--out`` skips what is finished; its first time is
kept in ``stages.json`` and the rerun's own time added):

1. build: the quickstart's data (:func:`biasaware.quickstart.build_data`): the benchmark on the four
   held-out fact families, both directions; training rows on six others whose cue sits on the
   chosen answer 70% of the time (natural pairs with bias negatives), and balanced rows.
2. per arm, SFT (``recipes/sft.py``, verdict targets) then GRPO (``recipes/grpo.py``) from the SFT
   checkpoint, each through ``accelerate launch``, on the same budget:

   * ``baseline``: natural pairs (``bias_ratio 0:4``); GRPO with accuracy and format rewards;
   * ``paper`` (JudgeBiasBench's recipe): natural pairs plus as many bias-aware pairs, the chosen answer
     against one of its bias negatives (``bias_ratio 4:4``), for SFT and GRPO; accuracy and format;
   * ``balanced``: balanced rows (each pair's cue on neither, either and both answers) for SFT and
     GRPO; accuracy, cue-consistency (:mod:`biasaware.training.rewards`) and format, with GRPO's
     rewards left unscaled so the consistency term weighs (``scale_rewards: none``).
3. evaluate: the zero-shot model and every checkpoint (SFT and GRPO) through ``eval bias``, direct
   mode on a seeded sample of ``probes`` per bias and side of the five trained cues (``eval bias
   --limit``; every probe with ``probes: None``), generate mode on ``generate_probes`` per bias and side.
4. report: ``generative.json`` (machine, budget, tokens per view, stage times, both tables) and
   ``report.md``: Acc_ori, BSR on standard probes, over-correction on mirror probes, 95% intervals,
   McNemar p against the baseline's GRPO checkpoint, the degenerate-judge check.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from biasaware.errors import BiasAwareError
from biasaware.io import write_json
from biasaware.quickstart import QUICK_CUES as TRAINED_CUES
from biasaware.quickstart import Stages, _quiet_flags, _recipe, _run, accelerate_launch, build_data

ZERO_SHOT = "zero-shot"
BASE_MODEL = "smollm2-135m-instruct"


class Arm(BaseModel):
    rows: str  # training rows folder of the build
    bias_ratio: str
    rewards: list[str]
    scale_rewards: str = "group"
    what: str


ARMS: dict[str, Arm] = {
    "baseline": Arm(
        rows="train-paper", bias_ratio="0:4", rewards=["accuracy", "format"],
        what="natural pairs (cue on the chosen answer in 70%); GRPO: accuracy + format",
    ),
    "paper": Arm(
        rows="train-paper", bias_ratio="4:4", rewards=["accuracy", "format"],
        what="natural pairs + bias-aware pairs 4:4 (JudgeBiasBench); GRPO: accuracy + format",
    ),
    "balanced": Arm(
        rows="train-balanced", bias_ratio="0:4", rewards=["accuracy", "cue_consistency", "format"],
        scale_rewards="none",
        what="balanced rows (cue on neither, either, both); GRPO: accuracy + cue-consistency + format",
    ),
}  # fmt: skip


class Budget(BaseModel):
    """Every setting that sets the experiment's cost (recorded in the results; a rerun into the same
    folder must use the same)."""

    model_config = ConfigDict(extra="forbid")

    template: str = "verdict"
    trainable_layers: int | None = Field(12, ge=1)
    max_length: int = Field(512, ge=16)
    start_steps: int = Field(
        200,
        ge=0,
        description="SFT steps of the shared starting judge on natural pairs (0: every arm starts from the base model)",
    )
    sft_steps: int = Field(80, ge=1, description="each arm's own SFT steps, from the starting judge")
    sft_batch: int = Field(4, ge=1)
    sft_lr: float = Field(2e-4, gt=0)
    sft_schedule: str = Field("constant_with_warmup", description="transformers' lr_scheduler_type")
    grpo_steps: int = Field(8, ge=0)
    grpo_batch: int = Field(
        16, ge=2, description="completions per step: prompts x num_generations (whole pairs)"
    )
    num_generations: int = Field(4, ge=2)
    max_completion_length: int = Field(3, ge=1)
    grpo_lr: float = Field(5e-5, gt=0)
    probes: int | None = Field(20, ge=1, description="direct-mode probes per bias and side (None: all)")
    generate_probes: int = Field(2, ge=1, description="generate-mode probes per bias and side")
    generate_max_tokens: int = Field(4, ge=1)


PRESETS: dict[str, dict[str, Any]] = {
    "cpu": {},
    # a GPU affords all layers, more steps and more probes in generate mode (not measured here)
    "gpu": {
        "trainable_layers": None,
        "start_steps": 400,
        "sft_steps": 400,
        "sft_batch": 8,
        "grpo_steps": 100,
        "probes": None,
        "generate_probes": 25,
    },
}


def make_budget(preset: str, overrides: dict[str, Any] | None = None) -> Budget:
    if preset not in PRESETS:
        raise BiasAwareError(f"unknown budget preset {preset!r}; valid: {', '.join(PRESETS)}")
    try:
        return Budget(**{**PRESETS[preset], **(overrides or {})})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BiasAwareError(f"budget setting {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def machine() -> dict[str, Any]:
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {
        "cores": cores,
        "cpu": platform.processor() or platform.machine(),
        "gpu": gpu,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


def claim(out: Path, seed: int, budget: Budget, device: str, model: str, arms: list[str]) -> None:
    """Refuse a folder holding another experiment's settings (data, checkpoints and judgments
    would mix); record them in a new one."""
    stamp = out / "experiment.json"
    mine = {"experiment": "generative", "seed": seed, "budget": budget.model_dump(), "device": device,
            "model": model, "arms": arms}  # fmt: skip
    if stamp.exists():
        try:
            earlier = json.loads(stamp.read_text())
        except ValueError:
            raise BiasAwareError(f"{stamp} is not an experiment record; use a new --out") from None
        if earlier != mine:
            diff = [
                k for k in sorted(set(mine["budget"]) | set(earlier.get("budget") or {}))
                if mine["budget"].get(k) != (earlier.get("budget") or {}).get(k)
            ] + [k for k in ("experiment", "seed", "device", "model", "arms") if earlier.get(k) != mine[k]]  # fmt: skip
            raise BiasAwareError(
                f"{out} holds a generative experiment with other settings ({', '.join(diff)}); use a new --out "
                f"or the same settings"
            )
    elif out.exists() and any(out.iterdir()):
        raise BiasAwareError(f"{out} is not empty and holds no generative experiment; use a new --out")
    write_json(stamp, mine)


def _scripts() -> tuple[Path, Path]:
    sft_script, grpo_script = _recipe("sft"), _recipe("grpo")
    if sft_script is None or grpo_script is None:
        raise BiasAwareError(
            "the generative experiment needs recipes/sft.py and recipes/grpo.py (run from a clone)"
        )
    return sft_script, grpo_script


def _common(arm: Arm, budget: Budget, seed: int, cpu: bool) -> list[str]:
    common = ["--seed", str(seed), "--template", budget.template, "--bias_ratio", arm.bias_ratio,
              "--save_strategy", "no", "--use_cpu", str(cpu).lower(), *_quiet_flags()]  # fmt: skip
    if budget.trainable_layers is not None:
        common += ["--trainable_layers", str(budget.trainable_layers)]
    return common


def _sft(out: Path, arm: Arm, budget: Budget, seed: int, cpu: bool, model: str, target: Path, steps: int,
         what: str) -> None:  # fmt: skip
    """``steps`` of SFT on verdicts of ``arm``'s rows from ``model`` into ``target``."""
    from biasaware.training.recipe import RECIPES

    configs = RECIPES / "configs" / "smollm2-135m-instruct"
    _run([*accelerate_launch(cpu), str(_scripts()[0]), "--config", str(configs / "sft_verdict.yaml"),
          "--model_name_or_path", model, "--train_file", str(out / arm.rows / "train.jsonl"),
          "--output_dir", str(target), "--max_steps", str(steps), "--per_device_train_batch_size",
          str(budget.sft_batch), "--learning_rate", str(budget.sft_lr), "--lr_scheduler_type", budget.sft_schedule,
          "--max_length", str(budget.max_length), *_common(arm, budget, seed, cpu)], f"SFT of {what}",
         out / "run.log")  # fmt: skip


START = "start"  # the shared starting judge's name in the tables


def train_start(out: Path, budget: Budget, seed: int, cpu: bool, model: str = BASE_MODEL) -> tuple[str, bool]:
    """The judge every arm starts from: ``start_steps`` of SFT of the base model on the natural
    pairs (the baseline arm's data: the judge a team has before it debiases). Returns the model the
    arms start from and whether anything was trained now; ``start_steps`` 0: the base model."""
    from biasaware.training.recipe import trained

    if budget.start_steps == 0:
        return model, False
    ckpt = out / "ckpt" / "start-sft"
    if trained(ckpt):
        print(f"[train] starting judge: already trained ({ckpt})", flush=True)
        return str(ckpt), False
    arm = ARMS["baseline"]
    print(f"[train] starting judge: SFT of {model}, {budget.start_steps} steps of {budget.sft_batch} rows "
          f"({arm.rows}: natural pairs) ...", flush=True)  # fmt: skip
    t0 = time.time()
    _sft(out, arm, budget, seed, cpu, model, ckpt, budget.start_steps, "the starting judge")
    print(f"[train] starting judge: SFT done in {time.time() - t0:.0f}s: {ckpt}", flush=True)
    return str(ckpt), True


def train_arm(
    out: Path,
    name: str,
    arm: Arm,
    budget: Budget,
    seed: int,
    cpu: bool,
    model: str = BASE_MODEL,
) -> tuple[Path, Path, bool]:
    """SFT then GRPO of one arm from ``model`` (the shared starting judge, or the base model);
    returns the two checkpoints and whether anything was trained."""
    from biasaware.training.recipe import RECIPES, trained

    configs = RECIPES / "configs" / "smollm2-135m-instruct"
    launch, (_, grpo_script) = accelerate_launch(cpu), _scripts()
    data = str(out / arm.rows / "train.jsonl")
    common = _common(arm, budget, seed, cpu)
    sft, grpo = out / "ckpt" / f"{name}-sft", out / "ckpt" / f"{name}-grpo"
    worked = False
    if not trained(sft):
        print(
            f"[train] {name}: SFT, {budget.sft_steps} steps of {budget.sft_batch} rows ({arm.what}) ...",
            flush=True,
        )
        t0 = time.time()
        _sft(out, arm, budget, seed, cpu, model, sft, budget.sft_steps, name)
        print(f"[train] {name}: SFT done in {time.time() - t0:.0f}s: {sft}", flush=True)
        worked = True
    else:
        print(f"[train] {name}: SFT already trained ({sft})", flush=True)
    if budget.grpo_steps == 0:
        return sft, sft, worked
    if not trained(grpo):
        print(f"[train] {name}: GRPO, {budget.grpo_steps} steps of {budget.grpo_batch} completions "
              f"(rewards {', '.join(arm.rewards)}) ...", flush=True)  # fmt: skip
        t0 = time.time()
        _run([*launch, str(grpo_script), "--config", str(configs / "grpo_verdict.yaml"), "--model_name_or_path",
              str(sft), "--train_file", data, "--output_dir", str(grpo), "--max_steps", str(budget.grpo_steps),
              "--per_device_train_batch_size", str(budget.grpo_batch), "--num_generations", str(budget.num_generations),
              "--max_completion_length", str(budget.max_completion_length), "--learning_rate", str(budget.grpo_lr),
              "--rewards", *arm.rewards, "--reward_weights", *["1.0"] * len(arm.rewards),
              "--scale_rewards", arm.scale_rewards, *common], f"GRPO of {name}", out / "run.log")  # fmt: skip
        print(f"[train] {name}: GRPO done in {time.time() - t0:.0f}s: {grpo}", flush=True)
        worked = True
    else:
        print(f"[train] {name}: GRPO already trained ({grpo})", flush=True)
    return sft, grpo, worked


def tokens_per_view(bench: Path, template: str, model: str = BASE_MODEL) -> dict[str, float]:
    """Mean and largest prompt length (tokens, chat template included) of the evaluated views."""
    from biasaware.evaluation.evaluate import load_probes
    from biasaware.judging.models import chat_ids, load_tokenizer
    from biasaware.judging.prompts import get_template

    tok = load_tokenizer(model, "causal")
    render = get_template(template).render
    views = [v for p in load_probes(bench, list(TRAINED_CUES)) for v in (p.original, p.injected)]
    lengths = [len(x) for x in chat_ids(tok, [render(v) for v in views], add_generation_prompt=True)]
    return {"mean": round(sum(lengths) / len(lengths), 1), "max": max(lengths), "views": len(lengths)}


def judges_of(
    ckpts: dict[str, tuple[Path, Path]], model: str = BASE_MODEL, start: str | None = None
) -> dict[str, str]:
    """Display name -> model (the zero-shot model, the starting judge when there is one, then each
    arm's SFT and SFT+GRPO checkpoints)."""
    judges = {ZERO_SHOT: model}
    if start is not None and start != model:
        judges[f"{START} SFT"] = start
    for name, (sft, grpo) in ckpts.items():
        judges[f"{name} SFT"] = str(sft)
        if grpo != sft:
            judges[f"{name} SFT+GRPO"] = str(grpo)
    return judges


def evaluate(out: Path, judges: dict[str, str], budget: Budget, seed: int, device: str, dtype: str) -> dict:
    """Every judge through ``eval bias``'s own path, in both modes; returns the run folders."""
    from biasaware.evaluation.evaluate import evaluate_bias
    from biasaware.evaluation.reports import pct
    from biasaware.judging.judges import JudgeSpec

    runs: dict[str, dict[str, Path]] = {"direct": {}, "generate": {}}
    for mode, limit, extra in (
        ("direct", budget.probes, {}),
        ("generate", budget.generate_probes, {"max_tokens": budget.generate_max_tokens}),
    ):
        for name, model in judges.items():
            folder = out / "eval" / mode / name.replace(" ", "-").replace("+", "-")
            spec = JudgeSpec.create(
                name=model, mode=mode, template=budget.template, device=device, dtype=dtype, **extra
            )
            summary = evaluate_bias(
                spec, out / "bench", folder, biases=list(TRAINED_CUES), limit=limit, seed=seed
            )
            runs[mode][name] = folder
            micro, check = summary["overall"]["micro"], summary["judge_check"]
            v = check["verdicts"]
            flag = f"  DEGENERATE: {'; '.join(check['reasons'])}" if check["degenerate"] else ""
            print(f"[eval] {name} ({mode}, {micro['n']} standard + {(micro.get('mirror') or {}).get('n', 0)} mirror "
                  f"probes): Acc_ori {pct(micro['acc_ori'])}, "
                  f"BSR {pct(micro['bsr'])}, over-correction {pct(micro['overcorrection'])}; verdicts over "
                  f"{sum(v.values())} views: A {v['A']} B {v['B']} tie {v['tie']} invalid {v['invalid']}{flag}",
                  flush=True)  # fmt: skip
    return runs


def weights_of(folders: dict[str, Path]) -> dict[str, str | None]:
    """Each evaluated judge's weights hash (SHA-256 of its weight files, from its ``eval bias`` summary),
    so two runs of the experiment can tell whether training reproduced a checkpoint bit for bit."""
    hashes = {}
    for name, folder in folders.items():
        identity = json.loads((folder / "summary.json").read_text())["run"].get("model_identity") or {}
        hashes[name] = identity.get("weights_sha256")
    return hashes


BASELINE = "baseline SFT+GRPO"


def tables(runs: dict[str, dict[str, Path]], seed: int) -> dict[str, Any]:
    """One two-sided table per mode, each judge against the baseline arm's final checkpoint."""
    from biasaware.evaluation.evaluate import compare_runs

    out = {}
    for mode, folders in runs.items():
        base = next(k for k in (BASELINE, "baseline SFT", ZERO_SHOT) if k in folders)
        out[mode] = compare_runs(folders, base, biases=list(TRAINED_CUES), seed=seed)
    return out


def checks(table: dict[str, Any]) -> list[str]:
    """The issue's claims in words, each with its McNemar p (nothing asserted here)."""
    from biasaware.evaluation.reports import pct

    r, base = table["runs"], table["baseline"]
    lines = []
    for name in ("paper SFT+GRPO", "balanced SFT+GRPO", "paper SFT", "balanced SFT"):
        if name not in r or name == base:
            continue
        p = r[name]["p_vs"][base]
        lines.append(
            f"{name} vs {base}: Acc_ori {pct(r[base]['acc_ori'])} -> {pct(r[name]['acc_ori'])} (p {p['acc_ori']:.3g}), "
            f"BSR {pct(r[base]['bsr'])} -> {pct(r[name]['bsr'])} (p {p['bsr']:.3g}), over-correction "
            f"{pct(r[base]['overcorrection'])} -> {pct(r[name]['overcorrection'])} (p {p['overcorrection']:.3g})"
        )
    return lines


def markdown(result: dict[str, Any]) -> str:
    """The README's and report's tables, from ``generative.json`` alone."""
    from biasaware.evaluation.reports import experiment_markdown

    parts = []
    budget, m = result["budget"], result["machine"]
    direct = (
        f"a seeded sample of {budget['probes']} probes per bias and side"
        if budget.get("probes")
        else "every probe"
    )
    for mode, title in (("direct", f"direct mode (next-token verdict), {direct}"),
                        ("generate", f"generate mode (parsed replies), {budget['generate_probes']} probes per bias and side")):  # fmt: skip
        if mode in result["tables"]:
            parts += [f"**{title}**", "", experiment_markdown(result["tables"][mode])]
    minutes = result["stage_seconds"].get("total", 0) / 60
    parts.append(
        f"smollm2-135m-instruct, template `{budget['template']}` ({result['tokens_per_view']['mean']} tokens a view), "
        f"top {budget['trainable_layers'] or 'all'} layers trained, "
        + (f"starting judge SFT {budget['start_steps']} steps, " if budget.get("start_steps") else "")
        + f"arm SFT {budget['sft_steps']} steps x {budget['sft_batch']} rows, GRPO {budget['grpo_steps']} steps x {budget['grpo_batch']} completions; "
        f"{m['cores']} CPU cores{', GPU ' + m['gpu'] if m.get('gpu') else ''}; {minutes:.0f} min in all."
    )
    return "\n".join(parts) + "\n"


def run_generative(
    out: Path,
    seed: int = 0,
    device: str = "auto",
    dtype: str = "auto",
    preset: str | None = None,
    overrides: dict[str, Any] | None = None,
    arms: list[str] | None = None,
    model: str = BASE_MODEL,
) -> dict[str, Any]:
    """The experiment (module docstring); returns what ``generative.json`` holds. ``model`` is the
    judge to start from (tests use a tiny one)."""
    from biasaware.devices import where

    place = where(device, dtype)
    preset = preset or ("gpu" if place["device"].startswith("cuda") else "cpu")
    budget = make_budget(preset, overrides)
    chosen = arms or list(ARMS)
    unknown = [a for a in chosen if a not in ARMS]
    if unknown:
        raise BiasAwareError(f"unknown arm(s) {', '.join(unknown)}; valid: {', '.join(ARMS)}")
    claim(out, seed, budget, device, model, chosen)
    stages = Stages(out / "stages.json")
    t_all = time.time()
    print(f"[generative] {model} on {place['device']} ({place['dtype']}); budget preset {preset}: "
          f"{budget.model_dump()}", flush=True)  # fmt: skip
    t0 = time.time()
    done_before = (out / "bench" / "manifest.json").exists()
    build_data(out, seed)
    stages.record("build", time.time() - t0, not done_before)
    ckpts = {}
    cpu = not place["device"].startswith("cuda")
    t0 = time.time()
    start, worked = train_start(out, budget, seed, cpu, model)
    if budget.start_steps:
        stages.record("train starting judge", time.time() - t0, worked)
    for name in chosen:
        t0 = time.time()
        sft, grpo, worked = train_arm(out, name, ARMS[name], budget, seed, cpu, start)
        ckpts[name] = (sft, grpo)
        stages.record(f"train {name}", time.time() - t0, worked)
    t0 = time.time()
    judged_before = (out / "eval").exists()
    runs = evaluate(out, judges_of(ckpts, model, start), budget, seed, device, dtype)
    stages.record("evaluate", time.time() - t0, not judged_before)
    result = {
        "experiment": "generative",
        "command": "biasaware quickstart --generative",
        "seed": seed,
        "preset": preset,
        "budget": budget.model_dump(),
        "arms": {k: ARMS[k].model_dump() for k in chosen},
        "machine": {**machine(), **place},
        "model": model,
        "tokens_per_view": tokens_per_view(out / "bench", budget.template, model),
        "tables": tables(runs, seed),
        "checkpoints": weights_of(runs["direct"]),
    }
    result["stage_seconds"], result["resumed_seconds"] = stages.finish(time.time() - t_all)
    result["checks"] = {mode: checks(t) for mode, t in result["tables"].items()}
    write_json(out / "generative.json", result)
    text = markdown(result)
    (out / "report.md").write_text(
        "# Two-sided debiasing of a generative judge\n\n"
        + text
        + "\nChecks:\n\n"
        + "\n".join(f"- {mode}: {line}" for mode, lines in result["checks"].items() for line in lines)
        + "\n\n"
        + Stages.describe(result["stage_seconds"], result["resumed_seconds"])
        + "\n"
    )
    print("\n" + text)
    for mode, lines in result["checks"].items():
        for line in lines:
            print(f"[check] {mode}: {line}")
    print(
        f"[done] generative experiment in {time.time() - t_all:.0f}s; outputs in {out} (report: {out / 'report.md'})"
    )
    return result
