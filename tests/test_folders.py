"""One run a folder (:mod:`biasaware.folders`): a folder another run is writing, a folder inside it and a
folder holding it are refused by every command and API function that writes; the holder's own nested
work, its launched processes and the ranks of one launch are not; a folder is free again when its run
returns or is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import biasaware
from biasaware.cli import main
from biasaware.errors import BiasAwareError
from biasaware.folders import OWNER_ENV, command, hold_folder, owner
from biasaware.io import check_out_folder

HOLD = textwrap.dedent(
    """
    import sys
    from biasaware.folders import command
    from biasaware.io import check_out_folder
    with command():
        check_out_folder(sys.argv[1], "--out")
        print("held", flush=True)
        sys.stdin.read()  # until the test closes it
    """
)


class Holder:
    """Another process holding ``folder`` inside a command, until :meth:`stop`."""

    def __init__(self, folder, env=None):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        said = self.proc.stdout.readline()
        assert said == "held\n", self.proc.stderr.read()

    def stop(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0, self.proc.stderr.read()


@pytest.fixture
def holder():
    made = []

    def hold(folder, env=None):
        made.append(Holder(folder, env))
        return made[-1]

    yield hold
    for h in made:
        if h.proc.poll() is None:
            h.proc.kill()
            h.proc.wait()


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench") / "bench"
    assert main(["build", "bench", "--n", "3", "--biases", "length", "--out", str(folder)]) == 0
    return str(folder)


def run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_held_folder_is_refused_naming_its_holder_and_is_free_once_it_returns(tmp_path, holder, capsys):
    out = tmp_path / "runs" / "b"
    held = holder(out)
    code, text = run(["build", "bench", "--n", "2", "--biases", "length", "--out", str(out)], capsys)
    assert code == 2 and "Traceback" not in text
    assert f"--out {out} is in use by another biasaware run (process {held.proc.pid}, " in text, text
    assert "wait for it to end, or give another --out" in text
    assert not out.exists(), "the refused run wrote into the folder"
    # a folder inside it, and one holding it
    code, text = run(["build", "bench", "--n", "2", "--biases", "length", "--out", str(out / "in")], capsys)
    assert code == 2 and f"is inside {out}, which another biasaware run is writing" in text, text
    code, text = run(["build", "bench", "--n", "2", "--biases", "length", "--out", str(out.parent)], capsys)
    assert code == 2 and f"holds {out}, which another biasaware run is writing" in text, text
    held.stop()
    code, text = run(["build", "bench", "--n", "2", "--biases", "length", "--out", str(out)], capsys)
    assert code == 0, text


def test_a_killed_holder_blocks_nothing(tmp_path, holder, capsys):
    out = tmp_path / "b"
    held = holder(out)
    held.proc.send_signal(signal.SIGKILL)
    held.proc.wait()
    code, text = run(["build", "bench", "--n", "2", "--biases", "length", "--out", str(out)], capsys)
    assert code == 0, text


def test_the_api_refuses_a_held_folder_and_holds_its_own_only_while_it_runs(tmp_path, holder):
    out = tmp_path / "b"
    held = holder(out)
    with pytest.raises(
        BiasAwareError, match=r"^out .* is in use by another biasaware run .*give another `out`"
    ):
        biasaware.build_bench(out, n_per_bias=2, biases="length")
    held.stop()
    biasaware.build_bench(out, n_per_bias=2, biases="length")
    holder(out).stop()  # the call returned: another process can hold the folder at once


def test_a_run_holds_its_own_folders_again_and_inside_and_lets_go_at_the_end(tmp_path):
    out = tmp_path / "b"
    before = os.environ.get(OWNER_ENV)
    with command():
        check_out_folder(out, "--out")
        check_out_folder(out, "--out")  # the same command again: its own
        with command():
            check_out_folder(out / "inner", "--out")
        assert os.environ[OWNER_ENV] == owner()  # what it starts writes for it
        probe = subprocess.run(
            [sys.executable, "-c", HOLD, str(out / "stage")], input="", capture_output=True, text=True
        )
        assert probe.returncode == 0, probe.stderr  # a process it starts may write inside its folder
    assert os.environ.get(OWNER_ENV) == before
    Holder(out).stop()  # let go at the scope's end


def test_outside_a_command_the_check_refuses_and_holds_nothing(tmp_path, holder):
    out = tmp_path / "b"
    check_out_folder(out, "--out")
    holder(out).stop()  # nothing was held
    held = holder(out)
    with pytest.raises(BiasAwareError, match="which another biasaware run is writing"):
        hold_folder(out / "x")
    held.stop()


def test_the_ranks_of_one_launch_share_the_folder_and_another_launch_is_refused(tmp_path, holder):
    out = tmp_path / "b"
    launch = {"WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29511"}
    first = holder(out, env={**launch, "RANK": "0"})
    holder(out, env={**launch, "RANK": "1"}).stop()  # the other rank of the same launch
    other = subprocess.run(
        [sys.executable, "-c", HOLD, str(out)],
        input="",
        capture_output=True,
        text=True,
        env={**os.environ, **launch, "MASTER_PORT": "29512"},
    )
    assert other.returncode == 1 and "is in use by another biasaware run" in other.stderr, other.stderr
    first.stop()


def test_a_cache_that_cannot_be_made_keeps_the_locks_in_the_temporary_folder(tmp_path, holder, monkeypatch):
    (tmp_path / "cachefile").write_text("x")
    monkeypatch.setenv("BIASAWARE_CACHE", str(tmp_path / "cachefile" / "c"))
    held = holder(tmp_path / "b")
    with pytest.raises(BiasAwareError, match="in use by another biasaware run"):
        with command():
            check_out_folder(tmp_path / "b", "--out")
    held.stop()


def test_a_table_file_does_not_hold_its_folder(tmp_path, holder, capsys, bench):
    """``eval compare --out t.json`` writes one file beside other runs: its folder is not held, so a run
    being written beside it does not stop it (nor it the run)."""
    held = holder(tmp_path / "results" / "run-b")
    code, text = run(
        ["eval", "compare", "--runs", "nope-a", "nope-b", "--out", str(tmp_path / "results" / "t.json")],
        capsys,
    )
    assert "another biasaware run" not in text, text
    held.stop()


HELD_CASES = {
    "build-bench": ["build", "bench", "--n", "2", "--biases", "length"],
    "build-train": ["build", "train", "--max-rows", "4"],
    "build-traces": ["build", "traces", "--n", "2", "--biases", "length"],
    "eval-bias": ["eval", "bias", "--judge", "{reward}", "--mode", "reward", "--data", "{bench}"],
    "eval-scoring": ["eval", "scoring", "--judge", "{reward}", "--mode", "reward"],
    "preflight": ["preflight", "--judge", "{reward}"],
    "quickstart": ["quickstart"],
    "quickstart-generative": ["quickstart", "--generative"],
    "sweep": ["sweep"],
    "release": ["release", "--checkpoint", "{reward}", "--report", "{run}"],
}


@pytest.mark.parametrize("name", list(HELD_CASES))
def test_every_command_refuses_a_folder_inside_a_held_one_before_any_work(
    name, tmp_path, holder, capsys, bench, tiny_models
):
    places = {"bench": bench, "reward": str(tiny_models["reward"]), "run": str(tmp_path / "run")}
    if name == "release":
        argv = ["eval", "bias", "--judge", places["reward"], "--mode", "reward", "--data", bench]
        argv += ["--out", places["run"]]
        assert run(argv, capsys)[0] == 0
    held = holder(tmp_path / "runs")
    out = tmp_path / "runs" / "x"
    code, text = run([a.format(**places) for a in HELD_CASES[name]] + ["--out", str(out)], capsys)
    assert code == 2 and "Traceback" not in text, text
    assert f"is inside {tmp_path / 'runs'}, which another biasaware run is writing" in text, text
    assert not out.exists()
    held.stop()


def test_a_recipe_refuses_a_held_output_dir(tmp_path, holder, capsys, monkeypatch):
    from biasaware.recipes import load_recipe

    (tmp_path / "r.yaml").write_text("model_name_or_path: minilm-l6\nuse_cpu: true\n")
    held = holder(tmp_path / "ckpt")
    module = load_recipe("reward")
    monkeypatch.setattr(
        sys,
        "argv",
        ["reward.py", "--config", str(tmp_path / "r.yaml"), "--output_dir", str(tmp_path / "ckpt")],
    )
    with pytest.raises(SystemExit) as stop:
        module.run_recipe(module.main, module.DATACLASSES, getattr(module, "check", None))
    text = capsys.readouterr().err
    assert stop.value.code == 2 and "output_dir" in text and "is in use by another biasaware run" in text, (
        text
    )
    held.stop()


def test_the_lock_note_says_no_flag_value(tmp_path, monkeypatch):
    """The holder's note names the command's words before its first flag: no value (an address with
    credentials) is written to the cache."""
    from biasaware.folders import _key, _locks

    monkeypatch.setattr(sys, "argv", ["biasaware", "eval", "bias", "--base-url", "http://u:secret@h/v1"])
    with command():
        check_out_folder(tmp_path / "b", "--out")
        note = json.loads((_locks() / f"{_key((tmp_path / 'b').resolve())}.json").read_text())
    assert note["command"] == "biasaware eval bias" and "secret" not in json.dumps(note)
