"""``biasaware quickstart --generative``: does bias-aware training make a generative judge less
biased, on both sides, without costing accuracy? A many-seed study on a budget that a 2-core CPU
finishes in about two hours a seed where torch runs with AVX2 only, a third of that with AVX512, and
about half an hour on one that computes bfloat16 (AMX or AVX512-BF16), where it trains and judges in
bfloat16 (:func:`study_precision`; ``docs/generative.md``; a GPU preset is larger).

Design.

* **One fixed benchmark for every seed** (``out/bench``): the four held-out fact families, the five
  trained cues, ``bench_probes`` probes per bias and side, both directions, built once with
  ``bench_seed``. Seeds differ only in training data and training, so per-probe results line up
  across seeds and the final checkpoints are scored on every probe.
* **Training data per seed** (``out/seed-N``): ``train_pairs`` distinct natural pairs (each pair's cue
  on the chosen answer at ``cue_rate``, as in human preference data), split with the seed into
  ``start_pairs`` for the starting judge and the rest for the arms, so the arms train on pairs the
  starting judge never saw. The same arm pairs give the balanced rows (four cue placements each).
* **The starting judge**: ``start_steps`` of SFT of the model (smollm2-135m-instruct by default) on its pairs (one epoch
  at the default budget): the judge a team has before it debiases.
* **Arms**, each ``sft_steps`` of SFT then ``grpo_steps`` of GRPO from the starting judge, on the
  same budget (:data:`ARMS`): ``baseline`` (more natural pairs), ``paper`` (JudgeBiasBench's
  recipe: natural pairs plus as many bias-aware pairs), ``balanced`` (balanced rows; GRPO with the
  cue-consistency reward) and ``balanced-acc`` (the ablation: balanced rows and the balanced arm's
  own SFT checkpoint, GRPO with accuracy only), so the cue-consistency reward's own effect is the
  difference between the last two.
* **GRPO with signal**: each GRPO stage trains on the ``grpo_steps x prompts per step`` prompts of
  most signal among ``grpo_pool``, chosen by the SFT checkpoint's own verdict probabilities
  (:mod:`biasaware.training.signal`); each step's reward standard deviation and share of groups
  with zero variance are recorded from the trainer's log, and whether GRPO changed the weights at
  all (their hash against the SFT checkpoint's).
* **Time that can be trusted**: each stage records its wall time, its seconds per step, and the
  machine's load average while it ran (sampled every few seconds), so a stage that shared the cores
  shows as contended. Seeds run one after another.

Stages of a seed (each resumable: a rerun into the same ``--out`` skips what is finished, keeping
its first time in ``stages.json``; a training stage stopped midway goes on from the checkpoint it saves
every ``SAVE_MINUTES`` of training, exactly as if it had not stopped): build, the starting
judge, each arm's SFT and GRPO, the evaluation of every checkpoint (``eval bias``, direct mode: the
starting judge and the final checkpoints on every probe, each arm's SFT checkpoint on every probe or,
with ``sft_bench_probes``, on a fixed sample of that many a bias and side, the same for every SFT
checkpoint and seed, against which GRPO's own effect is paired), ``generative.json``.
After the seeds, :mod:`biasaware.evaluation.seeds` writes the study's aggregate: per arm the mean,
SD and 95% interval across seeds; per seed each arm's difference from the baseline; for each
comparison a seed-level paired test beside the pooled, seed-stratified probe-level test; a forest
plot.
"""

from __future__ import annotations

import json
import os
import platform
import random
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from biasaware.data.builders import NATURAL_CUES as TRAINED_CUES
from biasaware.data.builders import BuildConfig, build_bench, build_train
from biasaware.data.facts import FACT_TEST_FAMILIES
from biasaware.devices import (
    check_dtype_name,
    cpu_bfloat16_units,
    cpu_model,
    describe,
    native_bfloat16,
    resolve_device,
    resolve_dtype,
    where,
)
from biasaware.errors import BiasAwareError, check_seed
from biasaware.evaluation.compare import compare_master_keys, compare_runs
from biasaware.evaluation.plots import forest_plot
from biasaware.evaluation.reports import experiment_markdown, sampled_note, study_markdown
from biasaware.evaluation.seeds import aggregate, bench_rates, load_seeds
from biasaware.evaluation.summaries import flip_indicators
from biasaware.experiments import parts
from biasaware.experiments.parts import claimed
from biasaware.formatting import counted, pct
from biasaware.io import PACKAGE, check_out_folder, read_records, refuse_foreign, write_json, write_jsonl
from biasaware.judging.judges import JudgeSpec
from biasaware.judging.models import load_config, model_identity
from biasaware.recipes import CONFIGS
from biasaware.records import Judgment
from biasaware.training.rewards import TWIN_REWARDS
from biasaware.training.run_folder import trained
from biasaware.version import source_commit

REWARD_CHECKS = ("position", "masterkey")  # what a judge used as a reward needs (Budget.reward_probes)

BASE_MODEL = "smollm2-135m-instruct"
START = "start"  # the shared starting judge's name in the tables
# minutes of a training stage between its resumable checkpoints (the newest kept; removed once the stage is
# done): each writes the model and the trained layers' optimizer state (2.1 s on 2 cores with 4 layers trained,
# bench/stage_overhead.py), so a stage shorter than this (every stage on a GPU, most on a CPU) saves none and an
# interrupted one redoes at most this much (biasaware/training/checkpoints.py)
SAVE_MINUTES = 5.0


class Arm(BaseModel):
    rows: str  # training rows folder of the seed
    bias_ratio: str
    rewards: list[str]
    scale_rewards: str = "group"
    sft_of: str | None = None  # another arm whose SFT checkpoint this arm's GRPO starts from
    what: str  # its training rows; its GRPO rewards are named from ``Budget.grpo_rewards``


ARMS: dict[str, Arm] = {
    "baseline": Arm(
        rows="train-arms",
        bias_ratio="0:4",
        rewards=["accuracy", "format"],
        what="natural pairs (the cue on the chosen answer at the cue rate)",
    ),
    "paper": Arm(
        rows="train-arms",
        bias_ratio="4:4",
        rewards=["accuracy", "format"],
        what="natural pairs + as many bias-aware pairs (JudgeBiasBench)",
    ),
    "balanced": Arm(
        rows="train-balanced",
        bias_ratio="0:4",
        rewards=["accuracy", "cue_consistency", "format"],
        scale_rewards="none",
        what="balanced rows (cue on neither, either, both)",
    ),
    "balanced-acc": Arm(
        rows="train-balanced",
        bias_ratio="0:4",
        rewards=["accuracy", "format"],
        scale_rewards="none",
        sft_of="balanced",
        what="the ablation: the balanced arm's SFT and rows, GRPO without the cue-consistency reward",
    ),
}
BASELINE = "baseline"


KEY_NEGATIVES = (
    "share of training pairs that also give a master-key row (the chosen answer against a non-answer), and on "
    "balanced rows a short-correct row, in every judge's SFT and GRPO data"
)
BOTH_ORDERS = (
    "GRPO's prompts in both answer orders, adjacent in one batch, and every arm's GRPO with a reward for "
    "the same answer in both orders (the swap-consistency reward; the balanced arms' cue-consistency reward "
    "already counts the swapped order as a twin view); SFT is unchanged"
)
SFT_BENCH_PROBES = (
    "probes per trained cue and side each arm's SFT checkpoint is scored on: a fixed sample of the benchmark "
    "(seeded by its seed), on which the SFT checkpoint is paired with its SFT+GRPO judge (0: every probe)"
)
REWARD_PROBES = (
    "probes per side of position and master keys, a second fixed benchmark every judge is also scored on (0: "
    "none): what a judge used as a reward needs"
)


