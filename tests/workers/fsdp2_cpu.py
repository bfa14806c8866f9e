"""FSDP2 as accelerate prepares it (``fsdp2_prepare_model``: transformer-layer auto-wrap, tied
embeddings grouped with the final norm, rank-0 loading), on 2 CPU processes (gloo), then the final
save path of biasaware's recipes (FULL_STATE_DICT, ``Accelerator.get_state_dict``, ``save_pretrained``).

accelerate turns FSDP on only for accelerator devices, so an FSDP launch cannot run on a CPU; this
worker drives accelerate's own FSDP2 functions with a stand-in for the Accelerator object instead.
Run by tests/test_distributed.py: ``torchrun --nproc_per_node 2 fsdp2_cpu.py MODEL OUT RESULT.json``.
"""

import json
import os
import sys
import warnings
from types import SimpleNamespace

import torch
import torch.distributed as dist
from accelerate import Accelerator
from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin
from accelerate.utils.fsdp_utils import fsdp2_prepare_model

from biasaware.devices import shutdown
from biasaware.judging.models import chat_ids, load_model
from biasaware.training.recipe import LOAD_CHECK_PROBE


def main(model_path: str, out: str, result_path: str) -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    plugin = FullyShardedDataParallelPlugin(
        fsdp_version=2,
        auto_wrap_policy="transformer_based_wrap",
        reshard_after_forward=True,
        cpu_ram_efficient_loading=True,
        state_dict_type="SHARDED_STATE_DICT",  # as accelerate_configs/fsdp.yaml
    )
    stand_in = SimpleNamespace(
        state=SimpleNamespace(fsdp_plugin=plugin),
        device=torch.device("cpu"),
        mixed_precision="no",
        is_main_process=rank == 0,
        torch_device_mesh=None,
        parallelism_config=None,
        is_fsdp2=True,
        distributed_type=DistributedType.FSDP,
    )
    model, tok = load_model(model_path, "causal")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = fsdp2_prepare_model(stand_in, model)
        model.train()
        ids = torch.tensor(chat_ids(tok, [LOAD_CHECK_PROBE]))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        for _ in range(2):
            model(input_ids=ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad()
    model.eval()
    with torch.no_grad():
        trained = model(input_ids=ids).logits.flatten()[-8:].tolist()
    # biasaware.training.recipe.save_final: the final save switches to FULL_STATE_DICT, which makes
    # transformers' Trainer.save_model call accelerator.get_state_dict and save_pretrained
    plugin.set_state_dict_type("FULL_STATE_DICT")
    assert "FULL_STATE_DICT" in str(plugin.state_dict_type)
    state_dict = Accelerator.get_state_dict(stand_in, model)
    if rank == 0:
        model.save_pretrained(out, state_dict=state_dict)
        tok.save_pretrained(out)
        result = {
            "trained_tail": trained,
            "keys": len(state_dict),
            "tied": model.lm_head.weight is model.model.embed_tokens.weight,
            "warnings": [str(w.message) for w in caught],
        }
        with open(result_path, "w") as f:
            json.dump(result, f)
    shutdown()  # as the recipes end: every rank waits, then leaves the group


if __name__ == "__main__":
    main(*sys.argv[1:4])
    # DTensor's sharding caches keep the device mesh, and with it the gloo group and its threads,
    # alive after the group is destroyed (shutdown's remedy cannot reach them: the process keeps its
    # gloo threads). At interpreter exit, a gloo thread that drops the last reference to a finished
    # work needs the GIL, is ended while unwinding, and the rank aborts: "terminate called without an
    # active exception", now and then on a loaded machine. With everything written, the process
    # leaves without the interpreter's teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
