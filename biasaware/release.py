"""``biasaware release``: a debiased judge with its evidence, ready for the Hugging Face Hub.

1. The report (an ``eval bias`` folder) must come from this checkpoint: its ``summary.json``
   records the evaluated model's identity (path and a SHA-256 of its weights,
   :func:`biasaware.judging.models.model_identity`); another hash is refused, another path with the
   same hash is accepted and noted.
2. The checkpoint loads through :func:`biasaware.judging.judges.load_judge` with the report's
   judge settings and judges the first ``probes`` probes of the report again: every verdict must
   be the report's, and a reward model's scores must agree within ``1e-3 + 2e-2 * |score|`` (the
   report may have run on a GPU in half precision).
3. The release folder gets the model files, ``README.md`` (a model card with Hugging Face metadata:
   base model, license, datasets, tags; the two-sided bias report with intervals and the
   degenerate-judge check; general-benchmark agreement when given; the training data's manifest and
   the recipe configuration; the commands that reproduce it), ``bias_report/`` (the summary, the
   per-instance judgments and the plots) and ``reproduce/`` (the build, bench and recipe configs).
4. Only with ``push_to`` is the folder uploaded (``huggingface_hub``; the token comes from
   ``HF_TOKEN`` or the hub's own login, is never printed, logged or written).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from biasaware.errors import BiasAwareError

DATASETS = {"helpsteer3": "nvidia/HelpSteer3", "gram": "NiuTrans/GRAM-fine-tuning-65k"}
SKIP = ("checkpoint-", "runs", "training_args.bin", ".work", "bias_report", "reproduce", "release.json")


def _json(path: Path, what: str) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise BiasAwareError(f"{path}: no such file ({what})") from None
    except json.JSONDecodeError as exc:
        raise BiasAwareError(f"{path}: not valid JSON ({exc})") from None


def check_report(checkpoint: Path, summary: dict[str, Any], kind: str) -> dict[str, Any]:
    """The checkpoint's identity against the one the report recorded (refuses another model)."""
    from biasaware.judging.models import model_identity

    run = summary.get("run") or {}
    recorded = run.get("model_identity") or {}
    if not recorded.get("weights_sha256"):
        raise BiasAwareError(
            "the report does not record which weights it evaluated (made by an older biasaware, or a remote "
            "judge); evaluate the checkpoint again with `biasaware eval bias`"
        )
    mine = model_identity(str(checkpoint), kind)
    if mine["weights_sha256"] != recorded["weights_sha256"]:
        raise BiasAwareError(
            f"the report was made from another model: it evaluated {recorded.get('path')} (weights sha256 "
            f"{recorded['weights_sha256'][:12]}...), {checkpoint} has weights sha256 "
            f"{(mine['weights_sha256'] or 'none')[:12]}...; evaluate this checkpoint, or release the one evaluated"
        )
    return {**mine, "report_path": recorded.get("path"), "moved": recorded.get("path") != mine["path"]}


def rejudge(
    checkpoint: Path, report: Path, summary: dict[str, Any], bench: str | None, n: int, work: Path
) -> dict:
    """Judge the first ``n`` probes of the report again with the checkpoint; refuse disagreement."""
    from biasaware.evaluation.evaluate import run_bias_eval
    from biasaware.io import read_records
    from biasaware.judging.judges import JudgeSpec, load_judge

    run = summary["run"]
    data = Path(bench or run.get("data") or "")
    if not data.exists():
        raise BiasAwareError(f"the report's benchmark {data} is not here; give its folder with --bench")
    recorded = {(j.probe_id, j.view): j for j in read_records(report / "judgments.jsonl", "judgment")}
    ids = list(dict.fromkeys(pid for pid, _ in recorded))[:n]
    probes = [p for p in read_records(data, "probe") if p.id in set(ids)]
    if len(probes) < len(ids):
        raise BiasAwareError(
            f"{data} does not hold the probes the report judged ({ids[0]}, ...); wrong --bench?"
        )
    spec = JudgeSpec.create(**{**run["spec"], "name": str(checkpoint), "device": "auto", "dtype": "auto"})
    judge = load_judge(spec)
    again = {(j.probe_id, j.view): j for j in read_records(run_bias_eval(judge, probes, work), "judgment")}
    worst, compared = 0.0, 0
    for key, j in again.items():
        old = recorded[key]
        if j.verdict != old.verdict:
            raise BiasAwareError(
                f"the checkpoint does not reproduce its report: probe {key[0]} ({key[1]} view) gets {j.verdict}, "
                f"the report says {old.verdict}"
            )
        for letter, score in (j.scores or {}).items():
            ref = (old.scores or {}).get(letter)
            if ref is None:
                continue
            diff = abs(score - ref)
            if diff > 1e-3 + 2e-2 * abs(ref):
                raise BiasAwareError(
                    f"the checkpoint does not reproduce its report: probe {key[0]} ({key[1]} view), response "
                    f"{letter} scores {score:.5g}, the report says {ref:.5g}"
                )
            worst = max(worst, diff)
        compared += 1
    return {
        "probes": len(ids),
        "views": compared,
        "max_score_diff": worst,
        "device": judge.summary().get("device"),
    }


