"""Judges behind one interface: ``judge(views) -> [JudgeOutput | None]``.

* :class:`GenerativeJudge`: a chat model asked with a named template (:mod:`biasaware.prompts`)
  through :class:`biasaware.llm.LLMClient`: local transformers (batched, left-padded, greedy by
  default), vLLM, or any OpenAI-compatible endpoint; replies are cached like every LLM call. The
  template's parser turns the reply into ``A`` / ``B`` / ``tie`` / ``invalid``.
* :class:`DirectVerdictJudge`: one forward pass per item; the verdict is whichever of the tokens
  ``A`` and ``B`` is more probable as the first token of the answer to the ``direct`` template;
  ``scores`` holds the two probabilities renormalised over {A, B}.
* :class:`RewardModelJudge`: a sequence-classification model scores (prompt, response) with the
  model's chat template; batches sorted by length; the higher score wins, equal scores are a tie
  (which counts as wrong: the comparison is strict).

``None`` marks a view whose call failed after retries (endpoints only): it stays unjudged and a
rerun retries it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biasaware.llm import LLMClient, LLMSpec, any_text
from biasaware.prompts import get_template
from biasaware.records import View


@dataclass
class JudgeOutput:
    raw: str
    verdict: str
    scores: dict[str, float] | None = None


class GenerativeJudge:
    kind = "generative"

    def __init__(self, spec: LLMSpec, template: str = "default"):
        self.client = LLMClient(spec, role="judge")
        self.template = get_template(template)
        self.name = spec.model

    def judge(self, views: list[View]) -> list[JudgeOutput | None]:
        replies = self.client.complete_many(
            [self.template.render(v) for v in views], check=any_text, desc="judge"
        )
        return [None if r is None else JudgeOutput(r, self.template.parse(r)) for r in replies]

    def summary(self) -> dict[str, Any]:
        return {"template": self.template.name, **self.client.summary()}


def _batches(items: list, size: int):
    for i in range(0, len(items), size):
        yield items[i : i + size]


class DirectVerdictJudge:
    kind = "direct"

    def __init__(self, model: str, *, batch_size: int = 8, device: str | None = None, loaded=None):
        from biasaware.models import load_model

        self.name = model
        self.model, self.tokenizer = loaded or load_model(model, "causal", device=device)
        self.template = get_template("direct")
        self.batch_size = batch_size
        self.token_ids = {letter: self._ids(letter) for letter in "AB"}

    def _ids(self, letter: str) -> list[int]:
        """The single-token spellings of a letter as an answer's first token ("A", " A")."""
        ids = set()
        for text in (letter, " " + letter):
            enc = self.tokenizer.encode(text, add_special_tokens=False)
            if len(enc) == 1:
                ids.add(enc[0])
        if not ids:
            from biasaware.errors import BiasAwareError

            raise BiasAwareError(f"{self.name}: {letter!r} is not one token; use generation mode instead")
        return sorted(ids)

    def judge(self, views: list[View]) -> list[JudgeOutput | None]:
        """Length-sorted left-padded batches; only the last position's logits are computed."""
        import inspect

        import torch

        if not views:
            return []
        ids = self.tokenizer.apply_chat_template(
            [self.template.render(v) for v in views], add_generation_prompt=True, return_dict=True
        )["input_ids"]
        order = sorted(range(len(views)), key=lambda i: len(ids[i]))
        last_only = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        out: list[JudgeOutput | None] = [None] * len(views)
        for idx in _batches(order, self.batch_size):
            enc = self.tokenizer.pad({"input_ids": [ids[i] for i in idx]}, return_tensors="pt")
            enc = {k: v.to(self.model.device) for k, v in enc.items()}
            with torch.no_grad():
                kwargs = {"logits_to_keep": 1} if last_only else {}
                logits = self.model(**enc, **kwargs).logits[:, -1, :].float()
            logp = torch.log_softmax(logits, dim=-1)
            a = torch.logsumexp(logp[:, self.token_ids["A"]], dim=-1)
            b = torch.logsumexp(logp[:, self.token_ids["B"]], dim=-1)
            pa = torch.sigmoid(a - b)  # P(A) renormalised over {A, B}
            for i, p in zip(idx, pa.tolist(), strict=True):
                verdict = "A" if p > 0.5 else "B" if p < 0.5 else "tie"
                out[i] = JudgeOutput(f"P(A)={p:.6f} P(B)={1 - p:.6f}", verdict, {"A": p, "B": 1 - p})
        return out

    def summary(self) -> dict[str, Any]:
        return {"model": self.name, "mode": "direct", "tokens": self.token_ids}


class RewardModelJudge:
    kind = "reward"

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 16,
        max_length: int = 1024,
        device: str | None = None,
        loaded=None,
    ):
        from biasaware.models import load_model

        self.name = model
        self.model, self.tokenizer = loaded or load_model(model, "reward", device=device)
        self.batch_size, self.max_length = batch_size, max_length

    def texts(self, prompt: list, response: str) -> str:
        messages = [m if isinstance(m, dict) else m.model_dump() for m in prompt]
        messages = [*messages, {"role": "assistant", "content": response}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False)

    def score_texts(self, texts: list[str]) -> list[float]:
        """Scores in input order; tokenised once, batches sorted by length so padding stays small."""
        import torch

        ids = self.tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        scores = [0.0] * len(texts)
        for idx in _batches(order, self.batch_size):
            enc = self.tokenizer.pad({"input_ids": [ids[i] for i in idx]}, return_tensors="pt")
            enc = {k: v.to(self.model.device) for k, v in enc.items()}
            with torch.no_grad():
                values = self.model(**enc).logits[:, 0].float().tolist()
            for i, v in zip(idx, values, strict=True):
                scores[i] = v
        return scores

    def judge(self, views: list[View]) -> list[JudgeOutput | None]:
        texts: dict[str, None] = {}
        per_view = []
        for v in views:
            ta, tb = self.texts(v.prompt, v.response_a), self.texts(v.prompt, v.response_b)
            texts.setdefault(ta)
            texts.setdefault(tb)
            per_view.append((ta, tb))
        unique = list(texts)
        scored = dict(zip(unique, self.score_texts(unique), strict=True))
        out: list[JudgeOutput | None] = []
        for ta, tb in per_view:
            sa, sb = scored[ta], scored[tb]
            verdict = "A" if sa > sb else "B" if sb > sa else "tie"
            out.append(JudgeOutput(f"score_A={sa:.6f} score_B={sb:.6f}", verdict, {"A": sa, "B": sb}))
        return out

    def summary(self) -> dict[str, Any]:
        return {"model": self.name, "mode": "reward"}
