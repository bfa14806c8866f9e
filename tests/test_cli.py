"""The biasaware command: validate's exit codes and messages, help, version."""

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from biasaware.cli import main
from biasaware.version import __version__

ROOT = Path(__file__).resolve().parents[1]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_validate_clean_file(tmp_path, pair_row, capsys):
    path = write(tmp_path / "ok.jsonl", [pair_row, {**pair_row, "id": "p2"}])
    assert main(["validate", str(path)]) == 0
    assert "2 valid pair records, ok" in capsys.readouterr().err


def test_validate_reports_every_problem(tmp_path, pair_row, capsys):
    bad = {k: v for k, v in pair_row.items() if k != "chosen"}
    path = write(tmp_path / "bad.jsonl", [pair_row, bad, {**pair_row, "rejected": pair_row["chosen"]}])
    assert main(["validate", str(path), "--kind", "pair"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{path}:2: field 'chosen' is missing",
        f"{path}:3: field 'rejected' is identical to 'chosen'",
    ]


def test_validate_reads_another_tools_layout_as_the_command_that_reads_it(tmp_path, capsys):
    """A benchmark in LLMBar's layout is what `eval general` reads, and BiGGen-style items what `eval
    scoring` reads: validate says so (it listed every row's missing record fields); a bad row is named."""
    rows = [{"input": f"q{i}", "output_1": "right", "output_2": "wrong", "label": 1} for i in range(3)]
    path = write(tmp_path / "llmbar.jsonl", rows)
    assert main(["validate", str(path)]) == 0
    assert (
        f"{path}: 3 pairs in the llmbar layout, ok for `eval general --benchmark`; not biasaware records"
        in (capsys.readouterr().err)
    )
    # rows asked for as records are checked as records, never passed as a benchmark layout
    extra = write(
        tmp_path / "extra.jsonl", [{"id": "p1", "prompt": "q", "chosen": "a", "rejected": "b", "x": 1}]
    )
    assert main(["validate", str(extra)]) == 0 and "rewardbench layout" in capsys.readouterr().err
    assert main(["validate", str(extra), "--kind", "pair"]) == 2
    assert f"{extra}:1: unknown field 'x'" in capsys.readouterr().out
    # a folder whose first file is unreadable: named, its other files' layout still read as theirs
    folder = tmp_path / "bench"
    folder.mkdir()
    write(folder / "b.jsonl", rows)
    (folder / "a.json").write_text(json.dumps(rows)[:-20])
    assert main(["validate", str(folder)]) == 2
    said = capsys.readouterr().err.strip()  # one line: the file, not its rows read as pair records
    assert said.startswith(f"error: {folder}/a.json:1: invalid JSON (") and "\n" not in said
    write(path, [*rows, {**rows[0], "label": 7}])
    assert main(["validate", str(path)]) == 2
    assert f"{path}:4" in capsys.readouterr().err
    items = write(tmp_path / "items.jsonl", [{"id": "a", "instruction": "Q", "response": "x", "gold": 4}])
    assert main(["validate", str(items), "--kind", "scoring"]) == 0
    assert f"{items}: 1 item to score, ok" in capsys.readouterr().err
    (tmp_path / "manifest.json").write_text("{}")  # a build's record, not data
    assert main(["validate", str(tmp_path / "manifest.json")]) == 2
    assert "manifest.json: a record biasaware keeps beside data, not data" in capsys.readouterr().err


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
    # --debug adds the traceback and keeps the status: 1 is preflight's failed gate, not a user error
    run = subprocess.run(
        [sys.executable, "-m", "biasaware.cli", "--debug", "validate", str(tmp_path / "missing.jsonl")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "Traceback" in run.stderr and "error: " in run.stderr


def test_ctrl_c_while_libraries_load_is_no_traceback(monkeypatch, capsys):
    """Ctrl-C in the seconds the command spends importing transformers ends it as any interruption does."""
    import biasaware.cli as cli

    def interrupted(verbose):
        raise KeyboardInterrupt

    import signal

    monkeypatch.setattr(cli, "quiet_libraries", interrupted)
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert cli.main(["models", "list"]) == 130
        assert capsys.readouterr().err == "interrupted\n"  # nothing kept to go on from
        assert cli.main(["eval", "bias", "--judge", "x", "--data", "d", "--out", "o"]) == 130
    finally:  # the command leaves a second Ctrl-C to the default action; pytest keeps its own
        signal.signal(signal.SIGINT, handler)
    assert capsys.readouterr().err == "interrupted: the same command goes on from what was finished\n"
    # SIGTERM is handled while a command runs, and given back after it
    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(cli, "quiet_libraries", lambda verbose: os.kill(os.getpid(), signal.SIGTERM))
    try:
        assert cli.main(["eval", "bias", "--judge", "x", "--data", "d", "--out", "o"]) == 143
    finally:
        signal.signal(signal.SIGINT, handler)
    assert capsys.readouterr().err == "terminated: the same command goes on from what was finished\n"
    assert signal.getsignal(signal.SIGTERM) is before


SECOND_CTRL_C = """
import sys, threading, time
import biasaware.cli as cli
from biasaware.cli import commands

def judged(args):  # a judge's worker thread with a request in flight when Ctrl-C comes
    threading.Thread(target=time.sleep, args=(60,)).start()
    raise KeyboardInterrupt

commands.COMMANDS["models"] = judged
sys.exit(cli.main(["models", "list"]))
"""


def test_a_second_ctrl_c_while_worker_threads_end_stops_at_once_without_a_traceback():
    """After Ctrl-C the interpreter waits for the judge's worker threads; a second Ctrl-C during that wait
    ends the process at once, by the signal, where it printed a traceback from the wait."""
    import signal

    run = subprocess.Popen([sys.executable, "-c", SECOND_CTRL_C], stderr=subprocess.PIPE, text=True)
    assert run.stderr.readline() == "interrupted\n"
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=20) == -signal.SIGINT
    assert "Traceback" not in run.stderr.read()


def test_ctrl_c_while_a_recipe_script_imports_trl_is_no_traceback(monkeypatch, capsys):
    """recipes/*.py import TRL and torch inside the interrupt handling (seconds in which Ctrl-C is likely):
    the run ends as an interrupted run does, exit 130, no traceback."""
    import biasaware.recipes as recipes

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(recipes, "load_recipe", interrupted)
    with pytest.raises(SystemExit) as stop:
        recipes.run_script("grpo")
    assert stop.value.code == 130 and capsys.readouterr().err == "interrupted\n"
    for name in recipes.NAMES:  # every script goes through it
        assert f'run_script("{name}")' in (ROOT / "recipes" / f"{name}.py").read_text()


def test_validate_an_empty_file_is_not_called_ok(tmp_path, capsys):
    (tmp_path / "e.jsonl").write_text("")
    assert main(["validate", str(tmp_path / "e.jsonl")]) == 2
    assert (
        capsys.readouterr().err == f"{tmp_path / 'e.jsonl'}: no records (pass --allow-empty to accept that)\n"
    )
    assert main(["validate", str(tmp_path / "e.jsonl"), "--allow-empty"]) == 0
    assert "0 records, ok" in capsys.readouterr().err


def test_a_reader_that_went_away_is_no_success(tmp_path):
    """`biasaware validate bad.jsonl | true`: the output pipe closed before the report was written exits
    141 (as a shell says of a command ended by SIGPIPE), never 0, so a pipeline under pipefail fails."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "p"}\n')
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "biasaware.cli", "validate", str(bad)],
            stdout=write,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write)
    assert done.returncode == 141 and b"Traceback" not in done.stderr


def test_ctrl_c_while_python_m_imports_a_recipe_is_no_traceback(tmp_path):
    """``python -m biasaware.recipes.NAME`` imports TRL before the recipe's own handling: Ctrl-C there
    (here a ``trl`` that raises it on import) says ``interrupted`` and exits by SIGINT, no traceback."""
    import signal

    (tmp_path / "trl").mkdir()
    (tmp_path / "trl" / "__init__.py").write_text("raise KeyboardInterrupt\n")
    given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]  # where the packages may be
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), *given])}
    run = subprocess.run(
        [sys.executable, "-m", "biasaware.recipes.sft", "--help"], env=env, capture_output=True, text=True
    )
    assert run.returncode in (130, -signal.SIGINT) and run.stderr == "interrupted\n", run.stderr
    # a program that imports the package keeps its own hook
    code = "import sys, biasaware.recipes; print(sys.excepthook is sys.__excepthook__)"
    assert (
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout
        == "True\n"
    )


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


def test_every_stage_has_its_own_help_with_a_default_for_each_option():
    import argparse
    import re

    from biasaware.cli import EPILOG, build_parser, leaf_parsers

    parser = build_parser()
    leaves = {leaf.prog.removeprefix("biasaware "): leaf for leaf in leaf_parsers(parser)}
    stages = {"build bench", "build train", "build traces", "eval bias", "eval general", "eval compare"}
    assert stages <= set(leaves)
    for name, leaf in [("biasaware", parser), *leaves.items()]:
        for action in leaf._actions:
            if isinstance(
                action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction
            ):
                continue
            text = action.help or ""
            assert text, (name, action.dest)
            if action.option_strings:
                assert "default" in text or "required" in text, (name, action.option_strings)
    options = {name: {o for a in leaf._actions for o in a.option_strings} for name, leaf in leaves.items()}
    assert "--teacher" in options["build traces"] and "--teacher" not in options["build bench"]
    assert "--negatives" in options["build train"] and "--negatives" not in options["build bench"]
    assert "--n" not in options["build train"] and "--max-rows" in options["build train"]
    assert "--judge" not in options["eval compare"] and "--policy" not in options["eval general"]
    assert "--benchmark" not in options["eval bias"] and "--data" not in options["eval general"]
    # the top-level page advertises only commands and stages that exist
    for command, stage_list in re.findall(r"biasaware (\w+) ([\w|]+)", EPILOG):
        for stage in stage_list.split("|"):
            assert f"{command} {stage}" in leaves, f"{command} {stage}"
    assert "eval bias|scoring|general|real|compare" in EPILOG and "biasaware preflight" in EPILOG
    assert "--pointwise" in options["eval bias"] and "--pointwise" not in options["eval general"]
    assert "--templates" in options["eval scoring"] and "--thresholds" in options["preflight"]


def test_models_list(capsys):
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m-instruct" in out and "minilm-l6" in out
    assert main(["models", "list", "minilm-l6"]) == 0  # the named ones only
    out = capsys.readouterr().out
    assert "minilm-l6" in out and "smollm2" not in out
    assert main(["models", "list", "minilm"]) == 2
    assert "unknown built-in model 'minilm'; did you mean 'minilm-l6'?" in capsys.readouterr().err
    assert main(["models", "list", "minilm-16"]) == 2
    assert "did you mean 'minilm-l6'?" in capsys.readouterr().err
    assert main(["models", "list", "minilm-l6", "minilm-l6"]) == 0  # a name given twice is listed once
    assert capsys.readouterr().out.count("minilm-l6") == 1
    assert main(["models"]) == 0 and "minilm-l6" in capsys.readouterr().out  # list, the default action
    assert main(["models", "list", "--dtype", "float16"]) == 2  # a listing loads nothing: not silently unread
    assert "`models list` loads nothing: --device" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["models", "lst"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.splitlines() == [
        "biasaware models: error: argument ACTION: invalid choice: 'lst' (choose from 'list', 'prepare'); did you mean 'list'?",
        "(`biasaware models --help` lists its options)",
    ]  # two lines: the whole usage block buried the error
    # every required option is named at once, the judge among them (not on the next try)
    for argv, missing in (
        (["eval", "real"], "--out, --data, --judge"),
        (["preflight"], "--judge"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and f"the following arguments are required: {missing}\n" in err, err


def test_a_mistyped_flag_names_the_option_it_likely_meant(capsys):
    for argv, meant in (
        (
            ["build", "bench", "--out", "o", "--n-per-bias", "3"],
            "--n-per-bias 3 (--n-per-bias: did you mean --n?)",
        ),
        (
            ["eval", "bias", "--out", "o", "--max-token", "5"],
            "--max-token 5 (--max-token: did you mean --max-tokens?)",
        ),
        (["eval", "general", "--out", "o", "--zzz"], "unrecognized arguments: --zzz\n"),
        (
            ["eval", "bias", "--out", "o", "-max-tokens", "5"],
            "-max-tokens 5 (-max-tokens: did you mean --max-tokens?)",
        ),
        # a typo is said beside a missing required option, not only once that option is given
        (
            ["sweep", "--confg", "s.yaml"],
            "--confg (--confg: did you mean --config?); the following arguments are required: --out",
        ),
        (
            ["eval", "compare", "--baselin", "a"],
            "--baselin (--baselin: did you mean --baseline?); the following",
        ),
        (
            ["eval", "bias", "--out", "o", "--max-token", "5", "--limt", "3"],
            "--max-token 5 --limt 3 (--max-token: did you mean --max-tokens?; --limt: did you mean --limit?)",
        ),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and meant in err and "usage:" not in err, err


@pytest.mark.slow
def test_quickstart_runs_the_two_sided_experiment(tmp_path, capsys, noise_lines):
    """The main job is the experiment of the two-sided pilot: on held-out families, the baseline
    follows the natural cue, paper-style bias negatives remove that but over-correct, and balanced
    augmentation avoids both without losing original accuracy (the directions and p-values the
    quickstart prints; nothing here is tuned to them)."""
    from biasaware.cli import quiet_libraries
    from biasaware.experiments.quickstart import KEY_SHARE, run_quickstart

    quiet_libraries(False)  # as the command does: library notices go to run.log, not the console
    run_quickstart(tmp_path, generative=False)  # reduced: no smollm2 SFT/GRPO steps (the CLI runs them)
    shown = capsys.readouterr()
    printed = shown.out
    assert "[done]" in printed and "| baseline |" in printed
    for noise in noise_lines:  # a quiet console: library output goes to run.log
        assert noise not in printed and noise not in shown.err, noise
    assert main(["validate", str(tmp_path / "examples" / "probe.jsonl")]) == 0
    result = json.loads((tmp_path / "report.json").read_text())
    runs = result["runs"]
    base, paper, bal = runs["baseline"], runs["paper"], runs["balanced"]
    assert base["bsr"] > paper["bsr"] and paper["p_vs"]["baseline"]["bsr"] < 0.05
    assert (
        paper["overcorrection"] > base["overcorrection"]
        and paper["p_vs"]["baseline"]["overcorrection"] < 0.05
    )
    assert bal["bsr"] < base["bsr"] and bal["p_vs"]["baseline"]["bsr"] < 0.05
    assert bal["overcorrection"] < paper["overcorrection"] and bal["p_vs"]["paper"]["overcorrection"] < 0.05
    assert bal["acc_ori"] >= base["acc_ori"] - 0.05
    for run in runs.values():  # every judge: the same probes, its verdicts counted, its check recorded
        assert run["n"] == base["n"] and sum(run["judge_check"]["verdicts"].values()) > 0
    assert base["judge"] == "ckpt/baseline" and base["run"] == "eval/baseline"  # no local paths
    smollm2 = result["zero_shot"]["runs"]["smollm2 zero-shot"]["judge_check"]
    # smollm2-135m-instruct answers "A" on every view in direct mode: flagged, never read as robust
    assert smollm2["top_share"] >= 0.9 and smollm2["degenerate"] and "DEGENERATE" in printed
    assert "not interpretable" in (tmp_path / "eval" / "smollm2-zero-shot" / "report.md").read_text()
    assert (tmp_path / "two_sided.png").exists()
    assert "Seconds per stage" in (tmp_path / "report.md").read_text()
    # every model on the master-key probes: false positives per key type, the short-correct mirror side
    keys = result["master_keys"]["runs"]
    assert set(keys) == {"baseline", "paper", "balanced", "balanced+keys"}
    assert all(
        set(k["per_key_type"]) == {"punctuation", "opener", "header", "restated", "truncated"}
        for k in keys.values()
    )
    assert all(
        k["n"] == 50 and k["short_n"] == 50 and k["run"].startswith("eval-masterkey/") for k in keys.values()
    )
    manifest = json.loads((tmp_path / "train-balanced-keys" / "manifest.json").read_text())
    assert manifest["key_negatives"]["share"] == KEY_SHARE and manifest["key_negatives"]["rows"] > 0
    assert "Master keys" in (tmp_path / "report.md").read_text()
    first = result["stage_seconds"]
    run_quickstart(tmp_path, generative=False)  # everything is finished: nothing is redone
    again = json.loads((tmp_path / "report.json").read_text())
    assert again["stage_seconds"]["train reward models"] == first["train reward models"]
    assert again["stage_seconds"]["evaluate"] == first["evaluate"]
    assert {"train reward models", "evaluate", "this run"} <= set(again["resumed_seconds"])
    assert "resumed run:" in (tmp_path / "report.md").read_text()


def test_stages_keep_the_first_time_of_a_finished_stage(tmp_path):
    from biasaware.experiments.parts import Stages

    stages = Stages(tmp_path / "stages.json")
    stages.record("build", 10.0, True)
    stages.record("train", 100.0, True)
    assert stages.finish(110.0) == ({"build": 10.0, "train": 100.0, "total": 110.0}, {})
    rerun = Stages(tmp_path / "stages.json")  # a second run: train was skipped, build redone
    rerun.record("build", 9.0, True)
    rerun.record("train", 0.5, False)
    seconds, resumed = rerun.finish(9.6)
    assert seconds == {"build": 9.0, "train": 100.0, "total": 109.0}
    assert resumed == {"train": 0.5, "this run": 9.6}
    text = Stages.describe(seconds, resumed)
    assert "train 100.0" in text and "resumed run: train 0.5, this run 9.6" in text
    again = Stages(tmp_path / "stages.json")  # the stage is trained again: its new time replaces the old
    again.record("train", 90.0, True)
    assert again.finish(90.0) == ({"build": 9.0, "train": 90.0, "total": 99.0}, {})
    load = json.loads((tmp_path / "stages.json").read_text())["load"]
    assert set(load) == {"build", "train"} and all(v >= 0 for v in load.values())


def test_build_traces_and_llm_errors(tmp_path, capsys, caplog):
    out = tmp_path / "traces"
    assert main(["build", "traces", "--out", str(out), "--biases", "position,race", "--n", "6"]) == 0
    printed = capsys.readouterr().out
    assert "position" in printed and "traces    6" in printed
    assert main(["validate", str(out / "traces.jsonl")]) == 0
    # a source without known answers needs a teacher model: said first, no warning about its verifier before it
    source = tmp_path / "src.jsonl"
    source.write_text(json.dumps({"prompt": "2+2?", "chosen": "4", "rejected": "5"}) + "\n")
    with caplog.at_level("WARNING"):
        assert main(["build", "traces", "--source", str(source), "--out", str(tmp_path / "t2")]) == 2
    err = capsys.readouterr().err
    assert "traces from this source need a teacher model" in err and "no verifier" not in err + caplog.text
    assert not (tmp_path / "t2").exists()
    assert main(["build", "bench", "--out", str(tmp_path / "b"), "--rewriter", "llm"]) == 2
    assert "needs a model name: set llm.model (or --llm-model)" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text("rewriter: llm\nllm:\n  model: m\n  temprature: 0.5\n")
    assert main(["build", "bench", "--out", str(tmp_path / "b"), "--config", str(config)]) == 2
    assert "unknown setting(s) temprature" in capsys.readouterr().err


def test_build_with_llm_flags(tmp_path, capsys):
    from biasaware.judging.fake_server import FakeChatServer

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
    assert (
        "llm rewriter (m): 16 calls, 0 cache hits, 0 retries, 0 failures" in capsys.readouterr().out
    )  # both sides


@pytest.mark.parametrize("flag", ["--limit", "--batch-size", "--max-batch-tokens", "--max-length"])
def test_counts_below_one_are_refused(flag, tmp_path, capsys):
    """`--limit 0` used to mean "all"; zero or negative counts are usage errors (exit 2)."""
    with pytest.raises(SystemExit) as stop:
        main(
            ["eval", "bias", "--judge", "x", "--data", str(tmp_path), "--out", str(tmp_path / "o"), flag, "0"]
        )
    assert stop.value.code == 2 and "must be at least 1 (got 0)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_gzip_files_are_read_transparently(tmp_path, pair_row, capsys):
    import gzip

    with gzip.open(tmp_path / "pairs.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(pair_row) + "\n")
    assert main(["validate", str(tmp_path / "pairs.jsonl.gz")]) == 0
    assert main(["validate", str(tmp_path)]) == 0  # and inside a folder
    assert "1 valid pair record, ok" in capsys.readouterr().err


def test_every_help_states_the_parser_s_real_default():
    """A help that says "(default X)" says the default the parser uses: the value itself (its first
    word), or for a switch, that it is off."""
    import argparse

    from biasaware.cli import build_parser, leaf_parsers

    checked = 0
    for leaf in leaf_parsers(build_parser()):
        for action in leaf._actions:
            found = re.search(r"\(default:? ([^;)]*)", action.help or "")
            if not found or action.default is argparse.SUPPRESS:
                continue
            stated, default = found.group(1).strip(), action.default
            first = stated.split()[0].rstrip(",.:") if stated else ""
            where = f"{leaf.prog} {action.option_strings or action.dest}: help says {stated!r}, parser {default!r}"
            if isinstance(default, bool):
                assert (first in ("on", "true", "yes")) == default, where
            elif isinstance(default, int | float):
                assert float(first) == float(default), where
            elif default is not None:  # None: resolved later (a config's value), which the help may name
                assert first == str(default), where
            checked += 1
    assert checked > 50


def test_deepspeeds_accelerator_notice_is_quiet_unless_verbose(caplog):
    """DeepSpeed's first-use "Setting accelerator to CPU" line stays off a quiet console; its other
    warnings, and everything with -v, still show."""
    import logging

    from biasaware.cli import quiet_libraries

    logger = logging.getLogger("DeepSpeed")
    saved = list(logger.filters)
    try:
        quiet_libraries(False)
        with caplog.at_level(logging.WARNING, logger="DeepSpeed"):
            logger.warning("Setting accelerator to CPU. If you have GPU or other accelerator, ...")
            logger.warning("a real DeepSpeed warning")
        shown = [r.getMessage() for r in caplog.records if r.name == "DeepSpeed"]
        assert shown == ["a real DeepSpeed warning"]
    finally:
        logger.filters[:] = saved


def test_a_negative_number_argparse_would_take_for_a_flag_is_joined_to_its_flag():
    from biasaware.errors import negative_values

    args = ["--reward_weights", "-1.0", "1.0", "--lr", "-1e-3", "--t", "-inf", "--n", "-5", "-v", "--a", "-b"]
    assert negative_values(args) == [
        *["--reward_weights", "-1.0", "1.0"],  # argparse reads -1.0 and -5 as values itself
        *["--lr=-1e-3", "--t=-inf", "--n", "-5", "-v", "--a", "-b"],
    ]
    # a flag of several values, and the end of options, are left to argparse
    assert negative_values(["--w", "-1e-3", "1", "--", "-1e-3"]) == ["--w", "-1e-3", "1", "--", "-1e-3"]


def test_progress_off_turns_the_libraries_bars_off_too(monkeypatch, capsys):
    """A library's own tqdm bar (a GGUF conversion's) follows --progress off through tqdm's TQDM_DISABLE."""
    assert "TQDM_DISABLE" not in os.environ
    monkeypatch.setenv("BIASAWARE_PROGRESS", "auto")
    try:
        assert main(["--progress", "off", "models", "list"]) == 0
        assert os.environ.get("TQDM_DISABLE") == "1"  # launched processes' libraries read it on import
        assert main(["--progress", "on", "models", "list"]) == 0
        assert "TQDM_DISABLE" not in os.environ
    finally:
        os.environ.pop("TQDM_DISABLE", None)  # set by the command: no later test's bars are off


def test_a_librarys_own_bars_in_this_process_follow_progress(monkeypatch):
    """tqdm reads TQDM_DISABLE on import only: a library's bars in this process (transformers' GGUF
    conversion) follow --progress in the block where biasaware runs it: off never, auto on a terminal only
    (a log file gets none), on always."""
    import types

    from tqdm.auto import tqdm

    from biasaware.progress import library_bars

    library = types.SimpleNamespace(tqdm=tqdm)
    for mode, disabled in (("off", True), ("auto", True), ("on", False)):  # the file here is no terminal
        monkeypatch.setenv("BIASAWARE_PROGRESS", mode)
        with library_bars(library):
            bar = library.tqdm(range(2), file=io.StringIO())
            assert bar.disable is disabled
            bar.close()
    assert library.tqdm is tqdm


@pytest.mark.parametrize(
    "argv, meant",
    [
        (["buidl"], "build"),
        (["build", "trace"], "traces"),
        (["build", "bench", "--direction", "mirrror"], "mirror"),
    ],
)
def test_a_mistyped_choice_is_said_with_the_closest(argv, meant, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and f"; did you mean '{meant}'?" in capsys.readouterr().err


def test_a_quickstart_rerun_without_dtype_keeps_the_folder_s_own(tmp_path, monkeypatch, capsys):
    """A folder made with --dtype bfloat16, run again with --dtype left out, goes on in bfloat16 (as the studies
    do), not refused as another dtype; another --dtype is refused."""
    import biasaware.experiments.quickstart as quickstart
    from biasaware.errors import BiasAwareError

    class Reached(Exception):
        pass

    def loaded(*args, **kwargs):  # the first step after the folder's claim
        raise Reached

    monkeypatch.setattr(quickstart, "load_model", loaded)
    (tmp_path / "quickstart.json").write_text('{"seed": 0, "dtype": "bfloat16"}')
    with pytest.raises(Reached):
        quickstart.run_quickstart(tmp_path, device="cpu")
    assert "[models] judges run on cpu in bfloat16" in capsys.readouterr().out
    with pytest.raises(BiasAwareError, match=r"dtype: 'bfloat16' there, 'float32' \(the default\) now"):
        quickstart.run_quickstart(tmp_path, device="cpu", dtype="float32")


@pytest.mark.parametrize(
    "script, command",
    [
        ("eval/bias_sensitivity.py", "eval bias"),
        ("eval/general_benchmarks.py", "eval general"),
        ("eval/preflight.py", "preflight"),
        ("eval/scoring_bias.py", "eval scoring"),
        ("data_builders/build_bench.py", "build bench"),
        ("data_builders/build_sft_traces.py", "build traces"),
        ("data_builders/build_train.py", "build train"),
    ],
)
def test_a_script_of_one_command_speaks_under_its_own_name(script, command):
    """`python eval/bias_sensitivity.py --bogus`: the script's name in its usage and errors, not the CLI's."""
    proc = subprocess.run(
        [sys.executable, script, "--bogus"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"python {script}: error: unrecognized arguments: --bogus" in proc.stderr
    assert f"(`python {script} --help` lists its options)" in proc.stderr
    assert f"biasaware {command}" not in proc.stderr
    usage = subprocess.run(
        [sys.executable, script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert usage.returncode == 0 and usage.stdout.startswith(f"usage: python {script} "), usage.stdout[:200]
