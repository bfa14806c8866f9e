"""What the three recipes share: resuming, and the model card every checkpoint carries.

``resume_arg(value)``: ``resume_from_checkpoint: latest`` (or ``true``) resumes from the newest
``checkpoint-*`` in ``output_dir`` (transformers' own rule), a path resumes from that checkpoint,
empty starts fresh.

:class:`ModelCardCallback` writes ``biasaware_card.md`` and ``biasaware_card.json`` into every
saved checkpoint and the final output folder: base model, training data with its build manifest
(``manifest.json`` next to the data file, when there is one), the full training configuration, and
the evaluation summary when ``eval_summary`` points to one (``biasaware eval`` output).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from biasaware import __version__


def resume_arg(value: str | bool | None) -> str | bool | None:
    if value is None or value is False or str(value).strip() == "":
        return None
    if str(value).lower() in ("latest", "true"):
        return True
    return str(value)


def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj):
        obj = asdict(obj)
    return json.loads(json.dumps(obj, default=str))


class ModelCardCallback(TrainerCallback):
    def __init__(
        self,
        *,
        recipe: str,
        base_model: str,
        data_file: str,
        script_args: Any,
        eval_summary: str | None = None,
    ):
        manifest_path = Path(data_file).with_name("manifest.json")
        self.card: dict[str, Any] = {
            "biasaware": __version__,
            "recipe": recipe,
            "base_model": base_model,
            "data": {
                "file": str(data_file),
                "manifest": json.loads(manifest_path.read_text()) if manifest_path.exists() else None,
            },
            "script_args": _jsonable(script_args),
        }
        self.eval_summary = eval_summary

    def write(self, folder: Path, args: Any, step: int) -> None:
        card = {
            **self.card,
            "step": step,
            "world_size": args.world_size,
            "training_args": _jsonable(args.to_dict()),
        }
        if self.eval_summary and Path(self.eval_summary).exists():
            card["eval_summary"] = json.loads(Path(self.eval_summary).read_text())
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "biasaware_card.json").write_text(json.dumps(card, indent=2))
        manifest = card["data"]["manifest"] or {}
        lines = [
            f"# {Path(args.output_dir).name}: {self.card['recipe']} of {self.card['base_model']}",
            "",
            f"- trained with biasaware {__version__}, recipe `{self.card['recipe']}`, step {step}",
            f"- base model: `{self.card['base_model']}`",
            f"- data: `{self.card['data']['file']}`"
            + (
                f" ({manifest.get('kind')} build from `{manifest.get('source')}`, verifier {manifest.get('verifier')})"
                if manifest
                else ""
            ),
            f"- learning rate {args.learning_rate}, per-device batch {args.per_device_train_batch_size}, "
            f"seed {args.seed}",
        ]
        if "eval_summary" in card:
            micro = card["eval_summary"].get("overall", {}).get("micro", {})
            lines.append(
                f"- evaluation: Acc_ori {micro.get('acc_ori')}, Acc_inj {micro.get('acc_inj')}, BSR {micro.get('bsr')}"
            )
        lines += ["", "The full configuration is in `biasaware_card.json`."]
        (folder / "biasaware_card.md").write_text("\n".join(lines) + "\n")

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.write(Path(args.output_dir) / f"checkpoint-{state.global_step}", args, state.global_step)

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.write(Path(args.output_dir), args, state.global_step)


@dataclass
class DataArguments:
    """The script arguments every recipe takes (TrlParser reads them from the config and flags)."""

    train_file: str = field(
        default="runs/quickstart/train/train.jsonl", metadata={"help": "training rows (JSONL)"}
    )
    max_train_rows: int | None = field(
        default=None, metadata={"help": "a seeded sample of N rows (the training seed)"}
    )
    eval_summary: str | None = field(
        default=None, metadata={"help": "an eval summary.json for the model card"}
    )


def sample_rows(rows: list, n: int | None, seed: int) -> list:
    """``n`` rows drawn with ``seed`` (kept in file order), or all of them when ``n`` is None or large.

    Built files are grouped by bias, so the first ``n`` rows would cover only the first few biases.
    """
    if n is None or n >= len(rows):
        return rows
    import random

    keep = sorted(random.Random(seed).sample(range(len(rows)), n))
    return [rows[i] for i in keep]


def load_for_training(model_args: Any, kind: str, seed: int = 0):
    """``(model, tokenizer)`` for a recipe (:func:`biasaware.models.load_model`); weights missing
    from the checkpoint (a new reward head) are drawn with ``seed``, the training seed."""
    from biasaware.models import load_model

    return load_model(model_args.model_name_or_path, kind, dtype=model_args.dtype, seed=seed)


def card_callbacks(recipe: str, model_args: Any, script_args: Any) -> list[ModelCardCallback]:
    return [
        ModelCardCallback(
            recipe=recipe,
            base_model=model_args.model_name_or_path,
            data_file=script_args.train_file,
            script_args=script_args,
            eval_summary=script_args.eval_summary,
        )
    ]


def train_and_save(trainer, training_args):
    """Train (resuming when asked), save the final model, return the trainer."""
    trainer.train(resume_from_checkpoint=resume_arg(training_args.resume_from_checkpoint))
    trainer.save_model(training_args.output_dir)
    return trainer


RECIPES = Path(__file__).resolve().parents[1] / "recipes"


def load_recipe(name: str):
    """Import ``recipes/<name>.py`` of the repository checkout (recipes are scripts, not a package)."""
    import importlib.util
    import sys

    from biasaware.errors import BiasAwareError

    path = RECIPES / f"{name}.py"
    if not path.exists():
        raise BiasAwareError(f"{path} is not here: the recipes live in the repository checkout")
    spec = importlib.util.spec_from_file_location(f"recipe_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module
