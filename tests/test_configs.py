"""Every recipe YAML parses against the recipe's dataclasses (no unknown keys); every accelerate config loads."""

import warnings
from pathlib import Path

import pytest
import yaml

from biasaware.recipes import load_recipe

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "recipes" / "configs").glob("*/*.yaml"))
MODELS = {"qwen2.5-7b-instruct", "llama-3.1-8b-instruct", "smollm2-135m-instruct", "minilm-l6"}


def test_every_model_has_its_configs():
    assert {p.parent.name for p in CONFIGS} == MODELS
    for model in ("qwen2.5-7b-instruct", "llama-3.1-8b-instruct"):
        names = {p.stem for p in CONFIGS if p.parent.name == model}
        assert {
            "sft",
            "grpo",
            "grpo_vllm",
            "reward_infonce",
            "reward_hinge",
            "reward_agnostic",
            "grpo_agnostic",
        } <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_recipe_config_parses(path):
    from trl import GRPOConfig, ModelConfig, SFTConfig, TrlParser

    from biasaware.training.reward_trainer import SetRewardConfig

    method = "policy_grpo" if path.stem.startswith("policy_grpo") else path.stem.split("_")[0]
    config_cls = {"sft": SFTConfig, "grpo": GRPOConfig, "policy_grpo": GRPOConfig, "reward": SetRewardConfig}[
        method
    ]
    parser = TrlParser((load_recipe(method).ScriptArguments, config_cls, ModelConfig))
    # GPU configs ask for bf16, which this CPU machine refuses: run them as if on a CPU, names unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        script, train, model = parser.parse_args_and_config(
            args=["--config", str(path), "--use_cpu", "true"], fail_with_unknown_args=True
        )
    data = yaml.safe_load(path.read_text())
    assert model.model_name_or_path == data["model_name_or_path"]
    assert train.output_dir == data["output_dir"] and Path(script.train_file).suffix == ".jsonl"


@pytest.mark.parametrize("path", sorted((ROOT / "accelerate_configs").glob("*.yaml")), ids=lambda p: p.name)
def test_accelerate_config_loads(path):
    from accelerate.commands.config.config_args import load_config_from_file

    cfg = load_config_from_file(str(path))
    assert cfg.num_processes in (2, 8, 16) and cfg.distributed_type.value in (
        "MULTI_GPU",
        "DEEPSPEED",
        "FSDP",
    )


@pytest.mark.parametrize(
    "path",
    [p for p in CONFIGS if p.stem.startswith(("reward_real_", "reward_two_sided_"))],
    ids=lambda p: p.name,
)
def test_an_experiments_reward_stage_saves_a_resumable_checkpoint_halfway(path):
    """The real-text study and the quickstart run these minutes-long stages: an interrupted one resumes
    from its halfway checkpoint (biasaware.experiments.parts.run_stage), not from the first step."""
    from trl import ModelConfig, TrlParser

    from biasaware.training.reward_trainer import SetRewardConfig

    parser = TrlParser((load_recipe("reward").ScriptArguments, SetRewardConfig, ModelConfig))
    _, train, _ = parser.parse_args_and_config(args=["--config", str(path)], fail_with_unknown_args=True)
    assert train.save_strategy == "steps" and 0 < train.save_steps <= 0.5 and train.save_total_limit == 1
