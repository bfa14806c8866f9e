"""Verdict parsers, one per judge output format: text in, ``A`` | ``B`` | ``tie`` | ``invalid`` out.

Every parser reads a reply the way its format ends (prometheus-eval once matched its own
template in the output and returned 5 for everything), never raises, and calls anything
ambiguous ``invalid``: no verdict marker, markers naming different answers, or text after the
final marker where the format says the marker ends the reply.

==============  ================================================================================
format          what decides
==============  ================================================================================
``default``     ``<answer>A</answer>`` ending the reply (:mod:`biasaware.judging.judge_format`)
``mtbench``     the last ``[[A]]`` / ``[[B]]`` / ``[[C]]`` (tie); markers naming two answers: invalid
``judgelm``     the first line holds two scores ``s1 s2`` (its native order: scores, then the
                explanation); higher wins, equal is a tie
``prometheus``  ``[RESULT] A`` or ``[RESULT] B`` ending the reply
``autoj``       the last "final decision is Response 1 / Response 2 / Tie" (also "tie")
``selene``      ``**Result:** A`` or ``B`` (bold optional) ending the reply
``direct``      the reply's first letter-like token is A or B (answer-only judges)
==============  ================================================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable

from biasaware.judging.judge_format import parse_judgment


def _text(reply: object) -> str | None:
    return reply if isinstance(reply, str) else None


def parse_default(reply: object) -> str:
    return parse_judgment(reply).verdict


_MT = re.compile(r"\[\[\s*([ABC])\s*\]\]")


def parse_mtbench(reply: object) -> str:
    """
    >>> parse_mtbench("A is more accurate. Final verdict: [[A]]")
    'A'
    >>> parse_mtbench("[[A]] or [[B]]? I pick [[B]]")
    'invalid'
    """
    text = _text(reply)
    found = set(_MT.findall(text or ""))
    if len(found) != 1:
        return "invalid"
    letter = found.pop()
    return "tie" if letter == "C" else letter


_NUM = r"(10(?:\.0+)?|\d(?:\.\d+)?)"
_JUDGELM = re.compile(rf"\A\s*{_NUM}\s*[ ,/]\s*{_NUM}\s*(?:\n|\Z)")


def parse_judgelm(reply: object) -> str:
    """
    >>> parse_judgelm("8 6\\nAssistant 1 is more precise.")
    'A'
    >>> parse_judgelm("The scores are 8 and 6.")
    'invalid'
    """
    m = _JUDGELM.match(_text(reply) or "")
    if not m:
        return "invalid"
    s1, s2 = float(m.group(1)), float(m.group(2))
    return "A" if s1 > s2 else "B" if s2 > s1 else "tie"


_PROM = re.compile(r"\[RESULT\]\s*\(?([AB])\)?\s*\Z")


def parse_prometheus(reply: object) -> str:
    """
    >>> parse_prometheus("Feedback: B misses the point. [RESULT] A")
    'A'
    >>> parse_prometheus("[RESULT] A\\nActually [RESULT] B is better, more text")
    'invalid'
    """
    text = _text(reply) or ""
    m = _PROM.search(text)
    if not m or len(set(re.findall(r"\[RESULT\]\s*\(?([AB])\)?", text))) != 1:
        return "invalid"
    return m.group(1)


_AUTOJ = re.compile(r"final decision is:?\s*\**\s*(Response\s*1|Response\s*2|Tie)\b", re.IGNORECASE)


def parse_autoj(reply: object) -> str:
    """
    >>> parse_autoj("... So, the final decision is Response 2.")
    'B'
    """
    found = _AUTOJ.findall(_text(reply) or "")
    if not found:
        return "invalid"
    last = re.sub(r"\s+", " ", found[-1]).lower()
    if len({re.sub(r"\s+", " ", f).lower() for f in found}) > 1:
        return "invalid"
    return {"response 1": "A", "response 2": "B", "tie": "tie"}[last]


_SELENE = re.compile(r"\**Result:?\**:?\s*\**\s*([AB])\s*\**\s*\Z", re.IGNORECASE)


def parse_selene(reply: object) -> str:
    """
    >>> parse_selene("**Reasoning:** B is wrong.\\n\\n**Result:** A")
    'A'
    """
    text = _text(reply) or ""
    m = _SELENE.search(text)
    if not m or len({x.upper() for x in re.findall(r"Result:?\**:?\s*\**\s*([AB])\b", text, re.I)}) != 1:
        return "invalid"
    return m.group(1).upper()


_DIRECT = re.compile(r"\A[\s\"'*(\[]*(?:(?:Response|Answer|Output)\s*:?)?\s*\(?([AB])\b", re.IGNORECASE)


def parse_direct(reply: object) -> str:
    """
    >>> parse_direct(" B")
    'B'
    >>> parse_direct("Both are fine")
    'invalid'
    """
    m = _DIRECT.match(_text(reply) or "")
    return m.group(1).upper() if m and m.group(1) in "AB" else "invalid"


PARSERS: dict[str, Callable[[object], str]] = {
    "default": parse_default,
    "mtbench": parse_mtbench,
    "judgelm": parse_judgelm,
    "prometheus": parse_prometheus,
    "autoj": parse_autoj,
    "selene": parse_selene,
    "direct": parse_direct,
}
