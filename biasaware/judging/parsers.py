"""Verdict parsers, one per judge output format: text in, ``A`` | ``B`` | ``tie`` | ``invalid`` out.

Every parser reads a reply the way its format ends (prometheus-eval once matched its own
template in the output and returned 5 for everything), never raises, and calls anything
ambiguous ``invalid``: no verdict marker, markers naming different answers, a verdict that only
prose would give ("A better answer is B"), or text after the final marker where the format says
the marker ends the reply. Within those rules each parser accepts the variants its native tool
accepts: case, an optional colon, trailing whitespace and punctuation, "Response N" where the
format numbers its responses.

==============  ================================================================================
format          what decides
==============  ================================================================================
``default``     ``<answer>A</answer>`` ending the reply (:mod:`biasaware.judging.judge_format`)
``mtbench``     ``[[A]]`` / ``[[B]]`` / ``[[C]]`` (tie), any case; markers naming two answers: invalid
``judgelm``     the first line holds two scores ``s1 s2`` (or ``s1, s2``), or the first two lines
                are ``Assistant 1: s1`` and ``Assistant 2: s2``; higher wins, equal is a tie
``prometheus``  ``[RESULT] A`` / ``[RESULT]: (B)`` / ``[RESULT] Response A`` ending the reply
``autoj``       "final decision is Response 1 / Response 2 / Tie" (or "Final decision: ..."), every
                such marker naming the same
``selene``      ``**Result:** A`` (bold optional, the colon required, "Response B" allowed) ending
                the reply; a "Result:" marker anywhere naming the other answer: invalid
``llmbar``      "Output (a)" / "Output (b)": every mention names the same output, or (reasoning
                that names both) every line that is an output alone names the same one
``direct``      the reply opens with the verdict: ``A``, ``(B)``, ``Response A``, ``Answer: B``,
                ``Output (a)``; a letter that starts a sentence ("A better answer ...") is not one
==============  ================================================================================

Linear time: end-anchored patterns run on the reply's last :data:`TAIL` characters, and every
pattern that scans a whole reply starts with a literal marker and has bounded gaps, so no input
makes a regular expression backtrack over the reply (``bench/parsers.py`` times 10k and 100k
adversarial characters per parser).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from biasaware.judging.judge_format import parse_judgment

TAIL = 400  # characters at the end of a reply where an end-anchored verdict is looked for
_CLOSE = r"[\s.!*\"'`]{0,12}\Z"  # what may follow a final verdict: whitespace, punctuation, bold


def _text(reply: object) -> str | None:
    return reply if isinstance(reply, str) else None


def _tail(text: str) -> str:
    return text.rstrip()[-TAIL:]


def _one(letters: list[str]) -> str | None:
    """The single verdict all markers name (upper case), or ``None``."""
    found = {x.upper() for x in letters}
    return found.pop() if len(found) == 1 else None


def parse_default(reply: object) -> str:
    return parse_judgment(reply).verdict


_MT = re.compile(r"\[\[[ \t]{0,3}([ABCabc])[ \t]{0,3}\]\]")


def parse_mtbench(reply: object) -> str:
    """
    >>> parse_mtbench("A is more accurate. Final verdict: [[A]]")
    'A'
    >>> parse_mtbench("[[A]] or [[B]]? I pick [[B]]")
    'invalid'
    """
    letter = _one(_MT.findall(_text(reply) or ""))
    if letter is None:
        return "invalid"
    return "tie" if letter == "C" else letter


_NUM = r"(10(?:\.0+)?|\d(?:\.\d+)?)"
_JUDGELM = re.compile(rf"[ \t]{{0,8}}{_NUM}(?:[ \t]{{1,8}}|[ \t]{{0,8}},[ \t]{{0,8}}){_NUM}[ \t.]{{0,8}}")
_JUDGELM_LINE = re.compile(
    rf"[ \t*]*Assistant[ \t]*([12])[ \t*]*:[ \t*]*{_NUM}(?:[ \t]*/[ \t]*10)?[ \t.]*", re.I
)


def parse_judgelm(reply: object) -> str:
    """
    >>> parse_judgelm("8 6\\nAssistant 1 is more precise.")
    'A'
    >>> parse_judgelm("The scores are 8 and 6.")
    'invalid'
    """
    text = (_text(reply) or "").lstrip()
    first = text.split("\n", 1)[0].rstrip()
    m = _JUDGELM.fullmatch(first) if len(first) <= 40 else None
    if m:
        s1, s2 = float(m.group(1)), float(m.group(2))
    else:  # "Assistant 1: 8" and "Assistant 2: 6" as the first two non-empty lines
        lines = [line for line in text.split("\n", 8)[:8] if line.strip()][:2]
        pair = [_JUDGELM_LINE.fullmatch(line.rstrip()) if len(line) <= 60 else None for line in lines]
        if len(pair) < 2 or not all(pair) or [p.group(1) for p in pair] != ["1", "2"]:
            return "invalid"
        s1, s2 = float(pair[0].group(2)), float(pair[1].group(2))
    return "A" if s1 > s2 else "B" if s2 > s1 else "tie"


_PROM_MARK = r"\[RESULT\]\**[ \t]{0,3}:?[ \t]{0,3}\**(?:Response[ \t]{0,3})?\(?([AB])\)?(?![a-z])"
# every "[RESULT] X" counts as a mention, glued or not ("[RESULT] AResult: B"): more ambiguity, never less
_PROM = re.compile(r"\[RESULT\]\**[ \t]{0,3}:?[ \t]{0,3}\**(?:Response[ \t]{0,3})?\(?([AB])", re.I)
_PROM_END = re.compile(_PROM_MARK + _CLOSE, re.I)


def parse_prometheus(reply: object) -> str:
    """
    >>> parse_prometheus("Feedback: B misses the point. [RESULT] A")
    'A'
    >>> parse_prometheus("[RESULT] A\\nActually [RESULT] B is better, more text")
    'invalid'
    """
    text = _text(reply) or ""
    end = _PROM_END.search(_tail(text))
    if not end or _one(_PROM.findall(text)) is None:
        return "invalid"
    return end.group(1).upper()


_AUTOJ = re.compile(
    r"final[ \t]{1,3}decision(?:[ \t]{1,3}is)?[ \t]{0,3}:?[ \t]{0,3}\**[ \t]{0,3}(response[ \t]{0,3}[12](?!\d)|tie\b)",
    re.I,
)


def parse_autoj(reply: object) -> str:
    """
    >>> parse_autoj("... So, the final decision is Response 2.")
    'B'
    """
    found = {re.sub(r"\s+", "", f).lower() for f in _AUTOJ.findall(_text(reply) or "")}
    if len(found) != 1:
        return "invalid"
    return {"response1": "A", "response2": "B", "tie": "tie"}[found.pop()]


# "Result" with its colon (inside or outside the bold): "As a result a careful check" is prose
_SELENE_MARK = (
    r"(?i:result)[ \t]{0,3}(?:\*\*)?[ \t]{0,3}:[ \t]{0,3}(?:\*\*)?[ \t]{0,3}\**[ \t]{0,3}"
    r"(?:(?i:response)[ \t]{0,3})?([AB])(?![a-z])"
)
_SELENE = re.compile(_SELENE_MARK.removesuffix("(?![a-z])"))  # mentions: glued ones too
_SELENE_END = re.compile(_SELENE_MARK + _CLOSE)


def parse_selene(reply: object) -> str:
    """
    >>> parse_selene("**Reasoning:** B is wrong.\\n\\n**Result:** A")
    'A'
    """
    text = _text(reply) or ""
    end = _SELENE_END.search(_tail(text))
    if not end or _one(_SELENE.findall(text)) is None:
        return "invalid"
    return end.group(1)


_LLMBAR = re.compile(r"output[ \t]{0,3}\([ \t]{0,2}([ab])[ \t]{0,2}\)", re.I)
_LLMBAR_LINE = re.compile(
    r"[\s\"'*#>-]{0,12}(?:(?:final[ \t]+)?(?:answer|verdict|choice)[ \t]*:[ \t]*)?\**[ \t]*"
    r"output[ \t]{0,3}\([ \t]{0,2}([ab])[ \t]{0,2}\)" + r"[\s.!*\"'`]{0,12}",
    re.I,
)


def parse_llmbar(reply: object) -> str:
    """
    >>> parse_llmbar("Output (b)")
    'B'
    >>> parse_llmbar("Output (a) is better than Output (b).")
    'invalid'
    """
    text = _text(reply) or ""
    letter = _one(_LLMBAR.findall(text))
    if letter is None and "\n" in text.strip():  # both named: the lines that are one output alone decide
        lines = [line for line in text.split("\n") if len(line) <= 80]
        letter = _one([m.group(1) for m in map(_LLMBAR_LINE.fullmatch, lines) if m])
    return letter.upper() if letter else "invalid"


_DIRECT = re.compile(
    r"[\s\"'*#>\[(]{0,12}(?:(?:response|answer|output|verdict|choice)[ \t]{0,3}:?[ \t]{0,3})?"
    r"(?:\(([ABab])\)|(?-i:([AB])))"  # a bare letter is upper case ("a" is a word)
    # what may follow the letter: the end, closing punctuation, a line break, or "is better", "wins",
    # "because" ("A's reasoning", "A/B testing", "A is wrong" are prose, not verdicts)
    r"(?=[ \t]*\Z|[ \t]*[.,:;!)\]*\"][^\w'/]|[ \t]*[.,:;!)\]*\"]?[ \t]*\Z|[ \t]*\n|"
    r"[ \t]+(?:is[ \t]+(?:better|the[ \t]+better|best|preferable)|wins|because)\b)",
    re.I,
)


def parse_direct(reply: object) -> str:
    """
    >>> parse_direct(" B")
    'B'
    >>> parse_direct("A better answer is B.")
    'invalid'
    """
    m = _DIRECT.match(_text(reply) or "")
    if not m:
        return "invalid"
    return (m.group(1) or m.group(2)).upper()


def parse_rule(name: str) -> str:
    """The rule of a format's parser in words: its row of the module docstring's table (a release's
    card states it, for users without biasaware)."""
    rows = __doc__.split("==============  " + "=" * 80)[2]
    found, lines = False, []
    for line in rows.splitlines():
        head = re.match(r"``(\w+)``\s+(.*)", line)
        if head:
            if found:
                break
            found = head.group(1) == ("direct" if name == "verdict" else name)
            if found:
                lines.append(head.group(2))
        elif found and line.strip():
            lines.append(line.strip())
    if not lines:
        raise KeyError(name)
    rule = re.sub(r" \(:mod:`[\w.]+`\)", "", " ".join(lines)).replace("``", "`")
    return rule + "; a reply that this rule cannot read is invalid"


PARSERS: dict[str, Callable[[object], str]] = {
    "default": parse_default,
    "mtbench": parse_mtbench,
    "judgelm": parse_judgelm,
    "prometheus": parse_prometheus,
    "autoj": parse_autoj,
    "selene": parse_selene,
    "llmbar": parse_llmbar,
    "direct": parse_direct,
    "verdict": parse_direct,
}
