"""``eval bias``: judge every probe in both views, then score, report and plot.

The orchestration of the evaluation modules, each owning one job: :mod:`~biasaware.evaluation.runner`
(the judging loop, resumable), :mod:`~biasaware.evaluation.resume` (fingerprints: a folder never
mixes judges or items), :mod:`~biasaware.evaluation.summaries` (scores from the judgments alone, which
is also what ``--rescore`` does: any number can be audited and recomputed under another policy
without a model), :mod:`~biasaware.evaluation.reports` (markdown and plots) and
:mod:`~biasaware.evaluation.compare` (runs against each other).

Two-sided: probes with ``meta.mirror`` carry the cue on the better answer; their flips are
over-corrections, the standard probes' flips the BSR (:func:`biasaware.evaluation.metrics.two_sided`).

Outputs: ``judgments.jsonl`` (per view), ``summary.json`` (per bias, per category, overall macro
and micro, both sides, the degenerate-judge check, position primacy/recency/consistency,
reward-model margins), ``report.md`` (shaped like JudgeBiasBench's Tables 4 and 5) and ``sensitivity.png`` /
``accuracy.png`` (:mod:`biasaware.evaluation.reports`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from biasaware.devices import ranks
from biasaware.errors import BiasAwareError, check_count, check_seed
from biasaware.evaluation.baselines import bias_baselines
from biasaware.evaluation.metrics import POLICIES
from biasaware.evaluation.plots import plot_report
from biasaware.evaluation.reports import markdown_report
from biasaware.evaluation.resume import input_records, judge_or_rescore, judge_policy, saved_summary
from biasaware.evaluation.runner import (
    NOTHING_TO_JUDGE,
    SAMPLE_RULE,
    SCORED_KINDS,
    applicable,
    load_probes,
    run_bias_eval,
    unscored,
)
from biasaware.evaluation.summaries import sample_record, summarize, verdicts_agree
from biasaware.io import check_out_folder, check_path, read_records, write_json
from biasaware.judging.judges import spec_of
from biasaware.records import BiasProbe
from biasaware.taxonomy import BIASES, parse_bias_list


def write_reports(judgments_path: Path, out: Path, policy: str, seed: int, extra: dict | None = None) -> dict:
    """Score ``judgments_path`` and write summary.json, report.md and the plots into ``out``."""
    judgments = read_records(judgments_path, "judgment")
    if not judgments:
        raise BiasAwareError(f"{judgments_path} holds no judgments; nothing to score")
    if "run" in (extra or {}):  # the judge's rule known: a rescore of edited verdicts is refused
        verdicts_agree(out, judgments, extra["run"].get("spec"))
    summary = summarize(judgments, policy, seed)
    summary.update(extra or {})
    summary["judgments"] = len(judgments)  # every line: a rescore of a file that lost one is refused
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "summary.json", summary)
    (out / "report.md").write_text(markdown_report(summary))
    plot_report(summary, out)
    return summary


def check_run_settings(out: Any, limit: Any, policy: Any) -> None:
    """``out``, ``limit`` and ``policy`` as ``eval bias`` takes them (from the command or the Python
    API), refused before anything is judged: a folder path, a whole number of at least 1 or none,
    one of the scoring policies."""

    check_out_folder(out)
    if limit is not None:
        check_count(limit, "limit", note=" (probes per bias and side), or none")
    if policy not in POLICIES:
        raise BiasAwareError(f"policy {policy!r}: one of {', '.join(POLICIES)}")


def evaluate_bias(
    spec,
    data: str | Path | None,
    out: str | Path,
    *,
    biases: list[str] | None = None,
    limit: int | None = None,
    policy: str = "symmetric",
    seed: int = 0,
    rescore: bool = False,
    limit_flag: str = "--limit",
    judge=None,
) -> dict[str, Any] | None:
    """``eval bias``: judge every probe of ``data`` with the judge ``spec`` describes into ``out``
    (or, with ``rescore``, only score ``out/judgments.jsonl`` again), then score and write the
    reports. In a multi-process launch every process judges its share; process 0 merges, writes
    and returns the summary, the others return ``None``. ``spec``: the judge's settings, or the
    judge already resolved from them (a command that judges twice resolves it once). ``judge``:
    the judge ``spec`` describes, already loaded (the Python API), else it is loaded here."""

    given, spec = spec, spec_of(spec)

    check_seed(seed, "seed")
    check_run_settings(out, limit, policy)
    if not rescore and (not isinstance(data, str | Path) or not str(data).strip()):
        raise BiasAwareError(f"data: the benchmark folder or file to judge; got {data!r:.80}")
    check_path(data, "data")
    if biases is not None:
        if not isinstance(biases, str) and not (
            isinstance(biases, list | tuple) and all(isinstance(b, str) for b in biases)
        ):
            raise BiasAwareError(
                f"biases: bias names or categories, as a list or a comma list; got {biases!r:.80}"
            )
        biases = parse_bias_list(
            biases if isinstance(biases, str) else list(biases)
        )  # unknown names are named
    out = Path(out)
    if data and not rescore and out.resolve() == Path(data).resolve():
        raise BiasAwareError(
            f"--out {out} is the benchmark folder {data}: judgments there would break it; write elsewhere"
        )

    loaded: list[list[BiasProbe]] = []

    def probes() -> list[BiasProbe]:
        found = load_probes(data, biases, limit, seed)
        loaded.append(found)
        if spec is not None and not applicable(found, spec.kind):  # refused before anything is written
            raise BiasAwareError(NOTHING_TO_JUDGE)
        return found

    run = partial(run_bias_eval, limit_flag=limit_flag)
    extra = judge_or_rescore(given, out, rescore, probes, run, target=data, command="eval bias", judge=judge)
    if not ranks().main:
        return None
    if loaded and spec.kind in SCORED_KINDS:  # the report names what was not scored
        extra["not_scored"] = unscored(loaded[0], spec.kind)
    applied = judge_policy(out, policy)
    if loaded:
        # the cue-only heuristics on the probes the judge was scored on (no model)
        extra["cue_baselines"] = bias_baselines(applicable(loaded[0], spec.kind), applied, seed)
        if limit:  # what --limit kept, so the sample can be named and drawn again
            extra["sample"] = sample_record(limit, seed, "probes per bias and side", SAMPLE_RULE, loaded[0])
    else:
        extra.update(input_records(out))
        # the biases the judge did not score (a reward model: those in the prompt), as the run found them in its
        # bench, which a rescore does not read
        earlier = (saved_summary(out) or {}).get("not_scored")
        if isinstance(earlier, list) and all(isinstance(b, str) and b in BIASES for b in earlier):
            extra["not_scored"] = earlier
    return write_reports(out / "judgments.jsonl", out, applied, seed, extra)
