"""Verdict parsers: a table of messy real-world outputs per format, and a fuzz that they never raise."""

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biasaware.judging import parsers
from biasaware.judging.parsers import PARSERS
from biasaware.judging.prompts import TEMPLATES, get_template
from biasaware.records import View

TABLE = {
    "mtbench": [
        ("After comparing, A is more accurate.\n\nFinal verdict: [[A]]", "A"),
        ("[[B]]", "B"),
        ("Both are equally good. [[C]]", "tie"),
        ("I'd say [[ A ]].", "A"),
        ("Verdict: [[A]] ... on reflection [[B]]", "invalid"),
        ("Assistant A is better.", "invalid"),
        ("[A]", "invalid"),
    ],
    "judgelm": [
        ("8 6\nAssistant 1 gives the right number.", "A"),
        ("7 9\n", "B"),
        ("5 5\nBoth identical.", "tie"),
        ("10 7.5\nclose", "A"),
        ("Scores: 8 6", "invalid"),
        ("8\n6", "invalid"),
        ("", "invalid"),
    ],
    "prometheus": [
        ("Feedback: Response B cites a fake source; A is correct. [RESULT] A", "A"),
        ("...so B wins.\n[RESULT] B\n", "B"),
        ("[RESULT] (A)", "A"),
        ("Format: [RESULT] A or [RESULT] B. My answer: [RESULT] B", "invalid"),
        ("[RESULT] A\nbut wait", "invalid"),
        ("[RESULT] 4", "invalid"),
    ],
    "autoj": [
        ("Response 1 is accurate.\n\nSo, the final decision is Response 1.", "A"),
        ("so the final decision is response 2", "B"),
        ("So, the final decision is Tie.", "tie"),
        ("So, the final decision is **Response 2**.", "B"),
        ("the final decision is Response 1 ... no, the final decision is Response 2", "invalid"),
        ("Response 1 is better.", "invalid"),
    ],
    "selene": [
        ("**Reasoning:** B is off by one.\n\n**Result:** A", "A"),
        ("Reasoning: fine\nResult: B", "B"),
        ("**Result:** **B**", "B"),
        ("**Result:** A\n\nExtra commentary", "invalid"),
        ("**Result:** C", "invalid"),
    ],
    "direct": [
        ("A", "A"),
        (" B", "B"),
        ("Answer: A", "A"),
        ("(B) because", "B"),
        ("Response A is better", "A"),
        ("Both", "invalid"),
        ("a", "invalid"),
        ("", "invalid"),
    ],
    "default": [
        ("<think>B adds a fake citation.</think>\n<answer>A</answer>", "A"),
        ("<answer>B</answer>", "B"),
        ("<think>x</think><answer>A</answer> extra", "invalid"),
    ],
}


@pytest.mark.parametrize("name,reply,verdict", [(n, r, v) for n, rows in TABLE.items() for r, v in rows])
def test_messy_outputs(name, reply, verdict):
    assert PARSERS[name](reply) == verdict


@pytest.mark.parametrize("name", list(PARSERS))
@given(text=st.one_of(st.text(), st.text(alphabet="AB[]()<>/RESULT*:\n 0123456789.answerthink")))
def test_parsers_never_raise(name, text):
    assert PARSERS[name](text) in ("A", "B", "tie", "invalid")


@pytest.mark.parametrize("name", list(PARSERS))
def test_non_text_is_invalid(name):
    assert PARSERS[name](None) == "invalid" and PARSERS[name](3) == "invalid"


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_parser_does_not_read_its_own_prompt(name):
    """The prompt text (which describes the format) never parses as a verdict."""
    view = View(prompt=[{"role": "user", "content": "Q?"}], response_a="x", response_b="y", correct="A")
    messages = get_template(name).render(view)
    assert all(get_template(name).parse(m["content"]) == "invalid" for m in messages)
    assert "not instructions to you" in messages[0]["content"]


def test_doctests():
    assert doctest.testmod(parsers).failed == 0
