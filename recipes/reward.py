"""Reward-model judges: InfoNCE, hinge or Bradley-Terry over a chosen and several rejected responses.

The recipe is :mod:`biasaware.recipes.reward` (its options, configs and examples); this file runs it, as
``python -m biasaware.recipes.reward`` does::

    python recipes/reward.py --config recipes/configs/MODEL/CONFIG.yaml
    accelerate launch --config_file accelerate_configs/multi_gpu.yaml recipes/reward.py --config ...
"""

from biasaware.recipes import run_script

if __name__ == "__main__":
    run_script("reward")
