"""The Python API: a judge in a few lines, in a script or a training loop (``docs/python-api.md``).

Every function here is a thin layer over what the ``biasaware`` command runs, so a figure from a
script equals the command's::

    import biasaware

    judge = biasaware.load_judge("runs/quickstart/ckpt/balanced")      # the mode is read from the folder
    judge.pair("Which is larger, 0.9 or 0.11?", "0.9", "0.11")          # Verdict(verdict='A', ...)
    judge.score("Which is larger, 0.9 or 0.11?", "0.9")                 # a reward model's scalar
    biasaware.build_bench("runs/bench", biases="length,authority", n_per_bias=20)
    summary = judge.evaluate("runs/bench", "runs/eval")                   # eval bias: BSR, over-correction
    biasaware.compare("runs/eval", "runs/eval-other")                     # eval compare

A judge's malformed reply is a verdict ``invalid`` (the parse rules of its prompt format), never a
guess; a text over the model's context is ``invalid`` too, with ``overlong`` set.

Each function imports what it calls inside itself, so ``import biasaware`` stays fast.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasaware.errors import BiasAwareError
from biasaware.folders import command
from biasaware.io import check_out_folder, check_path
from biasaware.records import View, chat_messages, text_problem

Prompt = str | list[dict[str, str]]


def messages(prompt: Prompt) -> list[dict[str, str]]:
    """A prompt as chat messages: a string is one user turn (:func:`biasaware.records.chat_messages`)."""
    return chat_messages(prompt)


def _response(text: Any, what: str = "a response") -> str:
    if not isinstance(text, str) or not text.strip():
        raise BiasAwareError(f"{what} is a non-empty string; got {text!r:.80}")
    problem = text_problem(text)
    if problem is not None:
        raise BiasAwareError(f"{what} {problem}; got {text!r:.80}")
    return text


def _items(items: Any, size: int, what: str) -> list:
    if isinstance(items, str | bytes | dict) or not hasattr(items, "__iter__"):
        raise BiasAwareError(f"items: a list of {what}; got {type(items).__name__} {items!r:.80}")
    items = list(items)
    for i, item in enumerate(items):
        if not isinstance(item, tuple | list) or len(item) != size:
            raise BiasAwareError(f"item {i}: each item is {what}; got {item!r:.80}")
    return items


def _at(i: int | None, check, *args: Any) -> Any:
    """``check(*args)`` for item ``i`` of a batch, its refusal naming the item (``None``: a batch of one,
    whose refusal needs no number)."""
    try:
        return check(*args)
    except BiasAwareError as exc:
        if i is None:
            raise
        raise BiasAwareError(f"item {i}: {exc}") from None


def _numbered(items: list) -> list[tuple[int | None, Any]]:
    """Each item with the number its refusal names (none in a batch of one)."""
    return [(i if len(items) > 1 else None, item) for i, item in enumerate(items)]


def _failed(judge: Any, calls: int) -> BiasAwareError:
    """``calls`` judge calls that failed after all retries, with the client's last error where it kept one
    (a refused connection, a missing key: the causes look alike otherwise)."""
    from biasaware.judging.judges import last_error

    cause = last_error(judge)
    return BiasAwareError(
        f"{calls} judge call(s) failed after all retries{f' (last error: {cause})' if cause else ''}"
    )


FLAG = re.compile(r"(?<![\w/.`-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def speaks_keywords(function):
    """The commands' refusals name their flags (``use a new --out``); raised through the Python API
    they name its keywords instead (``use a new `out```). A command line quoted in backticks (what
    to run next) is left as written. A call is a command's span: the folders it writes are held until it
    returns (:func:`biasaware.folders.command`)."""

    def keyword(match: re.Match) -> str:
        return f"`{match.group(1).replace('-', '_')}`"

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with command():
                return function(*args, **kwargs)
        except BiasAwareError as exc:
            parts = str(exc).split("`")
            said = "`".join(FLAG.sub(keyword, p) if i % 2 == 0 else p for i, p in enumerate(parts))
            exc.args = (said, *exc.args[1:])
            raise

    return wrapper


def _judge(judge: Any) -> Judge:
    if not isinstance(judge, Judge):
        raise BiasAwareError(f"expected a judge from biasaware.load_judge(...); got {type(judge).__name__}")
    return judge


@dataclass(frozen=True)
class Verdict:
    """A judge's decision on one pair: ``A``, ``B``, ``tie`` or ``invalid``; ``scores`` holds the
    two rewards (reward model), P(A) and P(B) (direct mode) or nothing (a generated reply)."""

    verdict: str
    raw: str
    scores: dict[str, float] | None = None
    overlong: tuple[int, int] | None = None


class Judge:
    """A loaded judge: its settings (:class:`~biasaware.judging.judges.JudgeSpec`) and its model."""

    def __init__(self, spec, judge):
        self.spec, self.impl = spec, judge

    @classmethod
    @speaks_keywords
    def load(cls, name: str, **settings: Any) -> Judge:
        """``name``: a built-in name, a local folder (a trained checkpoint), a hub name, or a model at
        ``base_url``. ``settings`` are ``eval``'s judge flags (``mode``, ``template``, ``device``,
        ``dtype``, ``batch_size``, ``max_tokens``, ``backend``, ``base_url``, ...); a mode left out is
        read from the folder (a sequence-classification model is a reward model)."""
        from biasaware.judging.judges import JudgeSpec, load_judge, unread_budget

        spec = JudgeSpec.create(name=os.fspath(name) if isinstance(name, os.PathLike) else name, **settings)
        unread_budget(
            spec.mode, [f"{k} {settings[k]}" for k in ("max_tokens", "max_batch_tokens") if settings.get(k)]
        )
        return cls(spec, load_judge(spec))  # resolved once (an unavailable device fails first)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def mode(self) -> str:
        return self.spec.mode

    def __repr__(self) -> str:
        return f"Judge({self.spec.name!r}, mode={self.spec.mode!r})"

    def pairs(self, items: list[tuple[Prompt, str, str]]) -> list[Verdict]:
        """Judge many ``(prompt, response_a, response_b)`` in batches."""
        views = [
            View(
                prompt=_at(i, messages, p),
                response_a=_at(i, _response, a, "response_a"),
                response_b=_at(i, _response, b, "response_b"),
                correct="A",
            )
            for i, (p, a, b) in _numbered(_items(items, 3, "(prompt, response_a, response_b)"))
        ]
        outputs = self.impl.judge(views) if views else []
        missing = sum(o is None for o in outputs)
        if missing:
            raise _failed(self.impl, missing)
        return [Verdict(o.verdict, o.raw, o.scores, o.overlong) for o in outputs]

    def pair(self, prompt: Prompt, response_a: str, response_b: str) -> Verdict:
        """Which of two responses to ``prompt`` is better."""
        return self.pairs([(prompt, response_a, response_b)])[0]

    def scores(self, items: list[tuple[Prompt, str]]) -> list[float | None]:
        """Score many ``(prompt, response)``: a reward model's scalar; a generative or direct judge's
        1-5 score under the rubric prompt (``None``: no readable score, or over the context)."""
        from biasaware.judging.score_prompts import ScoreUnit, ScoringTemplate

        template = ScoringTemplate()
        units = [
            ScoreUnit(tuple(_at(i, messages, p)), _at(i, _response, r), template)
            for i, (p, r) in _numbered(_items(items, 2, "(prompt, response)"))
        ]
        outputs = self.impl.score(units) if units else []
        missing = sum(o is None for o in outputs)
        if missing:
            raise _failed(self.impl, missing)
        return [o.score for o in outputs]

    def score(self, prompt: Prompt, response: str) -> float | None:
        """One response's score (see :meth:`scores`)."""
        return self.scores([(prompt, response)])[0]

    def evaluate(self, bench: str | Path, out: str | Path, **options: Any) -> dict[str, Any]:
        """``eval bias`` with this judge (see :func:`evaluate`)."""
        return evaluate(self, bench, out, **options)


