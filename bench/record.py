"""A benchmark's figures as a results file: ``--json PATH`` on every bench script that the docs cite.

The file holds the command that wrote it, the machine (cores, platform, torch threads when torch is
loaded) and the figures the script printed, so a figure in the docs names its file and a test checks
that the two agree (``tests/test_docs.py``). :func:`run_main` runs a script as the CLI runs a command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path


def add_json_argument(parser) -> None:
    parser.add_argument(
        "--json", metavar="PATH", type=results_path, help="also write the figures to PATH (a results file)"
    )


def results_path(text: str) -> str:
    """``--json PATH`` checked before the benchmark runs (its figures are written only at the end): not a
    folder, and its folder can be made."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text} is a folder; give a file name, e.g. {path / 'results.json'}"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise argparse.ArgumentTypeError(
            f"{text}: its folder cannot be made ({exc.strerror or exc})"
        ) from None
    return text


def at_least(minimum: float, kind: type = int):
    """An argparse type: a number (``kind``) of at least ``minimum``, else the option's usage error (exit 2)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a {'whole ' if kind is int else ''}number"
            ) from None
        if not value >= minimum:  # NaN too
            raise argparse.ArgumentTypeError(f"{text} is below {minimum:g}: at least {minimum:g}")
        return value

    return parse


def write_record(path: str | None, figures: dict) -> None:
    if not path:
        return
    machine = {"cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    if "torch" in sys.modules:
        machine["torch_threads"] = sys.modules["torch"].get_num_threads()
        machine["cpu_capability"] = sys.modules["torch"].backends.cpu.get_cpu_capability()
    script = Path(sys.argv[0])
    command = " ".join(["python", f"bench/{script.name}", *sys.argv[1:]])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(
        json.dumps({"command": command, "machine": machine, "figures": figures}, indent=2) + "\n"
    )
    print(f"wrote {path}")


def run_main(main):
    """A bench script's ``main()``, as the CLI runs a command: a refusal (a model that is not there, an option
    value the library refuses, a folder of other settings) is one ``error:`` line and exit 2, Ctrl-C exit 130,
    neither with a traceback. Returns what ``main`` returns."""
    from biasaware.errors import BiasAwareError

    try:
        return main()
    except BiasAwareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