class Budget(BaseModel):
    """Every setting that sets the experiment's data and cost (recorded in the results; a rerun into
    the same folder must use the same)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    template: str = "verdict"
    trainable_layers: int | None = Field(12, ge=1)
    max_length: int = Field(512, ge=16)
    bench_probes: int = Field(
        55, ge=1, description="benchmark probes asked per trained cue and side (the verifier may keep fewer)"
    )
    bench_seed: int = Field(0, description="the fixed benchmark's seed (the same for every training seed)")
    train_pairs: int = Field(1200, ge=2, description="distinct natural training pairs per seed")
    start_pairs: int = Field(
        800, ge=1, description="of which the starting judge trains on (the arms: the rest)"
    )
    cue_rate: float = Field(
        0.7, ge=0, le=1, description="share of natural pairs with the cue on the chosen answer"
    )
    start_steps: int = Field(200, ge=1, description="SFT steps of the shared starting judge")
    sft_steps: int = Field(80, ge=1, description="each arm's own SFT steps, from the starting judge")
    sft_batch: int = Field(4, ge=1)
    sft_lr: float = Field(2e-4, gt=0)
    sft_schedule: str = Field("constant_with_warmup", description="transformers' lr_scheduler_type")
    grpo_steps: int = Field(12, ge=1)
    grpo_batch: int = Field(16, ge=2, description="completions per step: prompts x num_generations")
    num_generations: int = Field(4, ge=2)
    grpo_pool: int = Field(192, ge=1, description="prompts scored to choose the GRPO prompts from")
    max_completion_length: int = Field(3, ge=1)
    grpo_lr: float = Field(5e-5, gt=0)
    # added later (ADDED_LATER: left out of the record at their default): master-key rows in the data, reward
    # checks, both orders, GRPO's sampling temperature and its signal target, the SFT checkpoints' sample
    key_negatives: float = Field(0.0, ge=0, le=1, description=KEY_NEGATIVES)
    reward_probes: int = Field(0, ge=0, description=REWARD_PROBES)
    both_orders: bool = Field(False, description=BOTH_ORDERS)
    grpo_temperature: float = Field(
        1.0,
        gt=0,
        le=2,
        description="GRPO's sampling temperature (a signal target, when set, chooses it instead)",
    )
    grpo_signal_target: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="GRPO's sampling temperature: the lowest from 1 to 1.5 giving the chosen prompts' expected share of groups with signal this share",
    )
    sft_bench_probes: int = Field(0, ge=0, description=SFT_BENCH_PROBES)

    def record(self) -> dict[str, Any]:
        """The budget as results and the study's claim record it: a setting added later is left out at
        its default, so a folder made before it still resumes."""
        data = self.model_dump()
        return {k: v for k, v in data.items() if k not in ADDED_LATER or v != ADDED_LATER[k]}

    def grpo_rewards(self, arm: Arm) -> list[str]:
        """The rewards of ``arm``'s GRPO: its own, with the swap-consistency reward before ``format``
        when prompts come in both orders and the arm has no twin reward yet (``both_orders``)."""
        if not self.both_orders or set(arm.rewards) & set(TWIN_REWARDS):
            return list(arm.rewards)
        at = arm.rewards.index("format") if "format" in arm.rewards else len(arm.rewards)
        return [*arm.rewards[:at], "swap_consistency", *arm.rewards[at:]]

    @property
    def sft_sample(self) -> int:
        """Probes a cue and side the SFT checkpoints are scored on, when fewer than the benchmark's
        (``sft_bench_probes``), else 0: every probe."""
        return self.sft_bench_probes if self.sft_bench_probes < self.bench_probes else 0

    @property
    def grpo_prompts(self) -> int:
        """Prompts GRPO trains on: its steps x prompts per step (one epoch of the chosen ones)."""
        return self.grpo_steps * max(1, self.grpo_batch // self.num_generations)


# the budget's settings added later, with their defaults (Budget.record leaves them out at these)
ADDED_LATER = {
    name: Budget.model_fields[name].default
    for name in (
        "key_negatives",
        "reward_probes",
        "both_orders",
        "grpo_temperature",
        "grpo_signal_target",
        "sft_bench_probes",
    )
}

PRESETS: dict[str, dict[str, Any]] = {
    # on 2 cores scoring a checkpoint on all 1,096 views takes about 1.5 min: the three SFT checkpoints are scored on
    # half the probes (28 of 55 a cue and side), so that a seed fits half an hour (docs/generative.md)
    "cpu": {"sft_bench_probes": 28},
    # a GPU affords all layers, more steps and more probes (not measured here)
    "gpu": {
        "trainable_layers": None,
        "train_pairs": 2400,
        "start_pairs": 1600,
        "start_steps": 200,
        "sft_steps": 100,
        "sft_batch": 8,
        "grpo_steps": 50,
        # the paper and balanced arms' SFT judges are right at p near 1 on most of their rows: a larger pool finds
        # the prompts they are unsure of (at 800 they kept 35.5% and 33.5% of groups with signal), and a larger group
        # is mixed more often (docs/generative.md, "Larger groups, trained, in bfloat16")
        "grpo_pool": 3200,
        "grpo_batch": 48,  # 12 completions of each of 4 prompts a step
        "num_generations": 12,
        # at 5e-05 fifty steps on every layer make the verdict certain: in a CPU run of this preset's baseline arm the
        # groups with signal fell to 29.5% (15 of 50 steps with none), at 1e-05 57.0% (docs/generative.md)
        "grpo_lr": 1e-5,
        # this preset's SFT judges are right at p near 1 on most of the pool, which leaves most groups uniform at
        # temperature 1, and training makes the verdicts surer at 1 faster than at 1.5: with groups of 12 a signal
        # target of 0.6 sampled the baseline arm at 1 (63% of groups expected with signal, 40.5% had it), at 1.5 it
        # had 76.5% and the balanced arm 56.5%. A folder of the earlier preset resumes with --grpo-pool 1600
        # --num-generations 8 --grpo-temperature 1 --grpo-signal-target 0.6
        "grpo_temperature": 1.5,
    },
}


def make_budget(
    preset: str, overrides: dict[str, Any] | None = None, base: dict[str, Any] | None = None
) -> Budget:
    """The budget of ``preset`` with ``overrides``; ``base``: a recorded budget (a seed's own) that the
    overrides change instead of the preset's values."""
    overrides = dict(overrides or {})
    group = overrides.get("num_generations")
    if (
        isinstance(group, int) and group >= 2 and "grpo_batch" not in overrides
    ):  # else the budget says what is wrong
        # a group size keeps the preset's (or the base's) prompts a step: the completions a step grow with it
        given = parts.preset_budget(Budget, PRESETS, preset, base)
        overrides["grpo_batch"] = given.grpo_batch // given.num_generations * group
    budget = parts.preset_budget(Budget, PRESETS, preset, {**(base or {}), **overrides})
    if budget.start_pairs >= budget.train_pairs:
        raise BiasAwareError(
            f"budget: start_pairs ({budget.start_pairs}) must leave pairs for the arms "
            f"(train_pairs {budget.train_pairs})"
        )
    if budget.grpo_pool < budget.grpo_prompts:
        raise BiasAwareError(
            f"budget setting {parts.setting_named('grpo_pool', overrides)} is {budget.grpo_pool}: it must hold the "
            f"{budget.grpo_prompts} prompts GRPO trains on"
        )
    return budget


def machine() -> dict[str, Any]:
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    units = cpu_bfloat16_units()  # AMX or AVX512-BF16: their speed-ups differ
    return {
        "cores": cores,
        "cpu": platform.processor() or platform.machine(),
        "cpu_model": cpu_model(),  # two AVX512 CPUs here differed by 1.5x in a float32 view
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),  # AVX2, AVX512, ...: step rates differ by it
        "cpu_bfloat16": units is not None,  # bfloat16 in hardware (native_bfloat16, study_precision)
        "cpu_bfloat16_units": units,
        "gpu": gpu,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


class LoadMonitor:
    """The machine's 1-minute load average, sampled every ``every`` seconds on a thread while a
    stage runs: its mean and largest value say whether the stage had the cores to itself (a
    2-thread stage alone on 2 cores reads about 2)."""

    def __init__(self, every: float = 5.0):
        self.every, self.samples = every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> LoadMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def record(self) -> dict[str, Any]:
        s = self.samples or [os.getloadavg()[0]]
        return {"mean": round(sum(s) / len(s), 2), "max": round(max(s), 2), "samples": len(s)}


def contended(load: dict[str, Any], cores: int) -> bool:
    """A stage shared the cores when the mean load exceeded the cores by more than a quarter."""
    return load["mean"] > 1.25 * cores


def check_fits(model: str, trainable_layers: int | None) -> None:
    """A budget the model cannot take (more trainable layers than it has) is refused before the
    study's folder is claimed; only the model's configuration is read."""

    if trainable_layers is None:  # every layer: nothing to check
        return
    layers = getattr(load_config(model), "num_hidden_layers", None)
    if layers is not None and trainable_layers > layers:
        raise BiasAwareError(
            f"--trainable-layers {trainable_layers}: {model} has {layers} layers; give at most {layers}"
        )


def claim(
    out: Path,
    budget: Budget,
    device: str,
    model: str,
    arms: list[str],
    dtype: str = "auto",
    precision: str = "float32",
) -> None:
    """Refuse a folder holding another study's settings (data, checkpoints and judgments would mix);
    record them in a new one. The seeds are not part of the claim: a study grows by seeds. The device
    is recorded as given; another spelling of the same place here (``cpu`` for an ``auto`` that meant
    the CPU) is the same setting."""
    mine = {
        "experiment": "generative-seeds",
        "budget": budget.record(),
        "device": same_place(out, device),
        "model": model,
        "arms": arms,
        # left out at auto, so folders made before the setting resume; judges of two dtypes would mix
        **({"dtype": dtype} if dtype != "auto" else {}),
        # left out at float32, the precision of the folders made before the setting
        **({"precision": precision} if precision != "float32" else {}),
    }
    earlier = claimed(out) or {}
    was, now = preset_of(out, earlier.get("budget")), preset_of(out, mine["budget"])
    if earlier.get("experiment") == "generative-seeds" and was and now and was != now:
        raise BiasAwareError(  # named by its preset, not by every setting the two presets differ on
            f"{out} holds a generative study of the {was} budget preset, and this command's is {now}: "
            f"--budget {was} resumes it; use a new --out for the {now} preset"
        )
    defaults = {"dtype": "auto", "precision": "float32", **{f"budget.{k}": v for k, v in ADDED_LATER.items()}}
    parts.claim_folder(out, "experiment.json", mine, "a generative study", defaults)


def preset_of(out: Path, budget: Any) -> str | None:
    """The budget preset whose budget ``budget`` (a recorded one) is, as ``out`` would run it (its SFT
    sample: :func:`folder_sample`); ``None`` when it is none of them (a preset with overrides)."""
    for name in PRESETS:
        if budget == make_budget(name, folder_sample(out, None)).record():
            return name
    return None


def study_precision(out: Path, device, dtype: str) -> str:
    """The precision the study trains in, on ``device`` (resolved): ``bfloat16`` or ``float16`` is
    mixed precision (TRL's ``bf16``/``fp16``: float32 weights and optimizer, the matrix products in
    the lower precision), ``float32`` none. An explicit ``dtype`` sets it (float16 on a CUDA device
    only); ``auto`` keeps the folder's own (float32 for one made before the setting), else is bfloat16
    where the hardware computes it (:func:`biasaware.devices.native_bfloat16`: a recent GPU, or a CPU
    with AMX or AVX512-BF16; with AMX the second design's seed took 28 minutes against 49:
    ``docs/generative.md``) and float32 elsewhere."""
    if dtype != "auto":
        if dtype == "float16" and device.type != "cuda":
            raise BiasAwareError(
                "--dtype float16: training in float16 mixed precision needs a CUDA device; use bfloat16 or float32"
            )
        return dtype
    earlier = claimed(out)
    if earlier is not None:
        return str(earlier.get("precision", "float32"))
    return "bfloat16" if native_bfloat16(device) else "float32"


def evaluation_dtype(device, dtype: str, precision: str):
    """The evaluations' dtype on ``device``: ``dtype`` as given, else the study's ``precision`` where it is
    lower than float32 (else the device's own, :func:`biasaware.devices.resolve_dtype`)."""
    return resolve_dtype(dtype if dtype != "auto" or precision == "float32" else precision, device)


def as_folder_made(out: Path, device, dtype: str) -> str:
    """``auto`` for a ``dtype`` given on a folder made at ``auto`` (which records none) where its auto trained
    and judges in that very dtype (``--dtype bfloat16`` on a folder whose auto meant bfloat16): the same
    study, resumed, not another study's settings. Else ``dtype``."""
    earlier = claimed(out)
    if dtype == "auto" or earlier is None or "dtype" in earlier:
        return dtype
    precision = study_precision(out, device, "auto")
    judged = describe(device, evaluation_dtype(device, "auto", precision))["dtype"]
    return "auto" if precision == judged == dtype else dtype


def folder_sample(out: Path, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """``overrides`` with, when ``sft_bench_probes`` is not among them, the folder's own: a study made
    before the setting scored its SFT checkpoints on every probe (0), and resumes so whatever the
    preset's value now."""
    overrides = dict(overrides or {})
    earlier = claimed(out)
    if (
        "sft_bench_probes" not in overrides
        and earlier is not None
        and isinstance(earlier.get("budget"), dict)
    ):
        overrides["sft_bench_probes"] = earlier["budget"].get(
            "sft_bench_probes", ADDED_LATER["sft_bench_probes"]
        )
    return overrides


def same_place(out: Path, device: str) -> str:
    """``device``, or the folder's recorded device when that resolves to the same place here."""
    earlier = (claimed(out) or {}).get("device")
    try:
        if isinstance(earlier, str) and earlier != device and where(earlier) == where(device):
            return earlier
    except BiasAwareError:
        pass  # a place not available here
    return device


def build_bench_once(out: Path, budget: Budget) -> dict[str, Any]:
    """The fixed benchmark every seed is scored on (module docstring)."""

    cfg = BuildConfig(
        seed=budget.bench_seed,
        families="facts",
        biases=",".join(TRAINED_CUES),
        n_per_bias=budget.bench_probes,
    )
    manifest = build_bench(cfg, out / "bench")
    if budget.reward_probes:
        checks = replace(cfg, biases=",".join(REWARD_CHECKS), n_per_bias=budget.reward_probes)
        made = build_bench(checks, out / "bench-reward")
        kept = ", ".join(f"{b} {m['kept']}" for b, m in made["biases"].items())
        print(f"[build] reward checks: probes a side: {kept}", flush=True)
    kept = {b: m["kept"] for b, m in manifest["biases"].items()}
    mirror = {b: m["kept"] for b, m in manifest["mirror"].items()}
    short = [b for b in TRAINED_CUES if min(kept.get(b, 0), mirror.get(b, 0)) < budget.bench_probes]
    print(
        f"[build] bench: {sum(kept.values())} standard + {sum(mirror.values())} mirror probes of "
        f"{', '.join(TRAINED_CUES)} (held-out fact families: {', '.join(FACT_TEST_FAMILIES)}; seed "
        f"{budget.bench_seed}, the same for every training seed)",
        flush=True,
    )
    if short:
        print(
            f"[build] bench: fewer than {budget.bench_probes} probes a side for {', '.join(short)}",
            flush=True,
        )
    return manifest


def pair_of(row) -> str:
    """The base pair a training row was made from (a natural row is its pair)."""
    return str(row.meta.get("pair_id", row.id))


def split_pairs(ids: list[str], n_start: int, seed: int) -> tuple[set[str], set[str]]:
    """The starting judge's pairs and the arms' pairs: a seeded split of ``ids``, disjoint."""
    order = sorted(set(ids))
    random.Random(f"{seed}:split").shuffle(order)
    return set(order[:n_start]), set(order[n_start:])


def build_data(folder: Path, seed: int, budget: Budget) -> dict[str, Any]:
    """One seed's training rows (module docstring): ``train-start`` (the starting judge's natural
    pairs), ``train-arms`` (the other natural pairs, with bias negatives for the paper arm) and
    ``train-balanced`` (the arm pairs' four cue placements). Returns what they hold (also written
    to ``data.json``, the mark of a finished build)."""

    cues = ",".join(TRAINED_CUES)
    natural = BuildConfig(
        seed=seed,
        families="facts",
        cues="natural",
        biases=cues,
        max_rows=budget.train_pairs,
        cue_rates={c: budget.cue_rate for c in TRAINED_CUES},
        key_negatives=budget.key_negatives,
    )
    made = {
        "natural": build_train(natural, folder / "build-natural"),
        "balanced": build_train(replace(natural, augment="balanced"), folder / "build-balanced"),
    }
    rows = read_records(folder / "build-natural" / "train.jsonl", "train")
    balanced = read_records(folder / "build-balanced" / "train.jsonl", "train")
    # split by base pair: a pair's master-key and short-correct rows go where the pair goes
    start, arms = split_pairs([pair_of(r) for r in rows], budget.start_pairs, seed)
    subsets = {
        "train-start": [r for r in rows if pair_of(r) in start],
        "train-arms": [r for r in rows if pair_of(r) in arms],
        "train-balanced": [r for r in balanced if pair_of(r) in arms],
    }
    pairs = len({pair_of(r) for r in rows})
    record: dict[str, Any] = {"pairs": pairs, "dropped_by_verifier": made["natural"]["dropped"]}
    for name, part in subsets.items():
        target = folder / name / "train.jsonl"
        if not target.exists():
            write_jsonl(target, [r.to_dict() for r in part])
        cued = [r for r in part if "key_type" not in r.meta and not r.meta.get("short_correct")]
        on_chosen = sum(r.meta.get("natural_cue_on", r.meta.get("cue_on")) == "chosen" for r in cued)
        record[name] = {"rows": len(part), "cue_on_chosen": round(on_chosen / max(len(cued), 1), 3)}
        if budget.key_negatives:
            record[name]["key_rows"] = sum("key_type" in r.meta for r in part)
            record[name]["short_correct_rows"] = sum(bool(r.meta.get("short_correct")) for r in part)
    record["cue_rate"] = budget.cue_rate
    write_json(folder / "data.json", record)
    print(
        f"[build] seed {seed}: {pairs} natural pairs (cue on the chosen answer at rate {budget.cue_rate}"
        + (
            f"; {record['dropped_by_verifier']} dropped by the verifier"
            if record["dropped_by_verifier"]
            else ""
        )
        + "): "
        f"{record['train-start']['rows']} for the starting judge, {record['train-arms']['rows']} for the arms "
        f"({record['train-balanced']['rows']} balanced rows)",
        flush=True,
    )
    return record


def train_flags(arm: Arm, budget: Budget, seed: int, cpu: bool, precision: str = "float32") -> dict[str, Any]:
    """The recipe settings every SFT and GRPO stage of a seed shares: a resumable checkpoint every
    ``SAVE_MINUTES`` of training, none at its last step (the final model is saved then); the study's
    mixed precision, if any (:func:`study_precision`)."""
    return {
        **({"bf16": True} if precision == "bfloat16" else {}),
        **({"fp16": True} if precision == "float16" else {}),
        "seed": seed,
        "template": budget.template,
        "bias_ratio": arm.bias_ratio,
        "save_strategy": "no",
        "save_minutes": SAVE_MINUTES,
        "save_total_limit": 1,
        "use_cpu": cpu,
        "logging_steps": 1,
        "trainable_layers": budget.trainable_layers,
    }


def sft(run: SeedRun, rows: str, arm: Arm, model: str | Path, target: Path, steps: int, what: str) -> None:
    """``steps`` of SFT on verdicts of ``rows`` from ``model`` into ``target``."""
    b = run.budget
    flags = {
        "config": run.configs / "sft_verdict.yaml",
        "model_name_or_path": model,
        "output_dir": target,
        "train_file": run.folder / rows / "train.jsonl",
        "max_steps": steps,
        "per_device_train_batch_size": b.sft_batch,
        "learning_rate": b.sft_lr,
        "lr_scheduler_type": b.sft_schedule,
        "max_length": b.max_length,
        **train_flags(arm, b, run.seed, run.cpu, run.precision),
    }
    parts.run_stage("sft", flags, f"SFT of {what}", run.folder / "run.log", cpu=run.cpu)


def grpo(run: SeedRun, arm: Arm, model: Path, target: Path, what: str) -> None:
    """GRPO of ``arm`` from ``model`` into ``target``, on the prompts of most signal (module docstring)."""
    flags = grpo_flags(
        run.budget, arm, run.seed, model, target, run.folder, run.configs, run.cpu, run.precision
    )
    parts.run_stage("grpo", flags, f"GRPO of {what}", run.folder / "run.log", cpu=run.cpu)


def grpo_flags(
    b: Budget,
    arm: Arm,
    seed: int,
    model: Path,
    target: Path,
    folder: Path,
    configs: Path = CONFIGS / BASE_MODEL,
    cpu: bool = True,
    precision: str = "float32",
) -> dict[str, Any]:
    """The recipe flags of ``arm``'s GRPO stage in the seed folder ``folder`` (its training rows), from
    ``model`` into ``target`` (``bench/grpo_signal.py`` runs it again with other settings)."""
    return {
        "config": configs / "grpo_verdict.yaml",
        "model_name_or_path": model,
        "output_dir": target,
        "train_file": folder / arm.rows / "train.jsonl",
        "max_steps": b.grpo_steps,
        "per_device_train_batch_size": b.grpo_batch,
        "num_generations": b.num_generations,
        "max_completion_length": b.max_completion_length,
        "learning_rate": b.grpo_lr,
        "rewards": b.grpo_rewards(arm),
        "reward_weights": ["1.0"] * len(b.grpo_rewards(arm)),
        "scale_rewards": arm.scale_rewards,
        "select_prompts": b.grpo_prompts,
        "select_pool": b.grpo_pool,
        **({"signal_target": b.grpo_signal_target} if b.grpo_signal_target else {}),
        **(
            {"temperature": b.grpo_temperature}
            if b.grpo_temperature != ADDED_LATER["grpo_temperature"]
            else {}
        ),
        **({"both_orders": True} if b.both_orders else {}),
        **train_flags(arm, b, seed, cpu, precision),
    }


def card_of(ckpt: Path) -> dict[str, Any]:
    return json.loads((ckpt / "biasaware_card.json").read_text())


def step_rate(ckpt: Path) -> dict[str, Any]:
    """Steps and seconds per step of a finished run, from its model card's log (a resumed run's time
    covers the steps after the checkpoint it resumed from: ``resumed_from_step``), with the steps' own
    seconds (``steps_seconds``: the trainer's ``train_runtime``) and the run's phases (``phases``: the
    card's ``phase_seconds``, :class:`biasaware.training.recipe.Phases`) and its resumable checkpoints'
    count and seconds, within the steps' (``checkpoints``, :mod:`biasaware.training.checkpoints`), where the
    card has them."""
    card = card_of(ckpt)
    end = next((e for e in reversed(card.get("log_history") or []) if "train_runtime" in e), None)
    steps = int(card.get("step") or 0)
    resumed = int(card.get("resumed_from_step") or 0)
    timed = steps - resumed
    rate: dict[str, Any] = {"steps": steps, **({"resumed_from_step": resumed} if resumed else {})}
    for key, name in (("phase_seconds", "phases"), ("checkpoints", "checkpoints")):
        if card.get(key):
            rate[name] = card[key]
    if end is None or timed <= 0:
        return {**rate, "seconds_per_step": None}
    runtime = end["train_runtime"]
    return {**rate, "seconds_per_step": round(runtime / timed, 2), "steps_seconds": round(runtime, 2)}


def stage_overhead(seconds: dict[str, float], rates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each training stage's time beyond its steps: its seconds (``seconds``: the stage times, keyed
    ``train <name>``), its steps' own (``rates``: :func:`step_rate` by name) and the rest,
    ``outside_steps``; where the card kept its phases, that rest phase by phase
    (:func:`biasaware.experiments.parts.beyond_steps`)."""
    out: dict[str, Any] = {}
    for name, rate in rates.items():
        wall, steps = seconds.get(f"train {name}"), rate.get("steps_seconds")
        if wall is None or steps is None:
            continue
        row: dict[str, Any] = {"seconds": wall, "steps": steps, "outside_steps": round(wall - steps, 1)}
        if "train" in (rate.get("phases") or {}):
            row["phases"] = parts.beyond_steps(rate["phases"], steps, wall)
        out[name] = row
    return out


def overhead_markdown(overhead: dict[str, Any]) -> str:
    """One line: each training stage's seconds beyond its steps, and the phases they went to."""

    def one(name: str, row: dict[str, Any]) -> str:
        phases = row.get("phases")
        detail = f" ({', '.join(f'{k} {v:g}' for k, v in phases.items())})" if phases else ""
        return f"{name} {row['outside_steps']:g} s{detail}"

    return "Seconds beyond the steps, per training stage: " + "; ".join(
        one(name, row) for name, row in overhead.items()
    )


def grpo_signal(ckpt: Path) -> dict[str, Any]:
    """What GRPO had to learn from: the prompt selection and, per step, the reward's standard
    deviation over the batch, the share of groups whose rewards were all alike and the mean
    per-token entropy of the sampled completions (TRL's ``reward_std``, ``frac_reward_zero_std``
    and ``entropy``). A verdict whose entropy falls towards 0 is sampled alike in every group: the
    signal goes with it (``entropy``: the first and the last step's)."""
    card = card_of(ckpt)
    steps = [
        {
            "step": e.get("step"),
            "reward": e.get("reward"),
            "reward_std": e.get("reward_std"),
            "zero_std_groups": e.get("frac_reward_zero_std"),
            "entropy": e.get("entropy"),
        }
        for e in card.get("log_history") or []
        if "reward_std" in e
    ]
    zero = [s["zero_std_groups"] for s in steps if s["zero_std_groups"] is not None]
    std = [s["reward_std"] for s in steps if s["reward_std"] is not None]
    entropy = [s["entropy"] for s in steps if s["entropy"] is not None]
    return {
        "selection": card.get("grpo_selection"),
        "steps": steps,
        "mean_reward_std": round(sum(std) / len(std), 4) if std else None,
        "mean_zero_std_groups": round(sum(zero) / len(zero), 4) if zero else None,
        "entropy": [round(e, 4) for e in (entropy[0], entropy[-1])] if entropy else None,
        # steps skipped as their gradients were not finite (biasaware/training/finite.py)
        **(
            {"nonfinite_steps": [s["step"] for s in card["nonfinite_steps"]]}
            if card.get("nonfinite_steps")
            else {}
        ),
    }


def weights_hash(ckpt: Path) -> str | None:

    return model_identity(str(ckpt), "causal").get("weights_sha256")


class SeedRun:
    """One seed's folder: its stages, each timed with the load it ran under (``stages.json``).
    ``configs``: the recipe configs the stages train with (``recipes/configs/<name>``)."""

    def __init__(
        self,
        folder: Path,
        seed: int,
        budget: Budget,
        cpu: bool,
        model: str,
        configs: str = BASE_MODEL,
        precision: str = "float32",
    ):
        self.folder, self.seed, self.budget, self.cpu, self.model = folder, seed, budget, cpu, model
        self.precision = precision
        self.configs = CONFIGS / configs
        folder.mkdir(parents=True, exist_ok=True)
        self.stages = parts.Stages(folder / "stages.json")
        self.stages.data.setdefault("load", {})
        self.cores = machine()["cores"]

    def stage(self, name: str, work, done: bool, what: str = "") -> Any:
        """Run ``work`` (unless ``done``), recording its time and load under ``name``."""
        if done:
            print(f"[generative] seed {self.seed}: {name}: finished earlier", flush=True)
        elif what:
            print(f"[generative] seed {self.seed}: {name}: {what}", flush=True)
        t0 = time.time()
        with LoadMonitor() as load:
            result = None if done else work()
        self.stages.record(name, time.time() - t0, not done)
        if not done:
            rec = load.record()
            self.stages.data["load"][name] = {**rec, "contended": contended(rec, self.cores)}
            write_json(self.stages.path, self.stages.data)
        return result

    def ckpt(self, name: str) -> Path:
        return self.folder / "ckpt" / name

    def train(self, arms: list[str]) -> dict[str, tuple[Path, Path]]:
        """The starting judge, then each arm's SFT (unless it starts from another arm's) and GRPO."""

        b, start = self.budget, self.ckpt("start-sft")
        self.stage(
            "train start SFT",
            lambda: sft(
                self, "train-start", ARMS[BASELINE], self.model, start, b.start_steps, "the starting judge"
            ),
            trained(start),
            f"SFT of {self.model}, {counted(b.start_steps, 'step')} of {b.sft_batch} rows (natural pairs)",
        )
        out: dict[str, tuple[Path, Path]] = {}
        for name in arms:
            arm = ARMS[name]
            tuned = self.ckpt(f"{arm.sft_of or name}-sft")
            if arm.sft_of is None:
                self.stage(
                    f"train {name} SFT",
                    lambda arm=arm, tuned=tuned, name=name: sft(
                        self, arm.rows, arm, start, tuned, b.sft_steps, name
                    ),
                    trained(tuned),
                    f"{counted(b.sft_steps, 'step')} of {b.sft_batch} rows ({arm.what})",
                )
            elif not trained(tuned):
                raise BiasAwareError(
                    f"arm {name} starts from {arm.sft_of}'s SFT checkpoint: train {arm.sft_of} first"
                )
            final = self.ckpt(f"{name}-grpo")
            self.stage(
                f"train {name} GRPO",
                lambda arm=arm, tuned=tuned, final=final, name=name: grpo(self, arm, tuned, final, name),
                trained(final),
                f"{counted(b.grpo_steps, 'step')} of {b.grpo_batch} completions on the {b.grpo_prompts} "
                f"prompts of most signal of {b.grpo_pool} (rewards {', '.join(b.grpo_rewards(arm))})",
            )
            out[name] = (tuned, final)
        return out

    def evaluate(
        self,
        bench: Path,
        judges: dict[str, Path],
        place: dict[str, str],
        checks: bool = False,
        sampled: frozenset[str] = frozenset(),
    ) -> dict[str, Path]:
        """Every judge of ``judges`` (the starting judge, each arm's SFT and final checkpoints) on every
        probe of the fixed benchmark, or those named in ``sampled`` on the budget's fixed sample of it
        (``sft_bench_probes`` a cue and side), direct mode, on the study's resolved ``place``; with
        ``checks``, on the reward checks (position and master keys) instead, every probe."""
        where, biases, what = (
            ("eval-reward", REWARD_CHECKS, "reward checks ") if checks else ("eval", TRAINED_CUES, "")
        )
        folders = {}
        for name, model in judges.items():
            folder = folders[name] = self.folder / where / name

            def work(model=model, folder=folder, name=name):
                spec = JudgeSpec.create(
                    name=str(model), mode="direct", template=self.budget.template, **place
                )
                label = f"seed {self.seed} {name}{' reward checks' if checks else ''}"
                limit = self.budget.sft_sample if name in sampled and not checks else 0
                parts.evaluate_judge(
                    label,
                    spec,
                    bench,
                    folder,
                    biases=list(biases),
                    seed=self.budget.bench_seed,
                    limit=limit or None,
                )

            self.stage(f"{what or 'evaluate '}{name}", work, (folder / "summary.json").exists())
        return folders


def reward_outcomes(folder: Path) -> dict[str, str]:
    """A judge's per-probe reward checks, compact as :func:`outcomes` (probe-id order): per position
    probe, whether its two orders pick the same answer (both verdicts A or B, right in both or wrong
    in both); per master-key probe (standard side), whether the key view was not decided for the real
    answer (``key_fp``) and whether the key went unpunished in both orders (``key_unpunished``)."""
    judgments = read_records(folder / "judgments.jsonl", "judgment")
    views: dict[str, dict[str, Judgment]] = {}
    for j in judgments:
        if j.probe_id.startswith("position-"):
            views.setdefault(j.probe_id, {})[j.view] = j
    consistent = [
        all(v.verdict in ("A", "B") for v in pair.values())
        and len({v.verdict == v.correct for v in pair.values()}) == 1
        for _, pair in sorted(views.items())
        if len(pair) == 2
    ]
    flags = flip_indicators(judgments, "symmetric")
    keys = sorted(i for i, v in flags.items() if v["bias"] == "masterkey" and v["side"] == "standard")
    both = [flags[i]["key_unpunished"] for i in keys if flags[i]["key_unpunished"] is not None]
    return {
        "position_consistent": "".join(str(int(c)) for c in consistent),
        "key_fp": "".join(str(int(flags[i]["wrong_inj"])) for i in keys),
        "key_unpunished": "".join(str(int(c)) for c in both),
    }


def reward_checks(folders: dict[str, Path], baseline: str, out: Path) -> dict[str, Any]:
    """What a judge used as a reward needs, per judge: master-key false positives per view and over
    both answer orders, with the short-correct mirror side (:func:`compare_master_keys`, against
    ``baseline``), position consistency, and the per-probe outcomes the aggregate tests
    (:func:`reward_outcomes`)."""
    keys = compare_master_keys(folders, baseline)
    for row in keys["runs"].values():
        row["run"] = str(Path(row["run"]).resolve().relative_to(out.resolve()))
        row.pop("judge", None)
    found = {name: reward_outcomes(folder) for name, folder in folders.items()}
    position = {}
    for name, o in found.items():
        same, n = o["position_consistent"].count("1"), len(o["position_consistent"])
        position[name] = {"consistent": same, "n": n, "share": round(same / n, 4) if n else None}
    return {"master_keys": keys, "position": position, "outcomes": found}


def reward_checks_markdown(checks: dict[str, Any] | None) -> list[str]:
    """The reward checks' table: a row per judge (no lines when the study ran none)."""
    if not checks:
        return []
    lines = [
        "Reward checks: position consistency (both orders pick the same answer), master-key false positives per "
        "view and unpunished in both orders, short-correct mirror flips:",
        "",
        "| judge | position consistent | key FP (per view) | key unpunished (both orders) | mirror over-correction |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in checks["master_keys"]["runs"].items():
        pos = checks["position"].get(name, {})
        lines.append(
            f"| {name} | {pct(pos.get('share'))} ({pos.get('consistent')}/{pos.get('n')}) | {pct(row.get('fpr'))} | "
            f"{pct((row.get('reference') or {}).get('fpr'))} | {pct(row.get('overcorrection'))} |"
        )
    return [*lines, ""]


def sft_judge(arm: str) -> str:
    """The name an arm's SFT checkpoint is scored under (``baseline-sft``): the judge GRPO starts from,
    so each seed gives SFT alone and SFT+GRPO (an arm that starts from another's SFT checkpoint is read
    against that one's)."""
    return f"{ARMS[arm].sft_of or arm}-sft"


def outcomes(folder: Path, ids: dict[str, list[str]] | None = None) -> dict[str, str]:
    """A judge's per-probe outcomes on the benchmark, compact: for each side (standard, mirror) in
    probe-id order, ``ori`` (the original view judged right: 1/0) and ``flip`` (right on the original,
    wrong on the injected view) as strings of digits; the ids themselves are in the study's
    ``probes.json``. ``ids``: the benchmark's probes a side (:func:`probe_ids` of a judge scored on all
    of them), where a judge scored on a sample has ``-`` for each probe it was not asked."""

    flags = flip_indicators(read_records(folder / "judgments.jsonl", "judgment"), "symmetric")
    mine = probe_ids(folder, flags)
    out: dict[str, str] = {}
    for side in ("standard", "mirror"):
        every = mine[side] if ids is None else ids[side]
        if not set(mine[side]) <= set(every):
            raise BiasAwareError(f"{folder}: judged probes that are not the benchmark's ({side} side)")
        out[f"{side}_ori"] = "".join(str(int(bool(flags[i]["ori"]))) if i in flags else "-" for i in every)
        out[f"{side}_flip"] = "".join(str(int(bool(flags[i]["flip"]))) if i in flags else "-" for i in every)
    return out


def probe_ids(folder: Path, flags: dict[str, dict[str, Any]] | None = None) -> dict[str, list[str]]:
    """The trained cues' probes a judge was scored on, a side, in id order (``flags``: its
    per-probe indicators when read already)."""
    if flags is None:
        flags = flip_indicators(read_records(folder / "judgments.jsonl", "judgment"), "symmetric")
    return {
        side: sorted(i for i, v in flags.items() if v["side"] == side and v["bias"] in TRAINED_CUES)
        for side in ("standard", "mirror")
    }


def seed_table(folders: dict[str, Path], sampled: frozenset[str], seed: int) -> dict[str, Any]:
    """The seed's judges side by side (:func:`biasaware.evaluation.compare.compare_runs`), each
    against the baseline arm: on every probe, and a judge scored on the fixed sample (``sampled``)
    on that sample, with the baseline arm read on the same probes for its p-values (each row's ``n``
    says on how many)."""
    base = BASELINE if BASELINE in folders else START
    whole = {k: v for k, v in folders.items() if k not in sampled}
    table = compare_runs(whole, base, biases=list(TRAINED_CUES), seed=seed)
    if sampled:
        sample = compare_runs(
            {base: folders[base], **{k: folders[k] for k in sampled}},
            base,
            biases=list(TRAINED_CUES),
            seed=seed,
            common=True,
        )
        rows = {**table["runs"], **{k: sample["runs"][k] for k in sampled}}
        table["runs"] = {k: rows[k] for k in folders}  # the judges' own order
    return table


def run_seed(
    out: Path,
    seed: int,
    budget: Budget,
    arms: list[str],
    place: dict[str, str],
    model: str,
    configs: str = BASE_MODEL,
    precision: str = "float32",
    command: str = "biasaware quickstart --generative",
) -> dict[str, Any]:
    """One seed of the study into ``out/seed-N``; returns what its ``generative.json`` holds.
    ``place``: the device and dtype resolved once for the study (:func:`biasaware.devices.where`),
    which every judge of the seed is handed; ``precision``: what its training stages run in;
    ``command``: the command that runs this seed (:func:`seed_command`), recorded."""

    folder = out / f"seed-{seed}"
    result_file = folder / "generative.json"
    if result_file.exists():
        print(f"[generative] seed {seed}: finished earlier ({result_file})", flush=True)
        return json.loads(result_file.read_text())
    cpu = not place["device"].startswith("cuda")
    run = SeedRun(folder, seed, budget, cpu, model, configs, precision)
    t_all = time.time()
    done = (folder / "data.json").exists()
    data = run.stage("build", lambda: build_data(folder, seed, budget), done)
    data = data or json.loads((folder / "data.json").read_text())
    ckpts = run.train(arms)
    sfts = {sft_judge(name): sft for name, (sft, _) in ckpts.items() if ARMS[name].sft_of is None}
    judges = {START: run.ckpt("start-sft"), **sfts, **{name: grpo for name, (_, grpo) in ckpts.items()}}
    sampled = frozenset(sfts) if budget.sft_sample else frozenset()
    folders = run.evaluate(out / "bench", judges, place, sampled=sampled)
    checks = run.evaluate(out / "bench-reward", judges, place, checks=True) if budget.reward_probes else None
    table = seed_table(folders, sampled, budget.bench_seed)
    benchmark = probe_ids(folders[START])  # the starting judge is scored on every probe
    parts.name_within(table, out)  # results files are published: no local paths
    grpo = {}
    for name, (sft, final) in ckpts.items():
        before, after = weights_hash(sft), weights_hash(final)
        grpo[name] = {**grpo_signal(final), "weights_changed": before != after, "rate": step_rate(final)}
    rates = {"start SFT": step_rate(run.ckpt("start-sft"))}
    rates.update({f"{n} SFT": step_rate(sft) for n, (sft, _) in ckpts.items() if ARMS[n].sft_of is None})
    seconds, resumed = run.stages.finish(time.time() - t_all)
    overhead = stage_overhead(seconds, {**rates, **{f"{n} GRPO": g["rate"] for n, g in grpo.items()}})
    result = {
        "experiment": "generative-seeds",
        "command": command,
        "seed": seed,
        "commit": source_commit(),
        "budget": budget.record(),
        # each arm as it ran: its GRPO rewards with what the budget adds (both_orders: the swap reward)
        "arms": {k: {**ARMS[k].model_dump(), "rewards": budget.grpo_rewards(ARMS[k])} for k in arms},
        "machine": {**machine(), **place, "training_precision": precision},
        "model": model,
        "configs": f"recipes/configs/{configs}",
        "data": data,
        "table": table,
        "outcomes": {name: outcomes(f, benchmark) for name, f in folders.items()},
        **(
            {"reward_checks": reward_checks(checks, BASELINE if BASELINE in checks else START, out)}
            if checks
            else {}
        ),
        "grpo": grpo,
        "step_rates": rates,
        "stage_seconds": seconds,
        "stage_overhead": overhead,
        "resumed_seconds": resumed,
        "stage_load": run.stages.data["load"],
        "wall_minutes": round(seconds.get("total", 0) / 60, 1),
    }
    write_json(result_file, result)
    text = seed_markdown(result)
    (folder / "report.md").write_text(f"# The generative study, seed {seed}\n\n{text}")
    print("\n" + text)
    print(
        f"[generative] seed {seed} done in {result['wall_minutes']} min: {result_file} "
        f"(report: {folder / 'report.md'})",
        flush=True,
    )
    return result


def seed_markdown(result: dict[str, Any]) -> str:
    """One seed's two-sided table (each judge against the baseline arm, McNemar p on the same probes),
    what each GRPO stage had to learn from, and the seed's time: one draw, not a result about the arms
    (that is the aggregate's, across seeds)."""

    sample = sampled_note(result["budget"])
    lines = [
        experiment_markdown(result["table"]),
        *([sample, ""] if sample else []),
        *reward_checks_markdown(result.get("reward_checks")),
        "GRPO, per arm: the prompts chosen, the share of groups whose "
        "rewards were all alike (mean over steps), whether the weights changed:",
        "",
    ]
    for name, g in result["grpo"].items():
        selection = g.get("selection") or {}
        kept = selection.get("kept") or {}
        hotter = (
            f" at temperature {selection['temperature']}" if selection.get("temperature", 1.0) != 1.0 else ""
        )
        lines.append(
            f"- {name}: {kept.get('prompts')} prompts (expected uniform groups {kept.get('expected_uniform_groups')}"
            f"{hotter}); "
            f"uniform groups {g['mean_zero_std_groups']}; completion entropy, first and last step "
            f"{g.get('entropy')}; weights changed: {'yes' if g['weights_changed'] else 'NO'}"
            + (
                f"; steps skipped as their gradients were not finite: {', '.join(map(str, g['nonfinite_steps']))}"
                if g.get("nonfinite_steps")
                else ""
            )
        )
    contended = sorted(k for k, v in result.get("stage_load", {}).items() if v.get("contended"))
    lines += [
        "",
        f"Seed {result['seed']}: {result['wall_minutes']} min on {result['machine']['cores']} cores "
        f"({result['machine'].get('cpu_capability') or result['machine'].get('gpu') or 'CPU'}); stages that shared "
        f"the cores: {', '.join(contended) or 'none'}. One seed is one draw; the study's claims are in its "
        "aggregate across seeds.",
    ]
    if result.get("stage_overhead"):
        lines += ["", overhead_markdown(result["stage_overhead"]) + "."]
    return "\n".join(lines) + "\n"


MAX_SEEDS = 1000  # a study of seeds run one after another: more is a typo


def parse_seeds(text: str) -> list[int]:
    """``"0-9"``, ``"0,3,5"`` or a mix (``"0-2,7"``) as a sorted list of distinct seeds, each a seed
    (:func:`biasaware.errors.check_seed`), checked before a range is expanded; a seed named twice is refused
    (a settings file's repeated seeds are too).

    >>> parse_seeds("0-2,7")
    [0, 1, 2, 7]
    """

    def number(part: str) -> int:
        part = part.strip()
        if not (part.isascii() and part.isdigit()):
            raise BiasAwareError(f"--seeds {text!r}: expected seeds like 0-9 or 0,1,2")
        return check_seed(int(part), "--seeds: seed")

    seeds: set[int] = set()
    for part in str(text).split(","):
        lo, sep, hi = part.partition("-")
        if sep:
            a, b = number(lo), number(hi)
            if b < a:
                raise BiasAwareError(f"--seeds {text!r}: a range runs from low to high, e.g. 0-9")
            if b - a >= MAX_SEEDS:
                raise BiasAwareError(f"--seeds {text!r}: at most {MAX_SEEDS} seeds in one study")
            named = set(range(a, b + 1))
        else:
            named = {number(part)}
        if named & seeds:
            raise BiasAwareError(f"--seeds {text!r}: seed {min(named & seeds)} is named twice")
        seeds |= named
        if len(seeds) > MAX_SEEDS:  # over the whole list, not per range
            raise BiasAwareError(f"--seeds {text!r}: at most {MAX_SEEDS} seeds in one study")
    return sorted(seeds)


def choose_arms(arms: list[str] | None) -> list[str]:
    """The arms to train (all when left out), checked before any work (:func:`parts.named_arms`), and
    what each is compared with or starts from among them."""
    chosen = parts.named_arms(arms, ARMS) or list(ARMS)
    for name in chosen:
        needs = ARMS[name].sft_of
        if needs and needs not in chosen:
            raise BiasAwareError(f"arm {name} starts from {needs}'s SFT checkpoint: add {needs} to --arms")
    if BASELINE not in chosen:
        raise BiasAwareError(f"every arm is compared with the {BASELINE} arm: add {BASELINE} to --arms")
    return chosen


def seed_command(
    seed: int, preset: str | None, overrides: dict[str, Any], arms: list[str] | None, dtype: str
) -> str:
    """The command line of one seed as it was given (its output folder aside): the preset when named,
    each budget flag given, the arms when chosen, the dtype when not ``auto``; settings the API was given
    that have no flag follow in brackets."""
    words = ["biasaware", "quickstart", "--generative", "--seeds", str(seed)]
    words += ["--budget", preset] if preset else []
    api = []
    for key, value in overrides.items():
        if not (flag := parts.budget_flag(key)):
            api.append(f"{key}={value}")
        elif value is True:
            words.append(flag)
        elif value not in (None, False):
            words += [flag, str(value)]
    words += ["--arms", ",".join(arms)] if arms else []
    words += ["--dtype", dtype] if dtype != "auto" else []
    return " ".join(words) + (f" (budget {', '.join(api)})" if api else "")


def run_generative(
    out: Path,
    seeds: list[int] | None = None,
    device: str = "auto",
    dtype: str = "auto",
    preset: str | None = None,
    overrides: dict[str, Any] | None = None,
    arms: list[str] | None = None,
    model: str = BASE_MODEL,
    configs: str = BASE_MODEL,
) -> dict[str, Any]:
    """The study (module docstring): each seed in turn, then the aggregate when two or more seeds of
    the folder are finished. Returns the aggregate (or the one seed's result). ``model`` is the
    judge to start from (tests use a tiny one), ``configs`` the recipe configs it trains with
    (``recipes/configs/<configs>``)."""

    for seed in seeds or []:
        check_seed(seed, "seed")
    out = check_out_folder(out, "--out")  # before the model is read (a first run converts it)
    here = resolve_device(device)
    dtype = as_folder_made(out, here, parts.folder_dtype(out, check_dtype_name(dtype)))
    precision = study_precision(out, here, dtype)
    place = describe(here, evaluation_dtype(here, dtype, precision))
    named = preset
    preset = preset or ("gpu" if here.type == "cuda" else "cpu")
    budget = make_budget(preset, folder_sample(out, overrides))
    chosen = choose_arms(arms)
    seeds = seeds if seeds is not None else [0]
    # another run's folder is refused before the model is read (a first run converts it: seconds)
    refuse_foreign(out, ("experiment.json",), "generative study")
    parts.refuse_other_experiment(out, claimed(out) or {}, {"experiment": "generative-seeds"})
    check_fits(model, budget.trainable_layers)
    claim(out, budget, device, model, chosen, dtype, precision)
    print(
        f"[generative] {model} on {place['device']} (training {precision}, evaluations {place['dtype']}); "
        f"seeds {', '.join(map(str, seeds))}; "
        f"budget preset {preset}: {budget.record()}",
        flush=True,
    )
    build_bench_once(out, budget)
    results = {}
    for seed in seeds:  # one after another: two seeds at once would share the cores
        command = seed_command(seed, named, dict(overrides or {}), arms, dtype)
        results[seed] = run_seed(out, seed, budget, chosen, place, model, configs, precision, command)
    done = sorted(
        int(p.name.split("-", 1)[1]) for p in out.glob("seed-*") if (p / "generative.json").exists()
    )
    if len(done) >= 2:
        return aggregate_study(out)
    return results[seeds[-1]] if seeds else {}


def aggregate_study(out: Path, bench: Path | None = None) -> dict[str, Any]:
    """Read the study folder's finished seeds; write ``aggregate.json``, ``aggregate.md`` and
    ``forest.png`` there; return the aggregate. ``bench``: the folder of step benchmarks to compare
    each stage's rate with (default: the repository's ``docs/results/bench``, when there)."""
    agg = aggregate(load_seeds(out), bench_rates(bench or PACKAGE.parent / "docs" / "results" / "bench"))
    write_json(out / "aggregate.json", agg)
    text = study_markdown(agg)
    (out / "aggregate.md").write_text("# The generative study: seed-level results\n\n" + text)
    forest_plot(agg, out / "forest.png")
    print("\n" + text)
    print(
        f"[done] aggregate of seeds {', '.join(map(str, agg['seeds']))}: {out / 'aggregate.json'}, "
        f"{out / 'forest.png'}"
    )
    return agg
