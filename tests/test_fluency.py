"""The fluency verifier (biasaware/data/fluency.py): the gap equals the language model's own loss on the written-in
tokens minus its loss on the original reply, computed here by transformers' labels; the rule keeps and drops by
the margin; a build records each probe's gap and refuses a margin that is not a number."""

from __future__ import annotations

import difflib

import pytest

from biasaware.data.builders import BuildConfig, build_bench
from biasaware.data.fluency import FluencyScorer, FluencyVerifier
from biasaware.data.verifiers import Check
from biasaware.errors import BiasAwareError
from biasaware.io import read_records
from biasaware.records import PreferencePair

PROMPT = [{"role": "user", "content": "How do I make tea?"}]
ORIGINAL = "Boil water. Pour it over the leaves. Steep for three minutes."
REWRITTEN = "Boil water. According to a 2021 study, pour it over the leaves. Steep for three minutes."


@pytest.fixture(scope="module")
def scorer(tiny_models):
    return FluencyScorer(str(tiny_models["causal"]), device="cpu", batch_size=2)


def _loss(scorer, reply: str, scored) -> float:
    """transformers' mean loss over the reply tokens ``scored`` picks (positions in the reply), the prompt as
    context: an independent computation of what the scorer measures."""
    import torch

    from biasaware.judging.models import chat_ids

    head = chat_ids(scorer.tokenizer, [PROMPT], add_generation_prompt=True)[0]
    ids = scorer.tokenizer(reply, add_special_tokens=False)["input_ids"]
    labels = [-100] * len(head) + [t if k in scored else -100 for k, t in enumerate(ids)]
    with torch.no_grad():
        out = scorer.model(input_ids=torch.tensor([head + ids]), labels=torch.tensor([labels]))
    return out.loss.item()


def test_the_gap_is_the_model_s_loss_on_the_written_in_tokens_minus_its_loss_on_the_original(scorer):
    tok = scorer.tokenizer
    old = tok(ORIGINAL, add_special_tokens=False)["input_ids"]
    new = tok(REWRITTEN, add_special_tokens=False)["input_ids"]
    changed = {
        j
        for op, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
        if op in ("insert", "replace")
        for j in range(j1, j2)
    }
    assert changed and len(changed) < len(new)
    expected = _loss(scorer, REWRITTEN, changed) - _loss(scorer, ORIGINAL, set(range(len(old))))
    assert scorer.gap(PROMPT, ORIGINAL, REWRITTEN) == pytest.approx(expected, abs=1e-4)
    # batched with replies of other lengths (padding), the same figures
    scorer.cache.clear()
    scorer.score([(PROMPT, "Short."), (PROMPT, REWRITTEN), (PROMPT, ORIGINAL), (PROMPT, ORIGINAL + " More.")])
    assert scorer.gap(PROMPT, ORIGINAL, REWRITTEN) == pytest.approx(expected, abs=1e-4)
    # nothing written in: no gap (an untouched text, a cut)
    assert scorer.gap(PROMPT, ORIGINAL, ORIGINAL + " ") is None
    assert scorer.gap(PROMPT, ORIGINAL, "Boil water. Steep for three minutes.") is None


class Scripted:
    """A scorer whose gaps are given: (original, rewritten) -> gap."""

    def __init__(self, gaps):
        self.gaps, self.scored = gaps, []

    def score(self, items):
        self.scored += items

    def gap(self, prompt, original, rewritten):
        return None if original == rewritten else self.gaps[(original, rewritten)]


def test_a_check_holds_when_every_rewrite_is_within_the_margin():
    pair = PreferencePair(id="p", source="t", prompt=PROMPT, chosen="good", rejected="bad")
    scorer = Scripted(
        {("good", "good!"): 0.4, ("bad", "bad!"): 1.5, ("bad", "bad?"): 0.9, ("good", "good?"): -2.0}
    )
    checks = [
        Check(pair, "good!", ["bad?"]),  # both within 1.0
        Check(pair, "good", ["bad!"]),  # the rejected rewrite over it
        Check(pair, "good?", ["bad", "bad?"]),  # a negative gap holds; an untouched text has none
        Check(pair, "good", ["bad"]),  # nothing written in: holds, no gap recorded
    ]
    assert FluencyVerifier(scorer, margin=1.0).judge(checks) == [True, False, True, True]
    assert [c.found.get("fluency_gap") for c in checks] == [0.9, 1.5, 0.9, None]
    # scored in one batch: only the rewritten texts and the texts they were written from
    assert [t for _, t in scorer.scored] == [
        "good",
        "good!",
        "bad",
        "bad?",
        "bad",
        "bad!",
        "good",
        "good?",
        "bad",
        "bad?",
    ]
    assert FluencyVerifier(scorer, margin=2.0).judge([Check(pair, "good", ["bad!"])]) == [True]


def test_a_fluency_build_records_each_probe_s_gap_and_drops_by_the_margin(tmp_path, tiny_models):
    base = {
        "n_per_bias": 3,
        "corpus_size": 60,
        "biases": "authority,length",
        "verifier": "fluency",
        "llm": {"model": str(tiny_models["causal"]), "device": "cpu"},
    }
    kept_all = build_bench(BuildConfig(**base, fluency_margin=1e9), tmp_path / "all")
    assert kept_all["verifier"] == "fluency" and kept_all["config"]["fluency_margin"] == 1e9
    gaps = [p.meta["fluency_gap"] for p in read_records(tmp_path / "all" / "authority.jsonl", "probe")]
    assert len(gaps) == 3
    # the same probes at a margin between their gaps: exactly those over it are dropped
    margin = sorted(gaps)[1]
    some = build_bench(BuildConfig(**base, fluency_margin=margin), tmp_path / "some")
    assert some["biases"]["authority"]["kept"] == sum(g <= margin for g in gaps)
    assert some["biases"]["authority"]["dropped"] == sum(g > margin for g in gaps)
    assert "fluency_margin" not in BuildConfig().stamp()  # the default: folders built before it resume
    with pytest.raises(BiasAwareError, match="a --fluency-margin over -1000.0"):  # every rewrite dropped
        build_bench(BuildConfig(**{**base, "biases": "authority"}, fluency_margin=-1e3), tmp_path / "none")
    assert not (tmp_path / "none" / ".work").exists()
    with pytest.raises(BiasAwareError, match="fluency_margin"):
        BuildConfig(fluency_margin=float("inf"))


def test_the_cli_refuses_a_margin_that_is_not_a_number_without_writing(tmp_path, capsys):
    from biasaware.cli import main

    out = tmp_path / "b"
    with pytest.raises(SystemExit) as stop:  # refused by the option's type, as every number flag's
        main(["build", "bench", "--out", str(out), "--verifier", "fluency", "--fluency-margin", "nan"])
    assert stop.value.code == 2
    assert "--fluency-margin: 'nan' is not a finite number" in capsys.readouterr().err and not out.exists()
