"""An installed package, not a checkout: the wheel that ``pip install .`` builds carries the recipes
and their configs, and runs from a folder that holds no checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_an_installed_package_runs_its_recipes_outside_a_checkout(tmp_path):
    """``pip install`` of the wheel into a fresh virtual environment (its dependencies are this
    environment's, named by a path file, so nothing is downloaded), then, from an empty folder: the
    generative quickstart's help, the grpo recipe as a module, and a packaged config found by the
    name the docs give it."""
    source = tmp_path / "source"  # built from a copy: the build leaves nothing in the checkout
    listed = ["git", "ls-files", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(listed, cwd=ROOT, capture_output=True, text=True, check=True)
    for name in tracked.stdout.splitlines():
        if (ROOT / name).is_file() and not (ROOT / name).is_symlink():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    build = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        str(wheels),
    ]
    subprocess.run([*build, str(source)], check=True, capture_output=True)
    (wheel,) = wheels.glob("biasaware-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, str(wheel)]
    subprocess.run(install, check=True, capture_output=True)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*argv: str) -> str:
        done = subprocess.run(argv, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    where = run(str(python), "-c", "import biasaware; print(biasaware.__file__)")
    assert where.startswith(site), where  # the installed copy, not the checkout
    assert "--generative" in run(str(python), "-m", "biasaware.cli", "quickstart", "--generative", "--help")
    check = (
        "import biasaware.recipes.grpo as g; from biasaware.io import find_file; "
        "print(g.main.__module__, find_file('recipes/configs/smollm2-135m-instruct/grpo.yaml', 'config'), "
        "find_file('recipes/sweeps/minilm-l6-negatives.yaml', 'sweep'), "
        "find_file('accelerate_configs/cpu_ddp.yaml', 'accelerate config'))"
    )
    module, *configs = run(str(python), "-c", check).split()
    assert module == "biasaware.recipes.grpo" and all(c.startswith(site) for c in configs), configs
    assert "--select_prompts" in run(str(python), "-m", "biasaware.recipes.grpo", "--help")


def test_a_launched_recipe_runs_the_launching_copy_not_one_in_the_working_folder(tmp_path):
    """A folder holding another ``biasaware`` (a second checkout, say): a recipe started from there
    by module name still imports the copy that launched it."""
    from biasaware.recipes import recipe_command, recipe_environment

    decoy = tmp_path / "biasaware"
    (decoy / "recipes").mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise SystemExit('the copy in the working folder was imported')\n")
    (decoy / "recipes" / "__init__.py").write_text("")
    argv = [sys.executable, *recipe_command("reward"), "--help"]
    done = subprocess.run(argv, cwd=tmp_path, env=recipe_environment(), capture_output=True, text=True)
    assert done.returncode == 0 and "--num_bias_negatives" in done.stdout, done.stderr[-2000:]
    plain = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert "the copy in the working folder was imported" in plain.stderr  # what the environment prevents


def test_a_config_named_as_in_the_docs_is_found_from_any_folder(tmp_path, monkeypatch):
    """``--config recipes/configs/...`` from a folder that holds no checkout reads the packaged config."""
    from biasaware.recipes import CONFIGS, load_recipe
    from biasaware.training.recipe import parse_recipe

    monkeypatch.chdir(tmp_path)
    config = "recipes/configs/minilm-l6/reward_infonce.yaml"
    script, training, model = parse_recipe(
        load_recipe("reward").DATACLASSES, ["--config", config, "--output_dir", str(tmp_path / "out")]
    )
    assert model.model_name_or_path == "minilm-l6" and training.loss == "infonce"
    assert (CONFIGS / "minilm-l6" / "reward_infonce.yaml").is_file()


def test_python_dash_m_runs_the_command_line(tmp_path):
    """``python -m biasaware`` is the ``biasaware`` command: its messages name it so, a usage error exits 2."""
    run = subprocess.run(
        [sys.executable, "-m", "biasaware", "buidl"], capture_output=True, text=True, cwd=tmp_path
    )
    assert run.returncode == 2 and run.stderr.startswith("biasaware: error") and "Traceback" not in run.stderr
    assert subprocess.run([sys.executable, "-m", "biasaware", "--version"], cwd=tmp_path).returncode == 0
