"""A launched entry point frees its process group at shutdown: gloo's threads are gone before the
interpreter exits. An entry point calls :func:`biasaware.devices.before_group` first (as
``run_recipe`` and the CLI do); training then imports DeepSpeed's torch backend after the group
exists. Before that call, the backend held the group past ``destroy_process_group`` and gloo's threads
lived into the interpreter's exit, where a rare abort turned a finished launch into a failed one.
The same for torch's autograd collectives (torch.distributed.nn.functional, which torch._dynamo
imports). (DeepSpeed 0.19.8, torch 2.13: without the call, or with only DeepSpeed's backend imported
first, this worker's gloo threads were still alive after shutdown.)
Run by tests/test_distributed.py: ``torchrun --nproc_per_node 2 group_released.py RESULT.json``.
"""

import gc
import json
import os
import sys
from pathlib import Path


def gloo_threads() -> list[str]:
    tasks = Path("/proc/self/task")
    return sorted(
        n for n in ((tasks / t / "comm").read_text().strip() for t in os.listdir(tasks)) if "gloo" in n
    )


def main(result: str) -> None:
    import biasaware.devices as devices

    devices.before_group()
    ranks = devices.ranks()  # forms the group: accelerate's PartialState, gloo on the CPU
    import deepspeed.comm.torch  # noqa: F401  (as training does, once the group exists)
    import torch
    import torch.distributed as dist
    import torch.distributed.nn.functional  # noqa: F401  (as torch._dynamo does, imported by a run)

    total = torch.ones(2)
    dist.all_reduce(total)
    during = gloo_threads()
    devices.shutdown()
    gc.collect()
    if ranks.main:
        found = {"during": during, "after": gloo_threads(), "total": total.tolist()}
        Path(result).write_text(json.dumps(found))


if __name__ == "__main__":
    main(sys.argv[1])
