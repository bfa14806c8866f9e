"""The biasaware command: validate's exit codes and messages, help, version."""

import json
import subprocess
import sys

import pytest

from biasaware import __version__
from biasaware.cli import main


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_validate_clean_file(tmp_path, pair_row, capsys):
    path = write(tmp_path / "ok.jsonl", [pair_row, {**pair_row, "id": "p2"}])
    assert main(["validate", str(path)]) == 0
    assert "2 valid pair record(s), ok" in capsys.readouterr().err


def test_validate_reports_every_problem(tmp_path, pair_row, capsys):
    bad = {k: v for k, v in pair_row.items() if k != "chosen"}
    path = write(tmp_path / "bad.jsonl", [pair_row, bad, {**pair_row, "rejected": pair_row["chosen"]}])
    assert main(["validate", str(path), "--kind", "pair"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{path}:2: field 'chosen' is missing",
        f"{path}:3: field 'rejected' is identical to 'chosen'",
    ]


def test_validate_wrong_kind_and_empty(tmp_path, probe_row, capsys):
    path = write(tmp_path / "probe.jsonl", [probe_row])
    assert main(["validate", str(path)]) == 0
    assert main(["validate", str(path), "--kind", "train"]) == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["validate", str(empty)]) == 2
    assert main(["validate", str(empty), "--allow-empty"]) == 0


def test_user_error_exits_2_without_traceback(tmp_path, pair_row):
    bad = {k: v for k, v in pair_row.items() if k != "chosen"}
    path = write(tmp_path / "bad.jsonl", [bad])
    run = subprocess.run(
        [sys.executable, "-m", "biasaware.cli", "validate", str(path)], capture_output=True, text=True
    )
    assert run.returncode == 2
    assert f"{path}:1: field 'chosen' is missing" in run.stdout
    assert "Traceback" not in run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "biasaware.cli", "validate", str(tmp_path / "missing.jsonl")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and run.stderr.startswith("error: ") and "Traceback" not in run.stderr


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and __version__ in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    for command in ("validate", "build", "models", "quickstart"):
        assert command in help_text
    assert main([]) == 2


def test_models_list(capsys):
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m-instruct" in out and "minilm-l6" in out


@pytest.mark.slow
def test_quickstart_runs(tmp_path, capsys):
    assert main(["quickstart", "--out", str(tmp_path)]) == 0
    assert "[done]" in capsys.readouterr().out
    assert main(["validate", str(tmp_path / "examples" / "probe.jsonl")]) == 0


def test_build_traces_and_llm_errors(tmp_path, capsys):
    out = tmp_path / "traces"
    assert main(["build", "traces", "--out", str(out), "--biases", "position,race", "--n", "6"]) == 0
    printed = capsys.readouterr().out
    assert "position" in printed and "traces    6" in printed
    assert main(["validate", str(out / "traces.jsonl")]) == 0
    assert main(["build", "bench", "--out", str(tmp_path / "b"), "--rewriter", "llm"]) == 2
    assert "needs a model name: set llm.model (or --llm-model)" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text("rewriter: llm\nllm:\n  model: m\n  temprature: 0.5\n")
    assert main(["build", "bench", "--out", str(tmp_path / "b"), "--config", str(config)]) == 2
    assert "unknown setting(s) temprature" in capsys.readouterr().err


def test_build_with_llm_flags(tmp_path, capsys):
    from biasaware.fake_server import FakeChatServer

    with FakeChatServer() as server:
        args = ["build", "bench", "--out", str(tmp_path / "o"), "--biases", "beauty", "--n", "4"]
        args += [
            "--rewriter",
            "llm",
            "--llm-model",
            "m",
            "--llm-base-url",
            server.base_url,
            "--concurrency",
            "2",
        ]
        config = tmp_path / "c.yaml"
        config.write_text(f"llm:\n  cache_dir: {tmp_path / 'cache'}\n  progress: false\n")
        assert main([*args, "--config", str(config)]) == 0
    assert "llm rewriter (m): 8 calls, 0 cache hits, 0 retries, 0 failures" in capsys.readouterr().out


@pytest.mark.parametrize("flag", ["--limit", "--batch-size", "--max-batch-tokens", "--max-length"])
def test_counts_below_one_are_refused(flag, tmp_path, capsys):
    """`--limit 0` used to mean "all"; zero or negative counts are usage errors (exit 2)."""
    with pytest.raises(SystemExit) as stop:
        main(
            ["eval", "bias", "--judge", "x", "--data", str(tmp_path), "--out", str(tmp_path / "o"), flag, "0"]
        )
    assert stop.value.code == 2 and "must be at least 1 (got 0)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
