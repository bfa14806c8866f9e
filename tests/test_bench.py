"""The benchmarks under bench/ keep working as the library changes: each one's help, and the judge benchmarks
on the tiny models (their figures are not checked here: speed is measured by running them, not in tests)."""

import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name != "record.py")


def run_script(path: Path, argv: list[str], monkeypatch) -> int:
    """``python bench/NAME.py ARGV`` in this process (bench/ on the path, as when run from the checkout); its
    exit status."""
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(sys, "argv", [str(path), *argv])
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as stop:
        return stop.code or 0
    return 0


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_each_benchmark_imports_and_explains_its_options(path, monkeypatch, capsys):
    assert run_script(path, ["--help"], monkeypatch) == 0
    assert "usage:" in capsys.readouterr().out


def test_the_judge_benchmarks_run_on_the_tiny_models(tiny_models, monkeypatch, capsys):
    rm, lm = str(tiny_models["reward"]), str(tiny_models["causal"])
    scoring = ["--rm", rm, "--judge", lm, "--views", "8", "--gen-views", "2", "--gen-tokens", "4"]
    assert run_script(BENCH / "judge_scoring.py", [*scoring, "--repeat", "1"], monkeypatch) == 0
    assert "x" in capsys.readouterr().out  # its ratios
    on_cpu = [
        "--device",
        "cpu",
        "--rm",
        rm,
        "--lm",
        lm,
        "--views",
        "8",
        "--batch-sizes",
        "4",
        "--loop-views",
        "2",
    ]
    on_cpu += [
        "--gen-views",
        "2",
        "--gen-tokens",
        "4",
        "--gen-batch-size",
        "2",
        "--repeat",
        "1",
        "--procs",
        "1",
    ]
    assert run_script(BENCH / "gpu_judges.py", on_cpu, monkeypatch) == 0
    assert "reward" in capsys.readouterr().out


def test_a_benchmark_given_a_model_that_is_not_there_says_so_in_one_line(monkeypatch, capsys, tmp_path):
    """A refusal is an `error:` line and exit 2, as the CLI's; no traceback (bench/record.py's run_main)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    missing = str(tmp_path / "no-model")
    assert run_script(BENCH / "training_steps.py", ["--rm", missing], monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no-model" in err and "Traceback" not in err
