"""The training recipes, one module each: :mod:`~biasaware.recipes.sft`, :mod:`~biasaware.recipes.grpo`
(generative judges), :mod:`~biasaware.recipes.reward` (reward-model judges) and
:mod:`~biasaware.recipes.policy_grpo` (a policy rewarded by a judge).

Each module holds its ``ScriptArguments``, ``DATACLASSES`` (the classes a YAML ``--config`` and the
flags fill, TRL's ``TrlParser`` order) and ``main(script_args, training_args, model_args)``, which
takes the parsed configs and trains. Run one as ``python -m biasaware.recipes.grpo --config ...``
or ``accelerate launch -m biasaware.recipes.grpo --config ...``; a checkout's ``recipes/grpo.py``
runs the same module. ``configs/`` holds each model's YAML configs and ``sweeps/`` the sweep files;
both ship with the package, so an installed biasaware trains without a checkout.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from biasaware.errors import BiasAwareError
from biasaware.folders import child_environment
from biasaware.io import PACKAGE

NAMES = ("sft", "grpo", "reward", "policy_grpo")
RECIPES = PACKAGE / "recipes"  # the recipe modules, configs/ and sweeps/
CONFIGS = RECIPES / "configs"


def recipe_module(name: str) -> str:
    """The module of recipe ``name`` (one of :data:`NAMES`; another is named in the error)."""
    if name not in NAMES:
        raise BiasAwareError(f"unknown recipe {name!r}; the recipes: {', '.join(NAMES)}")
    return f"biasaware.recipes.{name}"


def load_recipe(name: str) -> ModuleType:
    """The recipe module ``name``, imported on demand: a recipe imports TRL, seconds that a command
    which does not train never pays."""
    return importlib.import_module(recipe_module(name))


def run_script(name: str) -> None:
    """Run recipe ``name`` as its script in ``recipes/`` does: TRL and torch are imported inside the
    interrupt handling, so Ctrl-C while they load (seconds) says ``interrupted``, exit 130, as it does
    later in the run (:func:`biasaware.training.recipe.run_recipe`), not a traceback."""
    try:
        module = load_recipe(name)
        # here, not at the top: it imports TRL, which a command that does not train never pays for
        from biasaware.training.recipe import run_recipe
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    run_recipe(module.main, module.DATACLASSES, getattr(module, "check", None))


def _interrupt_without_traceback() -> None:
    """``python -m biasaware.recipes.NAME`` imports its module's TRL and torch before any handler of
    the module's own can run: Ctrl-C then (seconds) says ``interrupted``, as :func:`run_script` does,
    not a traceback. Python still exits by SIGINT (status 130 in a shell). Only for that command: a
    program that imports this package keeps its own hook."""
    argv = getattr(sys, "orig_argv", [])
    ran = argv[argv.index("-m") + 1 : argv.index("-m") + 2] if "-m" in argv else []
    if not (ran and ran[0].startswith(f"{__name__}.")):
        return
    previous = sys.excepthook

    def hook(kind, value, trace) -> None:
        if issubclass(kind, KeyboardInterrupt):
            print("interrupted", file=sys.stderr)
        else:
            previous(kind, value, trace)

    sys.excepthook = hook


_interrupt_without_traceback()


def recipe_command(name: str) -> list[str]:
    """What follows ``python`` or ``accelerate launch`` to run recipe ``name``: ``-m`` and its module
    (both launchers take ``-m``), so an installed package runs it from any folder."""
    return ["-m", recipe_module(name)]


def recipe_environment() -> dict[str, str]:
    """The environment a launched recipe runs in: this process's, with the copy of biasaware it
    imported first on ``PYTHONPATH`` and the working folder kept off the path (``PYTHONSAFEPATH``;
    ``python -m`` would otherwise put it first), so a recipe never runs another copy of biasaware
    than the command that launched it (a checkout in the working folder, say)."""
    path = [str(PACKAGE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    # and the run it writes for (one run a folder: its stages write inside the launching run's folder)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONSAFEPATH": "1", **child_environment()}
