"""`accelerate launch` of the recipes as 2 real CPU processes (gloo DDP) and under DeepSpeed ZeRO-3.

The world size is read back from the model card the run writes; DDP and ZeRO-3 must give the same
training loss on the same data; every run's final folder loads through `load_model` and scores the
load-check probe as the trained model did in memory (the recipe's own check, recorded in the card,
and again here in the test process). ZeRO-3 is run both with and without `zero3_save_16bit_model`.
Slow (process start-up, DeepSpeed's first JIT build): run with --slow.

FSDP is not here: accelerate turns FSDP on only for accelerator devices (MULTI_CPU is not among the
distributed types it wraps with FSDP), so on a CPU an FSDP launch would run unsharded; the recipes
refuse such a launch (tests/test_saving.py). See docs/training.md, "Launch configurations".
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_saving import probe_output  # tests/ is on sys.path (pytest prepend mode)

from biasaware.data.builders import BuildConfig, build_traces, build_train

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("rows")
    build_train(BuildConfig(corpus_size=200, max_rows=16, n_negatives=2), out)
    return str(out / "train.jsonl")


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    out = tmp_path_factory.mktemp("traces")
    build_traces(BuildConfig(corpus_size=200, max_rows=8), out)
    return str(out / "traces.jsonl")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LAUNCH_TIMEOUT = 600  # seconds; a launch takes well under a minute on 2 cores


def start(cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
    """A launch whose processes print every thread's stack on SIGABRT (faulthandler)."""
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env={**env, "PYTHONFAULTHANDLER": "1"},
    )


def finish(proc: subprocess.Popen, timeout: float = LAUNCH_TIMEOUT) -> str:
    """The output of a launch. One still running after ``timeout`` seconds is a hang: its workers and
    then its launcher get SIGABRT, so each prints where its threads stand, and the test fails with
    those stacks."""
    import psutil

    try:
        return proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        family = [psutil.Process(proc.pid)]
        family += family[0].children(recursive=True)
        for p in reversed(family):  # the workers first, while the launcher still forwards their output
            try:
                p.send_signal(signal.SIGABRT)
            except psutil.NoSuchProcess:
                pass
            time.sleep(2)
        try:
            out = proc.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            for p in family:
                try:
                    p.kill()
                except psutil.NoSuchProcess:
                    pass
            out = proc.communicate()[0]
        pytest.fail(f"the launch ran past {timeout} s; the stacks its processes printed:\n{out[-20000:]}")


def launch(config, script, out, *args, launcher=()):
    """A launch that succeeds: its card, its training losses and its output."""
    proc = start(command(config, script, out, *args, launcher=launcher), ENV)
    log = finish(proc)
    assert proc.returncode == 0, log[-6000:]
    card = json.loads((Path(out) / "biasaware_card.json").read_text())
    loss = [float(x) for x in re.findall(r"'train_loss': '([^']+)'", log)]
    return card, loss, log


# PYTHONFAULTHANDLER: a process that aborts (a C++ std::terminate at exit) prints every thread's Python stack,
# so a rare failure of a launch names the process and the threads it left running
ENV = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0", "PYTHONFAULTHANDLER": "1"}


def command(config, script, out, *args, launcher=()):
    accelerate = Path(sys.executable).with_name("accelerate")
    # a fresh rendezvous port per launch: back-to-back runs on the default port can collide
    cmd = [
        str(accelerate),
        "launch",
        "--config_file",
        str(ROOT / "accelerate_configs" / config),
        "--main_process_port",
        str(free_port()),
        *launcher,
        str(ROOT / "recipes" / script),
        "--output_dir",
        str(out),
        "--max_steps",
        "2",
        "--report_to",
        "none",
        "--save_strategy",
        "no",
        "--bf16",
        "false",
        "--per_device_train_batch_size",
        "2",
        *args,
    ]
    return cmd


