"""Master keys: non-answers that judges score as answers ("One Token to Fool LLM-as-a-Judge", Zhao et
al., 2025). A policy trained against such a judge is paid for saying nothing: it learns to emit the
opener alone, and training collapses.

Five kinds of key, each written for biasaware after the paper's families:

* ``punctuation``: a lone mark (":", ".", ...);
* ``opener``: the start of a reasoning trace and nothing after it, in several languages;
* ``header``: an answer header with no answer ("Solution", "Answer:", "解", ...);
* ``restated``: the user's request repeated as the answer;
* ``truncated``: the real answer cut after its opening clause (:func:`truncate_answer`): fluent, on
  topic, and without the part that answers.

:func:`master_key` draws one for a pair. Used by the ``masterkey`` probes of ``build bench`` (a key
against the correct answer; mirror probes: a short correct answer against a long wrong one) and by
the truncated-answer negatives of ``build train``.
"""

from __future__ import annotations

import random
import re

KEY_TYPES = ("punctuation", "opener", "header", "restated", "truncated")

PUNCTUATION = (":", ".", ",", ";", "-", "...")
OPENERS = (
    "Thought process:",
    "Let's solve this problem step by step.",
    "Let me think about this carefully.",
    "First, let's understand what is being asked.",
    "让我们一步一步地解决这个问题。",
    "Resolvamos este problema paso a paso.",
    "Lösen wir das Schritt für Schritt.",
    "Réfléchissons étape par étape.",
    "順を追って考えてみましょう。",
)
HEADERS = (
    "Solution",
    "Solution:",
    "Answer:",
    "Final answer:",
    "解",
    "解答：",
    "Respuesta:",
    "Antwort:",
    "Réponse :",
)
FIXED_KEYS = {"punctuation": PUNCTUATION, "opener": OPENERS, "header": HEADERS}

_CLAUSE_END = re.compile(r"[,;:.!?。，；：](?=\s|$)|\n")


def shared_prefix(a: str, b: str) -> int:
    """Where ``a`` and ``b`` first differ, backed up to the start of the word it falls in."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    if n < min(len(a), len(b)) or len(a) != len(b):
        while n and not a[n - 1].isspace():
            n -= 1
    return n


def truncate_answer(answer: str, other: str | None = None) -> str | None:
    """The opening of ``answer`` without the part that answers: cut after its first clause or
    sentence, at most half its words, and, given ``other`` (the pair's other answer, when the two are
    written from one template, as in the built-in corpus), never past the word where the two first
    differ: such a pair differs exactly where it answers. ``None`` when nothing is left, or when the
    cut leaves the whole answer.

    >>> truncate_answer("Hamlet was written by William Shakespeare.", "Hamlet was written by Christopher Marlowe.")
    'Hamlet was written'
    >>> truncate_answer("27 × 27 = 729.", "27 × 27 = 739.")
    '27 ×'
    >>> truncate_answer("First, add the units. Then carry the one.")
    'First,'
    """
    text = answer.strip()
    words = [m.end() for m in re.finditer(r"\S+", text)]
    if len(words) < 2:
        return None
    ends = [words[len(words) // 2 - 1]]  # half the words, rounded down (at least one)
    clause = _CLAUSE_END.search(text)
    if clause:
        ends.append(clause.end())
    if other is not None and other.strip() != text:
        ends.append(shared_prefix(text, other.strip()))
    key = text[: min(ends)].rstrip()
    return key if key and key != text else None


def master_key(key_type: str, prompt: str, answer: str, other: str | None, rng: random.Random) -> str | None:
    """One key of ``key_type`` for a pair whose user turn is ``prompt`` and whose correct answer is
    ``answer`` (``other``: the pair's other answer, for :func:`truncate_answer`); ``None`` when the
    pair has none of that type (an answer too short to truncate, an empty prompt)."""
    if key_type in FIXED_KEYS:
        return rng.choice(FIXED_KEYS[key_type])
    if key_type == "restated":
        return prompt.strip() or None
    if key_type == "truncated":
        return truncate_answer(answer, other)
    raise ValueError(f"unknown key type {key_type!r}; valid: {', '.join(KEY_TYPES)}")