def _training(card: dict[str, Any] | None) -> dict[str, Any]:
    """What the checkpoint's biasaware card says about its training, in the model card's terms."""
    if not card:
        return {}
    from biasaware.judging.models import BUILTIN_MODELS

    base = str(card.get("base_model", ""))
    builtin = BUILTIN_MODELS.get(base)
    manifest = (card.get("data") or {}).get("manifest") or {}
    source = str(manifest.get("source", ""))
    dataset = DATASETS.get(source) or (
        source if source.count("/") == 1 and not Path(source).exists() else None
    )
    return {
        "base": builtin.hub if builtin and builtin.hub else base,
        "license": builtin.license if builtin else None,
        "datasets": [dataset] if dataset else [],
        "manifest": manifest,
    }


def recipe_config(card: dict[str, Any]) -> dict[str, Any]:
    """The recipe settings that differ from the recipe's defaults (a config the recipe reads back)."""
    from dataclasses import MISSING, fields

    from biasaware.training.recipe import load_recipe

    args = {**(card.get("script_args") or {}), **(card.get("training_args") or {})}
    args["model_name_or_path"] = card.get("base_model")
    try:
        classes = load_recipe(card["recipe"]).DATACLASSES
    except (BiasAwareError, KeyError, AttributeError):
        return args
    out = {}
    for cls in classes:
        for f in fields(cls):
            if f.name not in args or not f.init:
                continue
            default = f.default if f.default is not MISSING else None
            if f.default_factory is not MISSING:
                default = f.default_factory()
            value = args[f.name]
            masked = f.name.endswith("_token") and value == f"<{f.name.upper()}>"  # to_dict() hides *_token
            if value != default and not masked and f.name not in ("output_dir", "logging_dir", "train_file"):
                out[f.name] = value
    return out