def assert_loads(out, kind):
    """The final folder is a model folder that reproduces the trained model (the card's figures)."""
    check = json.loads((Path(out) / "biasaware_card.json").read_text())["load_check"]
    assert check["ok"] and check["max_abs_diff"] <= check["tolerance"]
    assert probe_output(out, kind) == pytest.approx(check["trained_tail"], abs=1e-4)
    assert not list(Path(out).glob("global_step*")) and not (Path(out) / "latest").exists()


def test_reward_ddp_and_zero3(tiny_models, rows, tmp_path):
    model = ["--model_name_or_path", str(tiny_models["reward"]), "--train_file", rows]
    ddp, ddp_loss, _ = launch("cpu_ddp.yaml", "reward.py", tmp_path / "ddp", *model, "--use_cpu", "true")
    z3, z3_loss, log = launch("cpu_zero3.yaml", "reward.py", tmp_path / "z3", *model, "--ddp_backend", "gloo")
    assert ddp["world_size"] == z3["world_size"] == 2
    assert ddp_loss and z3_loss and ddp_loss[0] == pytest.approx(z3_loss[0], abs=0.02)
    assert z3["launch"]["distributed_type"] == "DEEPSPEED" and z3["launch"]["zero_stage"] == 3
    assert "converting" in log and "to model.safetensors" in log  # no 16-bit weights: zero_to_fp32
    assert_loads(tmp_path / "ddp", "reward")
    assert_loads(tmp_path / "z3", "reward")
    z2, _, _ = launch(
        "cpu_zero3.yaml",
        "reward.py",
        tmp_path / "z2",
        *model,
        "--ddp_backend",
        "gloo",
        launcher=["--zero_stage", "2"],
    )
    assert z2["launch"]["zero_stage"] == 2
    assert_loads(tmp_path / "z2", "reward")


def test_zero3_steps_whose_gradients_are_not_finite_are_said_and_stop_the_run(tiny_models, rows, tmp_path):
    """A learning rate that sends the weights to 1e30 at the first step: every later step's gradients are
    NaN. DeepSpeed skips those steps itself, after its step the check reads its verdict, says each one,
    and five in a row stop the run (each process exits 2 without a traceback; the launcher then prints
    its own) before the ninth step."""
    args = ["--model_name_or_path", str(tiny_models["reward"]), "--train_file", rows, "--ddp_backend", "gloo"]
    cmd = command("cpu_zero3.yaml", "reward.py", tmp_path / "z3", *args, "--learning_rate", "1e30")
    cmd[cmd.index("--max_steps") + 1] = "9"
    proc = start(cmd, ENV)
    log = finish(proc)
    assert proc.returncode != 0, log[-6000:]
    said = re.findall(
        r"\[train\] step (\d+)/9: gradients not finite \(NaN or inf\) in the gradients DeepSpeed holds", log
    )
    assert said == ["2", "3", "4", "5", "6"], log[-6000:]
    assert "training stopped at step 6: the gradients were not finite (NaN or inf) at 5 steps in a row" in log
    assert log.count("Traceback") == 1 and "ChildFailedError" in log  # the launcher's own, on exit 2
    assert "exitcode  : 2" in log, log[-6000:]


def test_a_launch_refused_before_training_says_so_once(tiny_models, rows, tmp_path):
    """Every rank refuses the same settings; rank 0 alone says it (exit 2 each), not once per process."""
    args = ["--model_name_or_path", str(tiny_models["reward"]), "--train_file", rows, "--use_cpu", "true"]
    proc = start(command("cpu_ddp.yaml", "reward.py", tmp_path / "o", *args, "--learning_rate", "-1"), ENV)
    log = finish(proc)
    assert proc.returncode != 0 and log.count("error: learning_rate: a finite number above 0") == 1, log[
        -6000:
    ]
    assert "[rank 1]" not in log and not (tmp_path / "o").exists()


