"""The structure of the library stays as docs/overview.md describes it: modules import in layers, with
no circle and no module taking another's underscore names; the commands stay thin; the code is
formatted by ruff at the project's line limit."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "biasaware"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, list[tuple[str, list[str]]]]:
    """Per module of the package, every ``from biasaware... import names`` in it (at any depth)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rows = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("biasaware"):
                rows.append((node.module, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                rows += [(a.name, []) for a in node.names if a.name.startswith("biasaware")]
        found[module_name(path)] = rows
    return found


def test_no_module_imports_another_modules_private_names():
    private = [
        f"{mod} takes {name} from {source}"
        for mod, rows in imports().items()
        for source, names in rows
        for name in names
        if name.startswith("_") and not name.startswith("__") and source != mod
    ]
    assert not private, private


def test_modules_import_without_a_circle():
    found = imports()
    modules = set(found)

    def target(source: str, name: str) -> str:
        return f"{source}.{name}" if f"{source}.{name}" in modules else source

    graph = {
        mod: {t for source, names in rows for t in ([target(source, n) for n in names] or [source])}
        & modules - {mod, "biasaware"}
        for mod, rows in found.items()
    }
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(mod: str, path: list[str]) -> list[str] | None:
        state[mod] = 1
        for nxt in sorted(graph.get(mod, ())):
            if state.get(nxt) == 1:  # the circle: from nxt's place on the path back to it
                trail = [*path, mod]
                return [*trail[trail.index(nxt) :], nxt]
            if nxt not in state and (loop := visit(nxt, [*path, mod])):
                return loop
        state[mod] = 2
        return None

    for mod in sorted(graph):
        if mod not in state:
            loop = visit(mod, [])
            assert loop is None, " -> ".join(loop)


# docs/overview.md's layers, top down, and the modules (or packages) each holds
LAYERS = {
    "commands": ("biasaware.cli", "biasaware.__main__"),
    "experiments": ("biasaware.experiments", "biasaware.release"),
    "recipes": ("biasaware.recipes",),
    "Python API": ("biasaware.api", "biasaware"),  # the package's __init__ exports the API
    "options": ("biasaware.options",),
    "evaluation": ("biasaware.evaluation",),
    "training, data": ("biasaware.training", "biasaware.data"),
    "judging": ("biasaware.judging",),
    "records, I/O": ("biasaware.io", "biasaware.records", "biasaware.folders"),
    "ground": tuple(
        f"biasaware.{m}"
        for m in ("taxonomy", "devices", "hub", "errors", "progress", "version", "formatting", "tiny")
    ),
}


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the longest name that holds ``module``."""
    held = [
        (len(name), i)
        for i, names in enumerate(LAYERS.values())
        for name in names
        if module == name or module.startswith(name + ".")
    ]
    assert held, f"{module} is in no layer of docs/overview.md"
    return max(held)[1]


def test_modules_import_only_from_their_layer_or_below_as_the_overview_draws_them():
    text = (ROOT / "docs" / "overview.md").read_text()
    block = next(b for b in text.split("```")[1::2] if b.lstrip("\n").startswith("commands "))
    drawn = [line.split("  ")[0] for line in block.splitlines() if line and not line.startswith(" ")]
    assert drawn == list(LAYERS), "the overview's layers, top down"
    upward = [
        f"{mod} ({list(LAYERS)[layer_of(mod)]}) imports {source} ({list(LAYERS)[layer_of(source)]})"
        for mod, rows in imports().items()
        for source, _ in rows
        if source != "biasaware" and layer_of(source) < layer_of(mod)
    ]
    assert not upward, upward


def test_each_command_is_a_few_lines_that_call_the_library():
    tree = ast.parse((PACKAGE / "cli" / "commands.py").read_text())
    long = [
        f"{n.name}: {n.end_lineno - n.lineno + 1} lines"
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name.startswith("cmd_") and n.end_lineno - n.lineno + 1 > 25
    ]
    assert not long, long


def test_no_function_of_the_cli_is_longer_than_40_lines():
    """The options are declared in biasaware/options.py; the CLI only makes parsers and calls."""
    long = [
        f"{path.name}:{n.name}: {n.end_lineno - n.lineno + 1} lines"
        for path in sorted((PACKAGE / "cli").glob("*.py"))
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.end_lineno - n.lineno + 1 > 40
    ]
    assert not long, long


def test_the_cli_adds_no_option_by_hand():
    """Every flag comes from a declaration (biasaware.options): no add_argument in the commands'
    parsers but the three shared by every command (-v, --debug, --progress) and --version."""
    text = (PACKAGE / "cli" / "arguments.py").read_text()
    flags = sorted(set(re.findall(r"add_argument\(\s*(?:\"[^\"]*\",\s*)?\"(--?[a-z-]+)\"", text)))
    assert flags == ["--debug", "--progress", "--verbose", "--version"], flags


LAZY = ("pyarrow", "tokenizers", "confusable_homoglyphs", "yaml", "scipy", "numpy", "matplotlib", "torch")
LAZY += ("transformers", "trl", "datasets", "vllm", "peft", "accelerate", "deepspeed", "huggingface_hub")
LAZY += ("openai", "httpx", "safetensors")


def test_imports_stand_at_module_top_unless_a_comment_says_why():
    """An import inside a function is of a heavy library (start-up time), or a comment says why;
    the commands and the Python API import lazily by design (their docstrings say so)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() in ("cli/commands.py", "api.py"):
            continue
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines))
        top = {id(n) for n in tree.body}
        for n in ast.walk(tree):
            if not isinstance(n, ast.Import | ast.ImportFrom) or id(n) in top:
                continue
            module = n.module if isinstance(n, ast.ImportFrom) else n.names[0].name
            said = "#" in lines[n.lineno - 1] or lines[n.lineno - 2].strip().startswith("#")
            if module.split(".")[0] not in LAZY and not said:
                found.append(f"{path.relative_to(PACKAGE)}:{n.lineno}: {lines[n.lineno - 1].strip()}")
    assert not found, found


@pytest.mark.parametrize("action", [["format", "--check"], ["check"]])
def test_the_code_is_formatted_and_linted_by_ruff(action):
    pytest.importorskip("ruff")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            *action,
            "biasaware",
            "recipes",
            "bench",
            "tests",
            "eval",
            "data_builders",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
