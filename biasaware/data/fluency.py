"""Fluency: does a rewritten response read as fluently as the text it was written from?

A template rewrite (a citation added, a confident opener, an identity statement) on someone else's real answer can
read as pasted in. The ``fluency`` verifier measures that with a causal language model (``smollm2-135m-instruct``
unless ``verifier_llm.model`` or ``llm.model`` names another; the GPU when there is one):

* each text is read as the reply to its pair's prompt (the chat template's assistant turn, after the prompt's
  last :data:`PROMPT_TOKENS` tokens) and scored token by token: the negative log-likelihood (nats) of each token
  given the prompt and the reply's tokens before it, over the reply's first :data:`MAX_TOKENS` tokens;
* the **changed tokens** of a rewrite are those a token-level diff against its original marks as inserted or
  replaced (:class:`difflib.SequenceMatcher`), scored in the rewrite's own context;
* the **fluency gap** is the changed tokens' mean NLL minus the original's mean NLL: how much less likely, per token,
  the model finds what was written in than the text around it. ``None`` when nothing was added (a cut, an
  untouched text) or every changed token lies past :data:`MAX_TOKENS`. A cue written at a reply's start (an
  identity statement) is read after the prompt, as any reply's first words are;
* a check is kept when every gap is at most the build's ``fluency_margin`` (nats per token; default
  :data:`MARGIN`, a gap of 1.0 is the written-in text being e ≈ 2.7 times less likely per token); a gap that is
  ``None`` holds.

The gaps are written into each probe's or row's ``meta`` (``fluency_gap``: the largest of the check) so the kept
ones can be read, and the dropped ones are in the build's work log. Perplexity under a small model is a measure of
fluency, not of correctness: the ``llm`` verifier (the better answer still wins) is the other check.
"""

from __future__ import annotations

import difflib
import random
import re
from typing import Any

from biasaware.devices import resolve
from biasaware.judging.models import chat_ids, load_model

DEFAULT_MODEL = "smollm2-135m-instruct"
MAX_TOKENS = 1024
PROMPT_TOKENS = 256
MARGIN = 1.0


class FluencyScorer:
    """Per-token NLL of replies under a causal language model (cached by prompt and reply)."""

    def __init__(
        self, model: str = DEFAULT_MODEL, device: str = "auto", dtype: str = "auto", batch_size: int = 4
    ):
        import torch  # heavy: only a fluency build loads it

        self.torch = torch
        self.device, torch_dtype = resolve(device, dtype)
        self.model, self.tokenizer = load_model(
            model or DEFAULT_MODEL, "causal", dtype=torch_dtype, device=self.device
        )
        self.batch_size = batch_size
        self.cache: dict[tuple[str, str], tuple[list[int], list[float]]] = {}

    def score(self, items: list[tuple[list[dict], str]]) -> list[tuple[list[int], list[float]]]:
        """For each ``(prompt messages, reply)``: the reply's token ids (at most :data:`MAX_TOKENS`) and each
        one's NLL given the prompt and the reply's tokens before it."""
        given = {(str(prompt), text): (prompt, text) for prompt, text in items}
        todo = sorted((k for k in given if k not in self.cache), key=lambda k: len(k[1]))
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            heads = chat_ids(self.tokenizer, [given[k][0] for k in chunk], add_generation_prompt=True)
            heads = [h[-PROMPT_TOKENS:] for h in heads]
            replies = [
                self.tokenizer(k[1], add_special_tokens=False)["input_ids"][:MAX_TOKENS] for k in chunk
            ]
            rows = [h + r for h, r in zip(heads, replies, strict=True)]
            width = max(len(r) for r in rows)
            pad = self.tokenizer.pad_token_id or 0
            batch = self.torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=self.device)
            mask = self.torch.tensor(
                [[1] * len(r) + [0] * (width - len(r)) for r in rows], device=self.device
            )
            with self.torch.no_grad():
                logits = self.model(input_ids=batch, attention_mask=mask).logits.float()
            nll = -self.torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, batch[:, 1:, None])[..., 0]
            for k, h, r, row in zip(chunk, heads, replies, nll.tolist(), strict=True):
                self.cache[k] = (r, row[len(h) - 1 : len(h) - 1 + len(r)])  # token t's NLL sits at t - 1
        return [self.cache[(str(prompt), text)] for prompt, text in items]

    def gap(self, prompt: list[dict], original: str, rewritten: str) -> float | None:
        """The fluency gap of ``rewritten`` against ``original``, both read as replies to ``prompt`` (module
        docstring); ``None`` when nothing was written in."""
        if rewritten.strip() == original.strip():
            return None
        (old_ids, old_nll), (new_ids, new_nll) = self.score([(prompt, original), (prompt, rewritten)])
        changed = [
            j
            for op, _, _, j1, j2 in difflib.SequenceMatcher(
                None, old_ids, new_ids, autojunk=False
            ).get_opcodes()
            if op in ("insert", "replace")
            for j in range(j1, j2)
        ]
        if not changed or not old_nll:
            return None
        return sum(new_nll[j] for j in changed) / len(changed) - sum(old_nll) / len(old_nll)


class FluencyVerifier:
    """A build's ``fluency`` verifier: a check holds when each rewritten text's fluency gap against the text it
    was written from (the better one: the pair's chosen answer; each worse one: its rejected answer), both read as
    replies to the pair's prompt, is at most ``margin``. The largest gap of a check is left in ``check.found``."""

    name = "fluency"

    def __init__(self, scorer: Any, margin: float = MARGIN):
        self.scorer, self.margin = scorer, margin

    def judge(self, checks: list) -> list[bool | None]:
        # (the text it was written from, the text) per check: an untouched text has no gap
        written = [[(c.pair.chosen, c.better), *((c.pair.rejected, w) for w in c.worse)] for c in checks]
        self.scorer.score(  # in batches, before the gaps read them one by one
            [
                (c.pair.prompt, text)
                for c, pairs in zip(checks, written, strict=True)
                for original, rewritten in pairs
                if original.strip() != rewritten.strip()
                for text in (original, rewritten)
            ]
        )
        out: list[bool | None] = []
        for c, pairs in zip(checks, written, strict=True):
            found = [g for g in (self.scorer.gap(c.pair.prompt, o, t) for o, t in pairs) if g is not None]
            if found:
                c.found["fluency_gap"] = round(max(found), 4)
            out.append(all(g <= self.margin for g in found))
        return out


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def natural_gaps(pairs: list, scorer: FluencyScorer, n: int, seed: int) -> list[float]:
    """The fluency gaps of sentences the answers' own writers wrote, a reference for the margin: for each of at most
    ``n`` chosen answers of three or more sentences (drawn by ``seed``), one sentence after the first, drawn by the
    seed, taken out; the gap of the answer as written against the answer without it."""
    rng = random.Random(f"fluency-natural-{seed}")
    found = []
    for pair in rng.sample(pairs, len(pairs)):
        sentences = _SENTENCE_END.split(pair.chosen.strip())
        if len(sentences) < 3:
            continue
        k = rng.randrange(1, len(sentences))
        gap = scorer.gap(pair.prompt, " ".join(sentences[:k] + sentences[k + 1 :]), " ".join(sentences))
        if gap is not None:
            found.append(gap)
        if len(found) == n:
            break
    return found
