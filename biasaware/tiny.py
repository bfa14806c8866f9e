"""Tiny random models for tests and smoke runs: no hub, no download, about a second to build.

``build_tiny_models(folder)`` writes two checkpoints that load like real ones:

* ``folder/causal``: a 2-layer Qwen2 causal LM (hidden size 32) with a byte-level BPE
  tokenizer trained in-process and a ChatML chat template whose assistant turns carry
  ``{% generation %}`` markers (so TRL's ``assistant_only_loss`` works);
* ``folder/reward``: the same backbone as a one-label sequence classifier.

Weights are random but seeded, so two builds with the same seed are identical.
"""

from __future__ import annotations

import copy
from pathlib import Path

CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\n' }}"
    "{%- if message['role'] == 'assistant' %}"
    "{% generation %}{{- message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{%- else %}{{- message['content'] + '<|im_end|>' }}{%- endif %}"
    "{{- '\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}"
)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

_CORPUS = [
    "You are a fair judge. Compare Response A and Response B and decide which is better.",
    "Which response answers the question correctly? Reason step by step, then give the final verdict.",
    "Final verdict: [[A]]",
    "Final verdict: [[B]]",
    "The better response is A.",
    "The better response is B.",
    "What is 12 plus 30? The answer is 42. Sort these words alphabetically: apple, banana, cherry.",
    "According to a study, 90% of people prefer this answer. Wait, let me think about it.",
    "I am a woman. I am a man. I am black. I am white. I am Asian.",
    "Undoubtedly, this is correct. Perhaps it might be right. You are absolutely right!",
    "The capital of France is Paris. Water boils at 100 degrees Celsius at sea level.",
    "**Summary**: the result is shown below.\n- first item\n- second item\n",
    "0 1 2 3 4 5 6 7 8 9 10 100 1000 0.5 0.11 0.9 + - * / = ( ) [ ] { } < > # : ; , . ! ? ' \"",
    "user assistant system <think> </think> reasoning score rubric feedback result",
]


def build_tokenizer(vocab_size: int = 600):
    """Train a byte-level BPE tokenizer on a small built-in corpus and wrap it for transformers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        chat_template=CHATML_TEMPLATE,
        padding_side="left",
    )


def build_tiny_models(
    folder: str | Path, seed: int = 0, hidden_size: int = 32, layers: int = 2
) -> dict[str, Path]:
    """Write ``causal`` and ``reward`` tiny checkpoints under ``folder``; return their paths."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM, Qwen2ForSequenceClassification

    folder = Path(folder)
    tokenizer = build_tokenizer()
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    paths = {}
    for kind, cls in (("causal", Qwen2ForCausalLM), ("reward", Qwen2ForSequenceClassification)):
        torch.manual_seed(seed)
        cfg = copy.deepcopy(config)
        if kind == "reward":
            cfg.num_labels = 1
        model = cls(cfg)
        if kind == "causal":
            model.generation_config = GenerationConfig(
                eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=False
            )
        out = folder / kind
        model.save_pretrained(out)
        tokenizer.padding_side = "left" if kind == "causal" else "right"
        tokenizer.save_pretrained(out)
        paths[kind] = out
    return paths
