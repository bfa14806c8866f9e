"""SFT of a generative judge on teacher traces or verdicts.

The recipe is :mod:`biasaware.recipes.sft` (its options, configs and examples); this file runs it, as
``python -m biasaware.recipes.sft`` does::

    python recipes/sft.py --config recipes/configs/MODEL/CONFIG.yaml
    accelerate launch --config_file accelerate_configs/multi_gpu.yaml recipes/sft.py --config ...
"""

from biasaware.recipes import run_script

if __name__ == "__main__":
    run_script("sft")
