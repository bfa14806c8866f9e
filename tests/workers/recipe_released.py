"""A launched recipe run leaves no gloo thread behind: the reward recipe trains 2 steps of a tiny model
under DistributedDataParallel (2 gloo processes on the CPU), then each rank lists gloo's threads once
the recipe's entry point has returned (it shut the group down) and writes them to RESULT (rank 0) or
RESULT.rankN. A thread alive there lives into the interpreter's exit, where its teardown rarely aborts
a finished launch ("terminate called without an active exception"). The trainer is freed only by the
garbage collector (a reference cycle), and with it the model wrapped in DistributedDataParallel, whose
reducer holds the group: without a collection before the group's destroy (torch 2.13), the group and
its threads outlived it. Run by tests/test_distributed.py:
``torchrun --nproc_per_node 2 recipe_released.py MODEL ROWS OUT RESULT``.
"""

import json
import os
import sys
from pathlib import Path

from group_released import gloo_threads  # this folder is the script's own: first on sys.path


def main(model: str, rows: str, out: str, result: str) -> None:
    from biasaware.recipes import run_script

    sys.argv = [
        "reward.py",
        *("--model_name_or_path", model, "--train_file", rows, "--output_dir", out),
        *("--max_steps", "2", "--per_device_train_batch_size", "2", "--save_strategy", "no"),
        *("--report_to", "none", "--bf16", "false", "--use_cpu", "true"),
    ]
    run_script("reward")
    import torch.distributed as dist

    rank = os.environ["RANK"]
    found = {
        "group": dist.is_initialized(),
        "after": gloo_threads(),
        "dynamo": "torch._dynamo" in sys.modules,
    }
    Path(result if rank == "0" else f"{result}.rank{rank}").write_text(json.dumps(found))


if __name__ == "__main__":
    main(*sys.argv[1:])
