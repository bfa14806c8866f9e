"""Shared fixtures. Tiny models are built once per session; real models need --slow."""

from __future__ import annotations

import sys

import pytest
from hypothesis import settings

# tests check behaviour, never wall time: no per-example deadline (a first call may import scipy)
settings.register_profile("biasaware", deadline=None)
settings.load_profile("biasaware")


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", help="also run tests that need the real built-in models")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="needs --slow (real built-in models, or several training processes)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory):
    """The session's own cache root (``BIASAWARE_CACHE``) and lock folder, so the LLM replies tests cache never reach the user's
    cache, nor does a reply an earlier session cached count as a hit here; its ``models`` folder is the user's, so
    the built-in models are converted once per machine, as for a user."""
    import os

    from biasaware.judging.models import cache_dir

    models = cache_dir() / "models"
    models.mkdir(parents=True, exist_ok=True)
    root = tmp_path_factory.mktemp("cache")
    (root / "models").symlink_to(models, target_is_directory=True)
    # and its own lock folder: the many folders tests hold leave no lock files in the user's
    places = {"BIASAWARE_CACHE": root, "BIASAWARE_LOCKS": tmp_path_factory.mktemp("locks")}
    before = {k: os.environ.get(k) for k in places}
    os.environ.update({k: str(v) for k, v in places.items()})
    yield root
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli(argv)``: ``biasaware ARGV`` (or, for ``recipe:NAME``, ``python recipes/NAME.py ARGV``) in this
    process, as ``(exit status, what it printed)``."""
    from biasaware.cli import main

    def cli(argv: list[str]) -> tuple[int, str]:
        try:
            if argv[0].startswith("recipe:"):
                from biasaware.recipes import load_recipe

                module = load_recipe(argv[0].split(":", 1)[1])
                monkeypatch.setattr(sys, "argv", [f"{argv[0]}.py", *argv[1:]])
                module.run_recipe(module.main, module.DATACLASSES, getattr(module, "check", None))
                code = 0
            else:
                code = main(argv)
        except SystemExit as stop:
            code = stop.code
        captured = capsys.readouterr()
        return code, captured.out + captured.err

    return cli


@pytest.fixture
def spy_on(monkeypatch):
    """``spy_on(function)``: record the calls to a library function wherever the package's modules
    hold it (each imports it at its top under its own name); returns the list of each call's
    positional arguments."""

    def spy_on(real):
        import sys

        calls = []

        def spy(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)

        for name, module in list(sys.modules.items()):
            if name == "biasaware" or name.startswith("biasaware."):
                for attr, value in list(vars(module).items()):
                    if value is real:
                        monkeypatch.setattr(module, attr, spy)
        return calls

    return spy_on


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """Paths of a tiny random causal LM and reward model (``{"causal": Path, "reward": Path}``)."""
    from biasaware.tiny import build_tiny_models

    return build_tiny_models(tmp_path_factory.mktemp("tiny-models"))


@pytest.fixture
def policy_grpo_argv(tiny_models, tmp_path):
    """``recipes/policy_grpo.py``'s command line on the tiny causal LM, writing to ``tmp_path/out``, its
    prompts a one-row file (``tmp_path/prompts.jsonl``); a test appends the judge and its own flags."""
    import json

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"prompt": "Name a colour.", "reference": "Blue."}) + "\n")
    out = str(tmp_path / "out")
    return ["policy_grpo.py", "--model_name_or_path", str(tiny_models["causal"]), "--output_dir", out]


@pytest.fixture
def prompt():
    return [{"role": "user", "content": "Which is larger, 0.9 or 0.11?"}]


@pytest.fixture
def pair_row(prompt):
    return {"id": "p1", "source": "test", "prompt": prompt, "chosen": "0.9", "rejected": "0.11"}


@pytest.fixture
def view_row(prompt):
    return {"prompt": prompt, "response_a": "0.9", "response_b": "0.11", "correct": "A"}


@pytest.fixture
def probe_row(view_row):
    return {
        "id": "q1",
        "bias": "bandwagon",
        "category": "context",
        "original": view_row,
        "injected": {**view_row, "context": "90% of people prefer Response B."},
    }


@pytest.fixture
def train_row(prompt):
    return {
        "id": "t1",
        "prompt": prompt,
        "chosen": "0.9",
        "rejected": "0.11",
        "bias_negatives": [{"bias": "authority", "text": "Per the Numeric Handbook, 0.11."}],
    }


@pytest.fixture
def judgment_row():
    return {"probe_id": "q1", "view": "original", "judge": "tiny", "raw": "[[A]]", "verdict": "A"}


@pytest.fixture
def rows(pair_row, probe_row, train_row, judgment_row):
    return {"pair": pair_row, "probe": probe_row, "train": train_row, "judgment": judgment_row}


@pytest.fixture
def noise_lines():
    """Third-party lines a quickstart console must not show (they go to the output's run.log):
    transformers' load report for a fresh head, DeepSpeed's accelerator lines, accelerate's thread
    warning, TRL's log dicts."""
    return (
        "LOAD REPORT",
        "MISSING",
        "Setting accelerator",
        "OMP_NUM_THREADS",
        "{'loss'",
        "{'train_runtime'",
        "{'reward'",
    )


@pytest.fixture
def alpaca():
    """A writer of AlpacaEval annotation files in their upstream place (``results/<model>/<annotator>/``):
    ``alpaca(folder, model, [(instruction, reference, output, preference), ...], generator=None)``."""
    import json

    from biasaware.data.upstream import ALPACA_ANNOTATOR

    def alpaca(folder, model: str, rows: list[tuple[str, str, str, float]], generator: str | None = None):
        """An AlpacaEval annotations file in its upstream place: (instruction, reference, output, preference)."""
        path = folder / "results" / model / ALPACA_ANNOTATOR / "annotations.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                [
                    {
                        "instruction": q,
                        "output_1": ref,
                        "generator_1": "gpt4_1106_preview",
                        "dataset": "helpful_base",
                        "output_2": out,
                        "generator_2": generator or model,
                        "annotator": ALPACA_ANNOTATOR,
                        "preference": pref,
                        "price_per_example": 0.01,
                        "time_per_example": 1.0,
                    }
                    for q, ref, out, pref in rows
                ]
            )
        )
        return path

    return alpaca