def model_card(
    name: str,
    summary: dict[str, Any],
    card: dict[str, Any] | None,
    identity: dict[str, Any],
    check: dict[str, Any],
    general: list[dict[str, Any]],
    license: str | None,
) -> str:
    """README.md: Hugging Face metadata (``huggingface_hub.ModelCardData``) and the evidence."""
    from huggingface_hub import ModelCard, ModelCardData

    from biasaware.evaluation.reports import markdown_report, pct

    mode = summary["run"]["mode"]
    training = _training(card)
    data = ModelCardData(
        base_model=training.get("base") or None,
        license=license or training.get("license") or "other",
        datasets=training.get("datasets") or None,
        library_name="transformers",
        pipeline_tag="text-classification" if mode == "reward" else "text-generation",
        tags=[
            "biasaware",
            "llm-as-a-judge",
            "judgment-bias",
            "reward-model" if mode == "reward" else "generative-judge",
        ],
    )
    micro = summary["overall"]["micro"]
    check_flag = summary.get("judge_check") or {}
    verdict = (
        "**Degenerate judge: the bias rates below are not interpretable** ("
        + "; ".join(check_flag.get("reasons", []))
        + ")."
        if check_flag.get("degenerate")
        else "Judge check: not degenerate (verdicts not constant, original accuracy above chance)."
    )
    what = "reward model (a scalar per response)" if mode == "reward" else f"generative judge ({mode} mode)"
    body = [
        f"# {name}",
        "",
        f"A {what} trained with [biasaware](https://github.com/biasaware/biasaware) to resist judgment bias, "
        f"released with its two-sided bias report: BSR (the judge follows a cue placed on the worse answer) and "
        f"over-correction (it turns against the same cue placed on the better answer).",
        "",
        f"Overall (pooled): Acc_ori {pct(micro.get('acc_ori'))}, BSR {pct(micro.get('bsr'))}, over-correction "
        f"{pct(micro.get('overcorrection'))}, two-sided {pct(micro.get('two_sided'))} (%). {verdict}",
        "",
        "## Bias report",
        "",
        markdown_report(summary).split("\n", 2)[2].strip(),  # without its title
        "",
        "Per-instance judgments and the plots: `bias_report/`.",
    ]
    if general:
        body += [
            "",
            "## General benchmarks",
            "",
            "| benchmark | n | agreement | 95% interval |",
            "|---|---:|---:|---|",
        ]
        for g in general:
            r = g["overall"].get("pair_acc") or g["overall"].get("accuracy")
            body.append(
                f"| {g['benchmark']} | {r['n']} | {pct(r['value'])} | {pct(r['ci'][0])}–{pct(r['ci'][1])} |"
            )
    body += ["", "## Training", ""]
    if card:
        m = training["manifest"]
        cfg = m.get("config") or {}
        body += [
            f"- base model: `{card.get('base_model')}`; recipe `{card.get('recipe')}` (biasaware {card.get('biasaware')}), "
            f"step {card.get('step')}, {card.get('world_size')} process(es)",
            f"- data: `{(card.get('data') or {}).get('file')}`"
            + (
                f": {m.get('rows')} {m.get('kind')} rows from `{m.get('source')}` ({m.get('augment', 'paper')} "
                f"augmentation, verifier {m.get('verifier')}, rewriter {m.get('rewriter')}), biases "
                f"`{cfg.get('biases')}`, cues `{cfg.get('cues')}`, build seed {cfg.get('seed')}"
                if m
                else ""
            ),
            f"- training seed {(card.get('training_args') or {}).get('seed')}; the full configuration: "
            "`biasaware_card.json`, `reproduce/recipe.yaml`",
        ]
    else:
        body.append(
            "The checkpoint has no biasaware card (`biasaware_card.json`): trained outside biasaware."
        )
    run = summary["run"]
    spec = run.get("spec") or {}
    recipe = (card or {}).get("recipe", "reward")
    body += [
        "",
        "## Reproduce",
        "",
        "```bash",
        "biasaware build train --config reproduce/build.yaml --out data/train"
        if card
        else "# training data: unknown",
        f"accelerate launch recipes/{recipe}.py --config reproduce/recipe.yaml --train_file data/train/train.jsonl "
        "--output_dir ckpt"
        if card
        else "# training: unknown",
        "biasaware build bench --config reproduce/bench.yaml --out bench",
        f"biasaware eval bias --judge ckpt --mode {run['mode']}"
        + (f" --template {spec.get('template')}" if run["mode"] == "generate" else "")
        + f" --data bench --out eval --policy {summary.get('policy')}",
        "```",
        "",
        "## Checks",
        "",
        f"- weights sha256 `{identity['weights_sha256']}`: the same as the evaluated model's"
        + (f" (evaluated at `{identity['report_path']}`)" if identity.get("moved") else ""),
        f"- re-judged {check['probes']} probes ({check['views']} views) at release: same verdicts"
        + (f", scores within {check['max_score_diff']:.2g}" if mode == "reward" else ""),
        "",
        "## Use",
        "",
        "```python",
        "from biasaware.judging.judges import JudgeSpec, load_judge",
        f'judge = load_judge(JudgeSpec(name="{name}", mode="{mode}"))',
        "```",
    ]
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(body) + "\n"))


def _copy_model(checkpoint: Path, out: Path) -> None:
    for item in checkpoint.iterdir():
        if item.name.startswith(SKIP) or item.name == "README.md":
            continue
        if item.is_dir():
            shutil.copytree(item, out / item.name)
        else:
            shutil.copy2(item, out / item.name)


