"""The benchmarks under bench/ keep working as the library changes: each one's help, and the judge benchmarks
on the tiny models (their figures are not checked here: speed is measured by running them, not in tests)."""

import json
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


def test_the_judge_benchmarks_run_on_the_tiny_models(tiny_models, monkeypatch, capsys, tmp_path):
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
    assert (
        run_script(BENCH / "gpu_judges.py", [*on_cpu, "--json", str(tmp_path / "g.json")], monkeypatch) == 0
    )
    assert "reward" in capsys.readouterr().out
    figures = json.loads((tmp_path / "g.json").read_text())["figures"]
    assert (
        set(figures["reward"]["4"]) >= {"views_per_s", "overhead_vs_bare_pct"}
        and figures["processes"] is None
    )
    assert figures["direct_and_generate"]["direct_x_vs_generate"] > 0


@pytest.mark.parametrize(
    "script, argv, said",
    [
        ("judge_scoring.py", ["--repeat", "0"], "--repeat: 0 is below 1"),
        ("judge_scoring.py", ["--views", "x"], "--views: 'x' is not a whole number"),
        ("parsers.py", ["--repeat", "-1"], "--repeat: -1 is below 1"),
        ("training_steps.py", ["--steps", "1"], "--steps: 1 is below 2"),
        ("llm_rewrites.py", ["--latency", "-1"], "--latency: -1 is below 0"),
        ("gpu_judges.py", ["--batch-sizes", "16,0"], "--batch-sizes"),
        ("parsers.py", ["--json", "{tmp}"], "is a folder; give a file name"),
        ("llmbar_agreement.py", ["--released", "{tmp}"], "not LLMBar's result.json"),
    ],
)
def test_a_benchmark_refuses_settings_that_measure_nothing_before_it_runs(
    script, argv, said, tmp_path, monkeypatch, capsys
):
    """A count of 0 (a mean of no rounds, a division by no views) and a --json that cannot be written are usage
    errors, exit 2, before the benchmark's minutes are spent."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    (tmp_path / "result.json").write_text('"not results"')  # a result.json of another tool
    assert run_script(BENCH / script, argv, monkeypatch) == 2
    assert said in capsys.readouterr().err


def test_a_benchmark_given_a_model_that_is_not_there_says_so_in_one_line(monkeypatch, capsys, tmp_path):
    """A refusal is an `error:` line and exit 2, as the CLI's; no traceback (bench/record.py's run_main)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    missing = str(tmp_path / "no-model")
    assert run_script(BENCH / "training_steps.py", ["--rm", missing], monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no-model" in err and "Traceback" not in err