def test_sft_ddp_and_zero3_with_16bit_save(tiny_models, traces, tmp_path):
    """SFT of a causal judge with tied embeddings; ZeRO-3 here saves through its 16-bit gather."""
    args = ["--model_name_or_path", str(tiny_models["causal"]), "--train_file", traces]
    ddp, _, _ = launch("cpu_ddp.yaml", "sft.py", tmp_path / "ddp", *args, "--use_cpu", "true")
    z3, _, log = launch(
        "cpu_zero3.yaml",
        "sft.py",
        tmp_path / "z3",
        *args,
        "--ddp_backend",
        "gloo",
        launcher=["--zero3_save_16bit_model", "true"],
    )
    assert ddp["world_size"] == z3["world_size"] == 2 and "converting" not in log
    assert z3["launch"] == {
        "distributed_type": "DEEPSPEED",
        "num_processes": 2,
        "mixed_precision": "no",
        "zero_stage": 3,
    }
    assert ddp["launch"]["distributed_type"] == "MULTI_CPU"
    assert_loads(tmp_path / "ddp", "causal")
    assert_loads(tmp_path / "z3", "causal")


def test_lora_reward_ddp_saves_a_loadable_adapter(tiny_models, rows, tmp_path):
    args = ["--model_name_or_path", str(tiny_models["reward"]), "--train_file", rows, "--use_peft", "true"]
    card, _, _ = launch(
        "cpu_ddp.yaml", "reward.py", tmp_path / "lora", *args, "--use_cpu", "true", "--lora_r", "4"
    )
    assert card["world_size"] == 2 and (tmp_path / "lora" / "adapter_config.json").exists()
    assert_loads(tmp_path / "lora", "reward")


def test_grpo_ddp_and_zero3(tiny_models, rows, tmp_path):
    args = [
        "--model_name_or_path",
        str(tiny_models["causal"]),
        "--train_file",
        rows,
        "--num_generations",
        "2",
        "--max_completion_length",
        "8",
    ]
    card, loss, _ = launch("cpu_ddp.yaml", "grpo.py", tmp_path / "ddp", *args, "--use_cpu", "true")
    z3, z3_loss, log = launch("cpu_zero3.yaml", "grpo.py", tmp_path / "z3", *args, "--ddp_backend", "gloo")
    assert card["world_size"] == z3["world_size"] == 2 and card["recipe"] == "grpo" and loss and z3_loss
    assert z3["launch"]["zero_stage"] == 3  # DeepSpeed ZeRO-3 really ran
    assert_loads(tmp_path / "ddp", "causal")
    assert_loads(tmp_path / "z3", "causal")


def run_worker(script: str, *args, timeout: float = LAUNCH_TIMEOUT) -> dict:
    """``torchrun`` of ``tests/workers/SCRIPT`` as 2 CPU processes with ARGS and a result path last;
    the JSON result rank 0 wrote there."""
    result = Path(args[-1])
    cmd = [
        str(Path(sys.executable).with_name("torchrun")),
        "--nproc_per_node",
        "2",
        "--master_port",
        str(free_port()),
        str(ROOT / "tests" / "workers" / script),
        *map(str, args),
    ]
    env = {**ENV, "OMP_NUM_THREADS": "1"}
    proc = start(cmd, env)
    log = finish(proc, timeout)
    assert proc.returncode == 0, log[-6000:]
    return json.loads(result.read_text())


def test_fsdp2_as_accelerate_prepares_it_saves_a_folder_that_loads(tiny_models, tmp_path):
    """The closest real FSDP configuration a CPU allows (see tests/workers/fsdp2_cpu.py): accelerate's
    FSDP2 preparation of a causal judge with tied embeddings, 2 gloo processes, 2 optimizer steps,
    then the recipes' final save path; the folder loads and scores as the sharded model did."""
    out = tmp_path / "fsdp2"
    found = run_worker("fsdp2_cpu.py", tiny_models["causal"], out, tmp_path / "result.json")
    assert found["tied"] and found["keys"] > 0
    assert not [
        w for w in found["warnings"] if "before backward" in w
    ]  # the tied lm_head warning seen on GPU
    assert probe_output(out, "causal") == pytest.approx(found["trained_tail"], abs=1e-4)