def release(
    checkpoint: str | Path,
    report: str | Path,
    out: str | Path | None = None,
    *,
    general: list[str] | None = None,
    bench: str | None = None,
    probes: int = 4,
    license: str | None = None,
    push_to: str | None = None,
    private: bool = False,
) -> Path:
    """Check, write (and with ``push_to`` upload) the release folder; return its path."""
    import tempfile

    import yaml

    from biasaware.io import write_json

    checkpoint, report = Path(checkpoint), Path(report)
    if not checkpoint.is_dir():
        raise BiasAwareError(f"--checkpoint {checkpoint}: no such folder")
    summary = _json(report / "summary.json", "the report: an `eval bias` output folder")
    if "run" not in summary:
        raise BiasAwareError(f"{report}/summary.json is not an `eval bias` summary (no run record)")
    mode = summary["run"].get("mode", "generate")
    kind = "reward" if mode == "reward" else "causal"
    out = Path(out) if out else checkpoint.with_name(checkpoint.name + "-release")
    if out.exists() and any(out.iterdir()):
        raise BiasAwareError(f"--out {out} exists and is not empty; remove it or give another folder")
    if out.resolve() == checkpoint.resolve() or checkpoint.resolve() in out.resolve().parents:
        raise BiasAwareError("--out must be outside the checkpoint folder")
    general_summaries = []
    for g in general or []:
        s = _json(Path(g) / "summary.json", "an `eval general` output folder")
        if ((s.get("run") or {}).get("model_identity") or {}).get("weights_sha256") != (
            summary["run"]["model_identity"] or {}
        ).get("weights_sha256"):
            raise BiasAwareError(
                f"{g} evaluated another model than the report; give this checkpoint's general runs"
            )
        general_summaries.append({**s, "benchmark": s.get("benchmark") or Path(g).name})
    identity = check_report(checkpoint, summary, kind)
    print(
        f"[release] {checkpoint}: weights match the report ({identity['weights_sha256'][:12]}...)", flush=True
    )
    with tempfile.TemporaryDirectory() as work:
        check = rejudge(checkpoint, report, summary, bench, probes, Path(work))
    print(f"[release] re-judged {check['probes']} probes: the report's verdicts" + (
        f", scores within {check['max_score_diff']:.2g}" if mode == "reward" else ""), flush=True)  # fmt: skip
    card_path = checkpoint / "biasaware_card.json"
    card = _json(card_path, "biasaware card") if card_path.exists() else None

    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _copy_model(checkpoint, staging)
    (staging / "bias_report").mkdir()
    for f in report.iterdir():
        if f.is_file() and (f.suffix in (".json", ".md", ".png") or f.name == "judgments.jsonl"):
            shutil.copy2(f, staging / "bias_report" / f.name)
    (staging / "reproduce").mkdir()
    if card:
        manifest = _training(card)["manifest"]
        if manifest.get("config"):
            (staging / "reproduce" / "build.yaml").write_text(
                yaml.safe_dump(manifest["config"], sort_keys=False)
            )
        (staging / "reproduce" / "recipe.yaml").write_text(
            yaml.safe_dump(recipe_config(card), sort_keys=False)
        )
    bench_manifest = Path(bench or summary["run"].get("data") or "") / "manifest.json"
    if bench_manifest.is_file():
        config = _json(bench_manifest, "the benchmark's manifest").get("config")
        if config:
            (staging / "reproduce" / "bench.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    name = push_to or out.name
    (staging / "README.md").write_text(
        model_card(name, summary, card, identity, check, general_summaries, license)
    )
    write_json(staging / "release.json", {"identity": identity, "check": check, "report": str(report)})
    if out.exists():
        out.rmdir()
    staging.rename(out)
    print(f"[release] {out}: model files, README.md (model card), bias_report/, reproduce/", flush=True)
    if push_to:
        push(out, push_to, private)
    else:
        print(
            f"[release] not pushed; upload with: biasaware release ... --push-to-hub NAME (or upload {out})"
        )
    return out


def push(folder: Path, repo_id: str, private: bool) -> str:
    """Upload ``folder`` to the hub as model repo ``repo_id``; the token is huggingface_hub's own
    (``HF_TOKEN`` or a stored login) and appears in no message."""
    from huggingface_hub import HfApi

    token = os.environ.get("HF_TOKEN") or None
    api = HfApi(token=token)
    try:
        url = api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
        api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="model",
                          commit_message="biasaware release")  # fmt: skip
    except Exception as exc:  # the network boundary: HTTP, connection and validation errors alike
        message = str(exc)
        if token:
            message = message.replace(token, "***")
        raise BiasAwareError(
            f"pushing to {repo_id} failed: {message.splitlines()[0] if message else type(exc).__name__}"
        ) from None
    print(f"[release] pushed {folder} to {url}", flush=True)
    return str(url)
