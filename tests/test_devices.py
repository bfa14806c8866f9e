"""Device and dtype resolution, and the settings that carry them (judges, LLM specs, the CLI)."""

import os
import subprocess
import sys

import pytest
import torch

from biasaware.devices import (
    Ranks,
    cpu_bfloat16_units,
    cpu_model,
    describe,
    native_bfloat16,
    ranks,
    resolve,
    resolve_device,
    resolve_dtype,
)
from biasaware.errors import BiasAwareError
from biasaware.judging.judges import JudgeSpec
from biasaware.judging.llm import LLMSpec

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")


@no_cuda
def test_auto_without_an_accelerator_is_cpu_float32(monkeypatch):
    monkeypatch.setattr("biasaware.devices._mps_available", lambda: False)
    device, dtype = resolve("auto", "auto")
    assert (device, dtype) == (torch.device("cpu"), torch.float32)
    assert describe(device, dtype) == {"device": "cpu", "dtype": "float32"}


def test_explicit_values_are_respected():
    assert resolve_device("cpu") == torch.device("cpu")
    for name, dtype in [("float32", torch.float32), ("bfloat16", torch.bfloat16), ("float16", torch.float16)]:
        assert resolve_dtype(name, torch.device("cpu")) is dtype


@pytest.mark.parametrize(
    ("amx", "avx512_bf16", "units"),
    [(True, True, "AMX"), (False, True, "AVX512-BF16"), (False, False, None)],
)
def test_a_cpu_computes_bfloat16_with_amx_or_avx512_bf16_and_emulates_it_otherwise(
    monkeypatch, amx, avx512_bf16, units
):
    """AMX or the AVX512-BF16 instructions count as bfloat16 in hardware (bench/cpu_bfloat16.py: 1.6-1.7x on
    an AVX512-BF16 CPU, docs/results/bench/cpu-bfloat16-avx512bf16.json); a CPU with neither emulates it."""
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16, raising=False)
    assert cpu_bfloat16_units() == units
    assert native_bfloat16(torch.device("cpu")) is (units is not None)


def test_the_cpu_model_is_read_from_the_kernel_s_cpuinfo(tmp_path, monkeypatch):
    """Linux's ``model name`` line names the CPU; without the file, platform.processor's name or None."""
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14 96-Core Processor\n"
    )
    assert cpu_model(str(info)) == "AMD EPYC 9R14 96-Core Processor"
    monkeypatch.setattr("platform.processor", lambda: "")
    assert cpu_model(str(tmp_path / "missing")) is None
    info.write_text("processor\t: 0\nmodel name\t: \n")  # an empty name is no name
    assert cpu_model(str(info)) is None


def test_auto_dtype_on_cuda_follows_bf16_support(monkeypatch):
    cuda = torch.device("cuda", 0)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert resolve_dtype("auto", cuda) is torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert resolve_dtype("auto", cuda) is torch.float16


def test_auto_picks_the_local_rank_s_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert resolve_device("auto") == torch.device("cuda", 1)
    assert resolve_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(BiasAwareError, match="has 2 CUDA device"):
        resolve_device("cuda:2")


@no_cuda
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_an_unavailable_device_is_a_clear_error(device):
    with pytest.raises(BiasAwareError, match="no CUDA device is available here"):
        resolve_device(device)


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "CPU", "", "tpu"])
def test_misspelled_devices_and_dtypes_list_the_valid_ones(device):
    with pytest.raises(BiasAwareError, match="valid: auto, cpu, cuda, cuda:N, mps"):
        resolve_device(device)
    with pytest.raises(BiasAwareError, match="valid: auto, float32"):
        resolve_dtype("fp32", torch.device("cpu"))


def test_specs_check_device_and_dtype_when_built():
    with pytest.raises(BiasAwareError, match="setting 'device'"):
        JudgeSpec.create(name="x", device="gpu")
    with pytest.raises(BiasAwareError, match="setting 'dtype'"):
        JudgeSpec.create(name="x", dtype="fp16")
    with pytest.raises(BiasAwareError, match="unknown device"):
        LLMSpec(model="x", backend="transformers", device="gpu0")
    assert LLMSpec(model="x", device="cuda:1").identity() == LLMSpec(model="x").identity()  # runtime only


@pytest.mark.parametrize(
    ("gpus", "processes", "gloo"), [(0, 2, True), (1, 2, True), (2, 2, False), (4, 2, False)]
)
def test_processes_that_outnumber_the_gpus_wait_for_each_other_through_gloo(
    monkeypatch, gpus, processes, gloo
):
    """NCCL refuses two ranks on one GPU: a launch of more processes than GPUs joins a gloo group."""
    import accelerate

    from biasaware import devices

    asked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    monkeypatch.setattr(accelerate, "PartialState", lambda cpu: asked.append(cpu))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(processes))
    devices._state()
    assert asked == [gloo]


def test_a_single_process_has_rank_0_of_1(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert ranks() == Ranks(0, 1) and ranks().main
    Ranks().barrier()  # nothing to wait for


@no_cuda
def test_cli_with_an_unavailable_device_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    for cmd in (
        [
            "eval",
            "bias",
            "--judge",
            "minilm-l6",
            "--mode",
            "reward",
            "--data",
            str(tmp_path),
            "--out",
            str(out),
        ],
        ["quickstart", "--out", str(out)],
        ["models", "prepare", "minilm-l6"],
    ):
        run = subprocess.run(
            [sys.executable, "-m", "biasaware.cli", *cmd, "--device", "cuda"], capture_output=True, text=True
        )
        assert run.returncode == 2, run.stderr
        assert "no CUDA device is available here" in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()


@pytest.mark.parametrize("world", ["1", "2"])
def test_before_group_readies_a_launch_only(world):
    """A launched process (WORLD_SIZE over 1, no group yet) imports every module that would bind the
    group as a default argument (DeepSpeed's torch backend, torch's autograd collectives) before its
    group forms, so that the group is freed at shutdown (tests/test_distributed.py shows the threads
    go); a single process pays nothing for it."""
    code = (
        "import sys, biasaware.devices as d; d.before_group(); "
        "print(all(m in sys.modules for m in d.GROUP_HOLDERS), any(m in sys.modules for m in d.GROUP_HOLDERS))"
    )
    env = {**os.environ, "WORLD_SIZE": world}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-2:] == (["True", "True"] if world == "2" else ["False", "False"])
