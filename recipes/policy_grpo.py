"""GRPO of a policy with a biasaware judge as its reward.

The recipe is :mod:`biasaware.recipes.policy_grpo` (its options, configs and examples); this file runs it, as
``python -m biasaware.recipes.policy_grpo`` does::

    python recipes/policy_grpo.py --config recipes/configs/MODEL/CONFIG.yaml
    accelerate launch --config_file accelerate_configs/multi_gpu.yaml recipes/policy_grpo.py --config ...
"""

from biasaware.recipes import run_script

if __name__ == "__main__":
    run_script("policy_grpo")