def load_judge(name: str, **settings: Any) -> Judge:
    """:meth:`Judge.load`."""
    return Judge.load(name, **settings)


def judge_pair(judge: Judge, prompt: Prompt, response_a: str, response_b: str) -> Verdict:
    """:meth:`Judge.pair`."""
    return _judge(judge).pair(prompt, response_a, response_b)


def score_response(judge: Judge, prompt: Prompt, response: str) -> float | None:
    """:meth:`Judge.score`."""
    return _judge(judge).score(prompt, response)


@speaks_keywords
def build_bench(out: str | Path, **settings: Any) -> dict[str, Any]:
    """``build bench``: bias probes into ``out`` (resumable; returns the manifest). ``settings``
    are :class:`~biasaware.data.builders.BuildConfig`'s (``biases``, ``n_per_bias``, ``families``,
    ``direction``, ``source``, ``seed``, ...)."""
    from biasaware.data.builders import BuildConfig, build_bench

    return build_bench(BuildConfig.from_settings(settings, "build_bench()"), check_out_folder(out))


@speaks_keywords
def build_train(out: str | Path, **settings: Any) -> dict[str, Any]:
    """``build train``: bias-augmented training rows into ``out`` (``augment``: ``paper`` or
    ``balanced``; ``cues``: ``natural`` for cue-correlated pairs)."""
    from biasaware.data.builders import BuildConfig, build_train

    return build_train(BuildConfig.from_settings(settings, "build_train()"), check_out_folder(out))