def test_a_slow_rank_meets_the_main_one_at_the_final_save(tmp_path):
    """A ZeRO-3 run that wrote no 16-bit weights: the main process converts the checkpoint while the
    other rank is slow to look at the folder (tests/workers/zero3_final_save.py). Both must pass the
    same barriers; a rank that decided from what it saw skipped one, and the launch hung."""
    found = run_worker("zero3_final_save.py", tmp_path / "z3", tmp_path / "result.json", timeout=180)
    assert found == {"barriers": [2, 2], "files": ["model.safetensors"]}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads are listed from /proc")
def test_a_launch_frees_its_process_group_at_shutdown(tmp_path):
    """gloo's threads are gone once a launched entry point shuts down (tests/workers/group_released.py):
    with DeepSpeed's torch backend imported after the group formed, as training does, the group
    outlived its destroy and its threads lived into the interpreter's exit, where one rarely aborted a
    finished launch (the rare failure of test_lora_reward_ddp_saves_a_loadable_adapter)."""
    found = run_worker("group_released.py", tmp_path / "result.json")
    assert found["total"] == [2.0, 2.0] and found["during"] and found["after"] == []


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads are listed from /proc")
def test_a_launched_recipe_run_leaves_no_gloo_thread(tiny_models, rows, tmp_path):
    """The reward recipe under DistributedDataParallel, 2 steps (tests/workers/recipe_released.py): once
    its entry point returns, neither rank has a gloo thread left to abort the interpreter's exit (the
    rare "terminate called without an active exception" of test_reward_ddp_and_zero3 and
    test_lora_reward_ddp_saves_a_loadable_adapter), and the group is gone."""
    result = tmp_path / "result.json"
    first = run_worker("recipe_released.py", tiny_models["reward"], rows, tmp_path / "out", result)
    second = json.loads(Path(f"{result}.rank1").read_text())
    for found in (first, second):
        assert found["after"] == [] and not found["group"], found


def test_two_machines_on_localhost_train_a_reward_model(tiny_models, rows, tmp_path):
    """accelerate_configs/multi_node.yaml as two 'machines' of one process each (machine ranks 0 and 1,
    the main node at 127.0.0.1, gloo on the CPU): two steps of a tiny reward model whose final folder
    loads and reproduces the trained model; the card records a world of 2."""
    accelerate = Path(sys.executable).with_name("accelerate")
    port = str(free_port())
    out = tmp_path / "mn"

    def machine(rank: int) -> subprocess.Popen:
        cmd = [
            str(accelerate),
            "launch",
            "--config_file",
            str(ROOT / "accelerate_configs" / "multi_node.yaml"),
            "--num_machines",
            "2",
            "--num_processes",
            "2",
            "--machine_rank",
            str(rank),
            "--main_process_ip",
            "127.0.0.1",
            "--main_process_port",
            port,
            "--mixed_precision",
            "no",
            str(ROOT / "recipes" / "reward.py"),
            "--model_name_or_path",
            str(tiny_models["reward"]),
            "--train_file",
            rows,
            "--output_dir",
            str(out),
            "--max_steps",
            "2",
            "--report_to",
            "none",
            "--save_strategy",
            "no",
            "--bf16",
            "false",
            "--per_device_train_batch_size",
            "2",
            "--use_cpu",
            "true",
            "--ddp_backend",
            "gloo",
        ]
        env = {**ENV, "OMP_NUM_THREADS": "1"}
        return start(cmd, env)

    nodes = [machine(0), machine(1)]
    logs = [finish(n) for n in nodes]
    assert [n.returncode for n in nodes] == [0, 0], logs[0][-3000:] + logs[1][-3000:]
    card = json.loads((out / "biasaware_card.json").read_text())
    assert card["world_size"] == 2
    assert_loads(out, "reward")
