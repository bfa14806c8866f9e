"""One stage runner for every experiment (:func:`biasaware.experiments.parts.run_stage`): a stage
run in this process gives the same checkpoint, to the byte, as the same stage launched in its own
process; its output reaches the log and its ``[train]`` lines the console either way."""

from __future__ import annotations

import json

import pytest

from biasaware.data.builders import BuildConfig, build_train
from biasaware.errors import BiasAwareError
from biasaware.experiments.parts import run_stage
from biasaware.recipes import CONFIGS


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("rows")
    build_train(BuildConfig(corpus_size=200, max_rows=16, n_negatives=2), out)
    return out / "train.jsonl"


def stage_flags(recipe: str, model, rows, out) -> dict:
    common = {
        "model_name_or_path": model,
        "train_file": rows,
        "output_dir": out,
        "seed": 3,
        "logging_steps": 1,
    }
    if recipe == "reward":
        return {
            "config": CONFIGS / "minilm-l6" / "reward_infonce.yaml",
            "max_steps": 2,
            "per_device_train_batch_size": 4,
            **common,
        }
    return {
        "config": CONFIGS / "smollm2-135m-instruct" / "grpo_verdict.yaml",
        "max_steps": 2,
        "per_device_train_batch_size": 4,
        "num_generations": 2,
        "trainable_layers": 1,
        **common,
    }


def weights(folder) -> dict[str, bytes]:
    found = {f.name: f.read_bytes() for f in sorted(folder.glob("*.safetensors"))}
    assert found, f"no weights in {folder}"
    return found


def losses(folder) -> list[float]:
    card = json.loads((folder / "biasaware_card.json").read_text())
    return [e["loss"] for e in card["log_history"] if "loss" in e]


@pytest.mark.parametrize(
    "recipe",
    [pytest.param("reward"), pytest.param("grpo", marks=pytest.mark.slow)],
)
def test_a_stage_in_this_process_equals_the_stage_launched(recipe, tiny_models, rows, tmp_path, capsys):
    model = tiny_models["reward" if recipe == "reward" else "causal"]
    log = tmp_path / "run.log"
    folders = {how: tmp_path / how for how in ("python", "inline")}
    for how, out in folders.items():
        run_stage(
            recipe, stage_flags(recipe, model, rows, out), f"{recipe} ({how})", log, how=how, load_check=True
        )
    assert weights(folders["inline"]) == weights(folders["python"])
    assert losses(folders["inline"]) == losses(folders["python"]) and len(losses(folders["python"])) == 2
    shown, text = capsys.readouterr().out, log.read_text()
    for how in folders:
        assert f"[train] {recipe} ({how})" not in text  # the label is the console's, not the recipe's
    assert shown.count("[train] load-back check passed") == 2 and "step 2/2" in shown, shown
    assert "(in this process) python -m biasaware.recipes." in text and "{'loss'" in text


def test_a_stage_the_recipe_refuses_is_a_clear_error_in_this_process(tiny_models, rows, tmp_path):
    flags = {**stage_flags("reward", tiny_models["reward"], rows, tmp_path / "out"), "no_such_setting": 1}
    with pytest.raises(BiasAwareError, match="no_such_setting"):
        run_stage("reward", flags, "reward", tmp_path / "run.log")
    with pytest.raises(BiasAwareError, match="a stage runs inline, python, accelerate"):
        run_stage("reward", flags, "reward", tmp_path / "run.log", how="torchrun")


def test_a_stage_in_this_process_skips_the_load_back_check_unless_asked(tiny_models, rows, tmp_path, capsys):
    """In this process the saved folder is one model's save (checked against a launched stage above), so
    the check is skipped by default; the card says so, and the folder counts as finished."""
    from biasaware.training.run_folder import trained

    out = tmp_path / "out"
    run_stage(
        "reward", stage_flags("reward", tiny_models["reward"], rows, out), "reward", tmp_path / "run.log"
    )
    card = json.loads((out / "biasaware_card.json").read_text())
    assert card["load_check"] == {"skipped": True} and trained(out)
    assert "load-back check skipped" in capsys.readouterr().out


def test_a_stage_that_fails_in_this_process_is_named_even_when_the_device_cannot_release(
    tiny_models, rows, tmp_path, monkeypatch
):
    """A recipe that raises mid-training in this process (on a GPU: a CUDA assert, after which the device
    refuses every call, emptying its cache too) is told as a launched stage's failure is: named, with its
    traceback in the log, not hidden behind the device's second error."""
    import biasaware.experiments.parts as parts
    from biasaware.recipes import reward

    def fails(*args):
        raise RuntimeError("probability tensor contains either inf, nan or element < 0")

    def device_gone():
        raise RuntimeError("CUDA error: device-side assert triggered")

    monkeypatch.setattr(reward, "main", fails)
    monkeypatch.setattr(parts, "release_memory", device_gone)
    log = tmp_path / "run.log"
    with pytest.raises(BiasAwareError, match="reward failed \\(RuntimeError: probability tensor contains"):
        run_stage(
            "reward", stage_flags("reward", tiny_models["reward"], rows, tmp_path / "out"), "reward", log
        )
    assert "Traceback" in log.read_text() and "probability tensor" in log.read_text()


def test_gradient_checkpointing_off_trains_the_same_weights(tiny_models, rows, tmp_path):
    """The small-model configs turn TRL's gradient checkpointing off (faster: ``bench/training_steps.py``). The
    recompute replays each layer's dropout, so a model trained either way is the same to the byte: a BERT (as
    minilm-l6) with its dropout kept on (TRL's reward trainer turns it off by default, ``disable_dropout``)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    bert = tmp_path / "bert"
    tok = AutoTokenizer.from_pretrained(tiny_models["reward"])
    tok.save_pretrained(bert)
    torch.manual_seed(0)
    shape = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    config = BertConfig(
        vocab_size=len(tok), num_labels=1, pad_token_id=tok.pad_token_id, initializer_range=0.2, **shape
    )
    assert config.hidden_dropout_prob > 0 and config.attention_probs_dropout_prob > 0
    BertForSequenceClassification(config).save_pretrained(bert)
    runs = {(True, True): None, (False, True): None, (False, False): None}  # (checkpointing, dropout)
    for checkpointing, dropout in runs:
        out = tmp_path / f"checkpointing-{checkpointing}-dropout-{dropout}"
        flags = {"gradient_checkpointing": checkpointing, "disable_dropout": not dropout}
        run_stage(
            "reward",
            {**stage_flags("reward", bert, rows, out), **flags},
            out.name,
            tmp_path / "log",
            how="inline",
        )
        args = json.loads((out / "biasaware_card.json").read_text())["training_args"]
        assert (args["gradient_checkpointing"], args["disable_dropout"]) == (checkpointing, not dropout)
        runs[(checkpointing, dropout)] = (weights(out), losses(out))
    assert runs[(True, True)] == runs[(False, True)]  # the same to the byte, the same losses
    assert (
        runs[(False, True)][0] != runs[(False, False)][0] != weights(bert)
    )  # dropout was on; training moved