@speaks_keywords
def evaluate(judge: Judge, bench: str | Path, out: str | Path, **options: Any) -> dict[str, Any]:
    """``eval bias``: judge both views of every probe of ``bench`` into ``out`` (resumable, the same
    files as the command) and return the summary: per bias, category and overall, Acc_ori, Acc_inj,
    BSR (standard probes), over-correction (mirror probes), intervals, the degenerate check and the
    cue-only baselines. ``options`` are the command's (:class:`biasaware.options.EvalBias`):
    ``biases``, ``limit`` (a seeded sample of that many probes per bias and side), ``policy``,
    ``seed`` and ``rescore``."""
    from biasaware.evaluation.evaluate import evaluate_bias
    from biasaware.options import EvalBias, keywords

    judge = _judge(judge)
    options = keywords(EvalBias, options, "evaluate()")
    return evaluate_bias(judge.spec, bench, check_out_folder(out), **options, judge=judge.impl)


@speaks_keywords
def preflight(judge: Judge, out: str | Path, **options: Any) -> dict[str, Any]:
    """``biasaware preflight``: build the fixed battery (once), judge it into ``out`` (resumable) and
    grade it; returns the result written to ``out/preflight.json`` (``outcome``, ``checks`` with the
    master-key check a :func:`biasaware.reward_function` reads, the judge's ``fingerprint``).
    ``options`` are the command's (:class:`biasaware.options.Preflight`): ``per_bias``,
    ``families``, ``seed``, ``fail_on``, ``scoring_pairs``, ``scoring_max_tokens`` and
    ``thresholds`` (a YAML or JSON file of overrides, or a mapping of them)."""
    from biasaware.evaluation.preflight import load_thresholds, run_preflight
    from biasaware.options import Preflight, keywords

    judge = _judge(judge)
    options = keywords(Preflight, options, "preflight()")
    thresholds = load_thresholds(options.pop("thresholds", None))
    return run_preflight(judge.spec, check_out_folder(out), thresholds=thresholds, **options)


@speaks_keywords
def compare(*runs: str | Path, **options: Any) -> dict[str, Any]:
    """``eval compare``: two ``eval bias`` folders on the same probes, per bias, with McNemar's exact
    test (runs without ``fingerprint.json`` only with ``by_id``). With ``baseline`` (one of the runs):
    two or more runs each against it, ``judges`` and ``master_keys`` tables
    (:func:`biasaware.evaluation.compare.compare_against`). Two generative study folders: the second
    against the first (or ``baseline``), seed by seed (:func:`biasaware.evaluation.seeds.studies_compared`).
    ``eval real`` folders: each against the first (or ``baseline``), set by set
    (:func:`biasaware.evaluation.compare.compare_real`). ``options`` are the command's (:class:`biasaware.options.EvalCompare`): ``baseline``, ``view``, ``by_id``."""
    from biasaware.evaluation.compare import comparison
    from biasaware.options import EvalCompare, keywords

    options = keywords(EvalCompare, options, "compare()")
    runs = tuple(options.pop("runs", None) or runs)  # compare(runs=[a, b]) as compare(a, b)
    if len(runs) == 1 and isinstance(runs[0], list | tuple):  # compare([a, b]) as compare(a, b)
        runs = tuple(runs[0])
    if len(runs) < 2:
        raise BiasAwareError(f"compare: give two runs, or two or more with baseline=; got {len(runs)}")
    wrong = [r for r in runs if not isinstance(r, str | os.PathLike)]
    if wrong:
        raise BiasAwareError(
            f"compare: runs are folders (str or Path); got {type(wrong[0]).__name__} {wrong[0]!r:.80}"
        )
    for run in (*runs, *([options["baseline"]] if options.get("baseline") is not None else [])):
        check_path(run, "compare: run")
    baseline = options.get("baseline")
    return comparison(
        [str(r) for r in runs],
        None if baseline is None else str(baseline),
        view=options.get("view"),
        by_id=bool(options.get("by_id", False)),
    )
