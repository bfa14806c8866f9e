"""The final save of a ZeRO-3 run that wrote no 16-bit weights (``biasaware.training.recipe.save_final``)
on 2 CPU processes (gloo), with the second rank slow to look at the output folder, as a rank
descheduled on a loaded machine is: by the time it looks, the main process has turned the ZeRO
checkpoint into ``model.safetensors``. Both ranks must still pass the same barriers, or the run hangs.

The trainer is a stand-in: DeepSpeed's save writes a checkpoint tag and ``latest``, and the conversion
writes the weight file and removes them (the real conversion is in tests/test_distributed.py).
Run by tests/test_distributed.py: ``torchrun --nproc_per_node 2 zero3_final_save.py FOLDER RESULT.json``.
"""

import datetime
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch.distributed as dist
from accelerate import PartialState

import biasaware.judging.models as models
import biasaware.training.recipe as recipe

SLOW_LOOK = 3.0  # seconds the second rank waits before it may look at the folder


def main(folder: str, result_path: str) -> None:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    PartialState(cpu=True)  # accelerate's collectives (broadcast_object_list) use this group
    rank = dist.get_rank()
    out = Path(folder)
    barriers = 0

    def wait_for_everyone():
        nonlocal barriers
        barriers += 1
        dist.barrier()

    def save_model(output_dir):  # DeepSpeed's ZeRO-3 save without 16-bit weights
        if rank == 0:
            (Path(output_dir) / "global_step2").mkdir(parents=True)
            (Path(output_dir) / "latest").write_text("global_step2")

    def convert(path, model):
        (path / "model.safetensors").write_bytes(b"")
        (path / "global_step2").rmdir()
        (path / "latest").unlink()

    looked = models.weight_files

    def slow_weight_files(path):
        if rank == 1:
            time.sleep(SLOW_LOOK)
        return looked(path)

    models.weight_files = slow_weight_files
    recipe.zero_checkpoint_to_weights = convert
    trainer = SimpleNamespace(
        is_fsdp_enabled=False,
        is_deepspeed_enabled=True,
        model=None,
        save_model=save_model,
        accelerator=SimpleNamespace(
            is_main_process=rank == 0, wait_for_everyone=wait_for_everyone, unwrap_model=lambda m: m
        ),
    )
    recipe.save_final(trainer, str(out))
    counts = [None, None]
    dist.all_gather_object(counts, barriers)
    if rank == 0:
        Path(result_path).write_text(
            json.dumps({"barriers": counts, "files": sorted(p.name for p in out.iterdir())})
        )
    dist.destroy_process_group()


if __name__ == "__main__":
    main(*sys.argv[1:])
