"""GRPO for generative judges, rewarded for verdict accuracy and format.

The recipe is :mod:`biasaware.recipes.grpo` (its options, configs and examples); this file runs it, as
``python -m biasaware.recipes.grpo`` does::

    python recipes/grpo.py --config recipes/configs/MODEL/CONFIG.yaml
    accelerate launch --config_file accelerate_configs/multi_gpu.yaml recipes/grpo.py --config ...
"""

from biasaware.recipes import run_script

if __name__ == "__main__":
    run_script("grpo")
