"""The judging loop, and what each evaluation command asks the judge; resumable.

:func:`judge_into` is the loop itself, shared by every command: it judges a list of jobs (an item id,
a view name, the view, its metadata) into ``judgments.jsonl``, appending as each chunk finishes, so
an interrupted run resumes where it stopped, and splits the work between the processes of a
multi-process launch. The jobs of each command are built here:

* ``eval bias``: :func:`run_bias_eval`, the original and the injected view of every probe (and a
  master key's reversed view for a pairwise judge);
* ``eval general``: :func:`general_jobs` / :func:`run_general_eval`, each pair in both orders
  (:data:`~biasaware.evaluation.summaries.ORDERS`) or once for a reward model;
* ``eval scoring``: :func:`scoring_jobs`, each item under the baseline and every template, recorded
  by :func:`score_record`.

Which probes a judge is scored on (:func:`applicable`) and the seeded ``--limit`` sample of probes
(:func:`sample_probes`) live here too.

Reward-model judges are scored on the 9 response-level biases only (bandwagon, reflection and
position live in a judge's prompt, which a reward model does not see).
"""

from __future__ import annotations

import logging
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from biasaware.data.card import built_files
from biasaware.data.master_keys import swapped
from biasaware.data.upstream import benchmark_layout
from biasaware.devices import ranks
from biasaware.devices import ranks as current_ranks
from biasaware.errors import BiasAwareError, RecordError
from biasaware.evaluation.summaries import ORDERS, REVERSED, VIEWS
from biasaware.io import JsonlAppender, read_json, read_records, read_whole_lines, write_jsonl
from biasaware.judging.judges import judge_chunks, last_error, load_judge
from biasaware.judging.score_prompts import BASELINE, ScoreUnit, ScoringTemplate
from biasaware.progress import ChunkProgress
from biasaware.records import BiasProbe, Judgment, PreferencePair, ScoreJudgment, ScoringItem, View
from biasaware.taxonomy import BIASES

log = logging.getLogger(__name__)

SHARDS = ".shards"  # per-process judgment files of a multi-process run, merged by process 0

SCORED_KINDS = ("reward", "pointwise")  # one response at a time: no answer order, no note about the pair

NOTHING_TO_JUDGE = (
    "no probes to judge (a reward model or pointwise judge skips bandwagon, reflection and position)"
)


def applicable(probes: list[BiasProbe], kind: str) -> list[BiasProbe]:
    """The probes a judge of this kind can be scored on: a judge that sees one response at a time
    (a reward model, a pointwise judge) has no answer order and no note about the pair, so
    bandwagon, reflection and position do not apply to it."""
    if kind not in SCORED_KINDS:
        return probes
    return [p for p in probes if BIASES[p.bias].applies_to_reward_model]


def unscored(probes: list[BiasProbe], kind: str) -> list[str]:
    """The biases of ``probes`` that a judge of this kind is not scored on (:func:`applicable`)."""
    return sorted({p.bias for p in probes} - {p.bias for p in applicable(probes, kind)})


def _shards(path: Path) -> list[Path]:
    return sorted((path.parent / SHARDS).glob(f"{path.stem}.rank*.jsonl"))


def pairwise_record(judge_name: str, item_id: str, view_name: str, view: View, meta: dict, output) -> dict:
    """The :class:`~biasaware.records.Judgment` of one pairwise view, as a JSON-ready dict."""
    return Judgment(
        probe_id=item_id,
        view=view_name,
        judge=judge_name,
        raw=output.raw,
        verdict=output.verdict,
        scores=output.scores,
        correct=view.correct,
        meta=meta,
    ).to_dict()


def judge_into(
    judge,
    jobs: list[tuple[str, str, Any, dict]],
    path: Path,
    *,
    chunk: int | None = None,
    ranks=None,
    record=pairwise_record,
    limit: tuple[int, str, str] | None = None,
) -> Path:
    """Judge ``(item id, view name, view, meta)`` jobs into a judgments JSONL, skipping those already
    there (resume); chunk by chunk, each record flushed as it is written and forced to the disk once a
    chunk, so a kill loses the chunk in progress only (judged again whole on resume: the same batches,
    hence the same numbers; an endpoint's answers are in its cache) and a power cut at most one more. Calls that failed after their
    retries leave their views unjudged and raise at the end (a rerun judges only those).

    Several processes (``torchrun`` / ``accelerate launch``, see :func:`biasaware.devices.ranks`)
    share the work: the jobs are cut into the same chunks whatever the number of processes, and
    process r judges chunks r, r + N, ... into its own resumable shard (``.shards/`` beside
    ``path``). Process 0 then merges every shard into ``path`` in job order, so the file equals
    a single-process run's (the same chunks give the same batches, hence the same numbers). A
    single process ends with the same merge, which also puts a resumed run's lines in job order.

    A judge whose output is a function of the view alone (``judges_views_alone``: the forward judges,
    which do not sample) judges each distinct view once, and its output is recorded for every job of
    that view (:func:`_distinct`; the chunks are cut from the distinct views).

    Progress: a bar over the views to judge, moved per batch within a chunk
    (:class:`~biasaware.progress.ChunkProgress`); a run estimated to take more than ten minutes says
    so early, and what ``--limit`` would cut it to (``limit``: the count the option sets now, what it
    counts, and the option's name).

    ``record(judge name, item id, view name, payload, meta, output)`` writes one output's row: a
    pairwise :class:`~biasaware.records.Judgment` by default, a pointwise score for ``eval scoring``
    (its payloads are :class:`~biasaware.judging.score_prompts.ScoreUnit` and its judge a
    :class:`~biasaware.judging.judges.Scorer`).
    """

    r = ranks or current_ranks()
    size = chunk or getattr(judge, "chunk_views", 64)
    path = Path(path)
    unique, twins = _distinct(jobs) if getattr(judge, "judges_views_alone", False) else (jobs, {})
    own = path if r.world == 1 else path.parent / SHARDS / f"{path.stem}.rank{r.rank}-of-{r.world}.jsonl"
    keys = ("judge", "probe_id", "view")  # what a resumed run reads of each judgment there
    earlier = [row for p in {path, *_shards(path)} - {own} for row in read_whole_lines(p, keys)]
    failed = judged = shared = 0
    overlong: list[tuple[int, int]] = []
    t0 = time.time()
    with JsonlAppender(own, keys) as out:
        existing = earlier + out.existing()
        if any(row["judge"] != judge.name for row in existing):
            raise BiasAwareError(f"{path} holds judgments of another judge; use a new --out")
        done = {(row["probe_id"], row["view"]) for row in existing}
        chunks = [unique[i : i + size] for i in range(0, len(unique), size)][r.rank :: r.world]

        def open_jobs(job):  # the job and its twins not judged yet
            return [t for t in [job, *twins.get((job[0], job[1]), ())] if (t[0], t[1]) not in done]

        todo = [c for c in ([j for j in c if open_jobs(j)] for c in chunks) if c]
        desc = f"judge {Path(judge.name).name}" + (f" (rank 0 of {r.world})" if r.world > 1 else "")
        log.info(
            "%s: %d views to judge (%d already in %s), chunks of %d, process %d of %d",
            judge.name,
            sum(map(len, todo)),
            len(done),
            path,
            size,
            r.rank,
            r.world,
        )
        bar = ChunkProgress(sum(map(len, todo)), desc=desc, enabled=r.main, limit=limit)
        views = [[j[2] for j in c] for c in todo]
        for part, outputs in zip(todo, judge_chunks(judge, views, bar.chunk), strict=True):
            for job, o in zip(part, outputs, strict=True):
                for item_id, view_name, view, meta in open_jobs(job):
                    if o is None:
                        failed += 1
                        continue
                    if o.overlong:
                        meta = {**meta, "overlong": {"tokens": o.overlong[0], "limit": o.overlong[1]}}
                        overlong.append(o.overlong)
                    if getattr(o, "cut", 0):  # texts cut to fit the context: counted per view
                        meta = {**meta, "cut": o.cut}
                    out.append(record(judge.name, item_id, view_name, view, meta, o), sync=False)
                    judged += 1
                    shared += (item_id, view_name) != (job[0], job[1])
            out.sync()  # once a chunk
        bar.close()
    seconds = time.time() - t0
    if r.main:
        read = judged - len(overlong)  # an overlong view is recorded (invalid), not judged
        rate = f" ({read / seconds:.1f} views/s)" if read and seconds > 0 else ""
        over = f"; {len(overlong)} over the judge's context, not judged" if overlong else ""
        resumed = f"; {len(done)} found in {path.parent} from an earlier run" if done else ""
        where = f" on rank 0 of {r.world}" if r.world > 1 else ""
        hits = (judge.summary() if hasattr(judge, "summary") else {}).get("cache_hits") or 0
        cached = f"; {hits} replies from the reply cache (no call made)" if hits else ""
        once = f"; {shared} the same as another view, judged once" if shared else ""
        line = (
            f"[judge] {Path(judge.name).name}: {read} views judged in {seconds:.1f}s{rate}{where}{once}{cached}"
            f"{over}{resumed}"
        )
        print(line, flush=True)
    if overlong:
        endpoint = getattr(getattr(judge, "spec", None), "backend", None) == "openai"
        _too_long(
            overlong, judged, judge.name, own if not done else None, getattr(judge, "kind", ""), endpoint
        )
    r.barrier()
    if r.main:
        _merge(jobs, path)
    if failed:
        cause = last_error(judge)
        saved = f"the rest are saved in {path}" if judged or done else "no view was judged yet"
        raise BiasAwareError(
            f"{failed} view(s) are unjudged because calls failed after all retries"
            f"{f' (last error: {cause})' if cause else ''}; {saved}: rerun the same command to judge only those"
        )
    return path


def _distinct(jobs: list[tuple[str, str, Any, dict]]) -> tuple[list, dict[tuple[str, str], list]]:
    """The jobs whose view is the first of its content, and per such job the later jobs of the same view
    (its twins: a standard probe and its mirror share their original view), for a judge whose output is
    a function of the view alone (``judges_views_alone``: no sampling), so each distinct view is judged
    once and its output recorded for every job of it."""
    first: dict[str, tuple[str, str]] = {}
    unique, twins = [], defaultdict(list)
    for job in jobs:
        view = job[2]
        key = view.model_dump_json() if hasattr(view, "model_dump_json") else repr(view)
        if key in first:
            twins[first[key]].append(job)
        else:
            first[key] = (job[0], job[1])
            unique.append(job)
    return unique, dict(twins)


NEARLY_ALL_OVERLONG = 0.9


class Unreadable(BiasAwareError):
    """Nearly every view did not fit the judge's context (:func:`_too_long`): the run measures nothing, and
    what it wrote is removed so that the corrected command, with other settings, starts clean."""


def _too_long(
    overlong: list[tuple[int, int]],
    judged: int,
    name: str,
    fresh: Path | None,
    judged_kind: str = "",
    endpoint: bool = False,
) -> None:
    """Views that did not fit the judge's context: a warning with the count and the limit; an
    error when nearly all of them (``NEARLY_ALL_OVERLONG``) did, since such a run measures nothing
    (the judgments of this run are removed when they are all it wrote, so the corrected command
    starts clean). ``endpoint``: the context is the served model's, which no setting here changes."""
    limit = min(lim for _, lim in overlong)
    longest = max(tokens for tokens, _ in overlong)
    text = (
        f"{len(overlong)} of {judged} views did not fit the context of {Path(name).name} ({limit} tokens; the "
        f"longest has {longest})"
    )
    if judged >= 10 and len(overlong) >= NEARLY_ALL_OVERLONG * judged:
        if fresh is not None:
            fresh.unlink(missing_ok=True)
        if endpoint:
            raise Unreadable(
                f"{text}: the endpoint refused nearly every input as longer than its model's context. Serve "
                "a model with a longer context, or judge inputs that fit (a smaller --limit does not shorten them)"
            )
        raise Unreadable(
            f"{text}: the judge cannot read these inputs. Check --mode (a reward model read as a text "
            "generator?), --template, or raise --max-length if the model allows it"
            + ("; or cut them to fit with --truncation longest_first" if judged_kind == "reward" else "")
        )
    print(f"[judge] warning: {text}: not judged, counted as invalid", flush=True)


def _merge(jobs: list[tuple[str, str, View, dict]], path: Path) -> None:
    """Every judgment of ``path`` and its shards, once each, in job order (others after, as found)."""
    shards = _shards(path)
    rows: dict[tuple[str, str], dict] = {}
    for p in [path, *shards]:
        for row in read_whole_lines(p):
            rows.setdefault((row["probe_id"], row["view"]), row)
    order = {(j[0], j[1]): i for i, j in enumerate(jobs)}
    ranked = sorted(rows.items(), key=lambda kv: (order.get(kv[0], len(order)),))
    write_jsonl(path, [row for _, row in ranked])
    for p in shards:
        p.unlink()
    if shards and not any((path.parent / SHARDS).iterdir()):
        (path.parent / SHARDS).rmdir()


# ------------------------------------------------------------------- what each command asks the judge
BENCHMARK_GROUPS = ("difficulty", "domain", "response_model")
"""A pair's meta that a benchmark's own figures group by, kept in ``eval general``'s judgments: RM-Bench's style
level (hard, normal, easy) and domain (chat, code, math, safety-...), which its figures average; JudgeBench's
response model, whose file its figures are of."""


def general_jobs(pairs: list[PreferencePair], kind: str) -> list[tuple[str, str, View, dict]]:
    names = ["pair"] if kind == "reward" else list(ORDERS)
    jobs = []
    for p in pairs:
        for name in names:
            correct = ORDERS.get(name, "A")
            a, b = (p.chosen, p.rejected) if correct == "A" else (p.rejected, p.chosen)
            view = View(prompt=p.prompt, response_a=a, response_b=b, correct=correct)
            meta = {"subset": p.meta.get("subset", "all"), "words": [len(a.split()), len(b.split())]}
            meta |= {key: p.meta[key] for key in BENCHMARK_GROUPS if p.meta.get(key)}
            jobs.append((p.id, name, view, meta))
    return jobs


def run_general_eval(
    judge, pairs: list[PreferencePair], out: str | Path, *, chunk: int | None = None
) -> Path:
    jobs = general_jobs(pairs, judge.kind)
    return judge_into(
        judge, jobs, Path(out) / "judgments.jsonl", chunk=chunk, limit=(len(pairs), "pairs", "--limit")
    )


def scoring_jobs(items: list[ScoringItem], templates: list[ScoringTemplate], seed: int) -> list[tuple]:
    jobs = []
    for item in items:
        prompt = tuple(m.model_dump() for m in item.prompt)
        meta: dict[str, Any] = {"template": template_meta(BASELINE), "words": len(item.response.split())}
        if item.gold is not None:
            meta["gold"] = item.gold
        for t in templates:
            if t.reference is not None and str(t.reference) not in item.references:
                continue  # a generated reference the reviewer never accepted: this item skips ref-k
            unit = ScoreUnit(
                prompt,
                item.response,
                t,
                rubric=item.rubric,
                reference=item.references.get(str(t.reference)) if t.reference else None,
                key=item.id,
                seed=seed,
            )
            jobs.append((item.id, t.name, unit, {**meta, "template": template_meta(t)}))
    return jobs


def template_meta(t: ScoringTemplate) -> dict[str, Any]:
    return {"order": t.order, "ids": t.ids, "reference": t.reference, "scale": t.scale}


def score_record(judge_name: str, item_id: str, view_name: str, unit, meta: dict, output) -> dict:
    if output.overlong:
        meta = {**meta, "overlong": {"tokens": output.overlong[0], "limit": output.overlong[1]}}
    return ScoreJudgment(
        probe_id=item_id, view=view_name, judge=judge_name, raw=output.raw, score=output.score, meta=meta
    ).to_dict()


def run_bias_eval(
    judge,
    probes: list[BiasProbe],
    out: str | Path,
    *,
    chunk: int | None = None,
    ranks=None,
    limit_flag: str = "--limit",
) -> Path:
    """Judge both views of every probe into ``out/judgments.jsonl`` (resumable); return its path.
    ``limit_flag`` is the option that sets the probes per bias and side (named in a long run's
    estimate)."""

    skipped = unscored(probes, judge.kind)
    if skipped and (ranks or current_ranks()).main:
        print(
            f"[judge] a {judge.kind} judge is not scored on {', '.join(skipped)}: these biases live in a judge's "
            "prompt, and it sees one response at a time",
            flush=True,
        )
    jobs = []
    per_group: dict[tuple[str, bool], int] = {}
    for p in applicable(probes, judge.kind):
        group = (p.bias, bool(p.meta.get("mirror")))
        per_group[group] = per_group.get(group, 0) + 1
        meta = {"bias": p.bias, "category": p.category}
        if judge.kind in SCORED_KINDS:
            meta["scored"] = True  # scores are per response (not P(A) vs P(B)): the score shift applies
        for key in ("direction", "mirror", "key_type"):
            if key in p.meta:
                meta[key] = p.meta[key]
        jobs += [(p.id, v, getattr(p, v), meta) for v in VIEWS]
        if p.bias == "masterkey" and not p.meta.get("mirror") and judge.kind not in SCORED_KINDS:
            # the reward rule asks both orders (reward_function(against="reference")); a scored judge has no order
            jobs.append((p.id, REVERSED, swapped(p.injected), meta))
    if not jobs:
        raise BiasAwareError(NOTHING_TO_JUDGE)
    limit = (max(per_group.values()), "probes per bias and side", limit_flag)
    return judge_into(judge, jobs, Path(out) / "judgments.jsonl", chunk=chunk, ranks=ranks, limit=limit)


def load_probes(
    data: str | Path, biases: list[str] | None = None, limit: int | None = None, seed: int = 0
) -> list[BiasProbe]:
    """The probes of ``data``; ``limit`` keeps a seeded sample of N per bias and side
    (:func:`sample_probes`). A built folder whose manifest names its files is first checked to be as its
    build left it (:func:`biasaware.data.card.built_files`: a split file deleted or emptied since is refused)."""
    if Path(data).name == "manifest.json" and Path(data).is_file():  # a build's record, not its probes
        raise BiasAwareError(f"{data} is a build's manifest; give the build folder, {Path(data).parent}")
    manifest = Path(data) / "manifest.json"
    if manifest.is_file():
        recorded = read_json(manifest, "build manifest")
        if isinstance(recorded, dict) and "outputs" in recorded:
            built_files(Path(data), recorded)
    try:
        probes = read_records(data, "probe")
    except RecordError:
        if layout := benchmark_layout(data):  # one line, not a missing field per row
            raise BiasAwareError(
                f"{data}: a general benchmark in the {layout} layout, not bias probes; `biasaware eval general "
                "--benchmark` judges it (`biasaware build bench` writes probes)"
            ) from None
        raise
    if biases:
        there = sorted({p.bias for p in probes}, key=list(BIASES).index)
        probes = [p for p in probes if p.bias in biases]
        if not probes:
            raise BiasAwareError(
                f"{data} has no probes of {', '.join(biases)} (it has: {', '.join(there) or 'none'})"
            )
    if limit:
        probes = sample_probes(probes, limit, seed)
    if not probes:
        raise BiasAwareError(f"{data}: no probes to evaluate")
    return probes


SAMPLE_RULE = (
    "per bias, its base pairs (meta.pair_id, else the probe id) in an order drawn by random.Random(f'{seed}:{bias}'), "
    "then the first N probes of each side (standard, mirror) in that order; kept in file order"
)


def sample_probes(probes: list[BiasProbe], limit: int, seed: int = 0) -> list[BiasProbe]:
    """A seeded sample of ``limit`` probes per bias and side (:data:`SAMPLE_RULE`). The draw is over
    base pairs, so a standard probe and its mirror (the same pair, the cue on the other side) are kept
    or left together; the same seed gives the same sample whatever the file's order."""

    def base(p: BiasProbe) -> str:
        return str(p.meta.get("pair_id") or p.id)

    pairs: dict[str, set[str]] = defaultdict(set)
    for p in probes:
        pairs[p.bias].add(base(p))
    rank = {}
    for bias, keys in pairs.items():
        for i, key in enumerate(random.Random(f"{seed}:{bias}").sample(sorted(keys), len(keys))):
            rank[bias, key] = i
    strata: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i, p in enumerate(probes):
        strata[p.bias, bool(p.meta.get("mirror"))].append(i)
    kept = sorted(
        i
        for members in strata.values()
        for i in sorted(members, key=lambda i: (rank[probes[i].bias, base(probes[i])], i))[:limit]
    )
    return [probes[i] for i in kept]


def start_judge(spec) -> Any:
    """``load_judge(spec)`` (a spec, or a judge resolved from one), announcing where it runs (one
    line, printed by process 0)."""

    judge = load_judge(spec)
    resolved = judge.resolved
    place = resolved.place
    where = f" on {place['device']} in {place['dtype']}" if place else f" via {resolved.spec.backend}"
    if ranks().main:
        print(f"[judge] {resolved.spec.name} ({resolved.spec.mode}){where}", flush=True)
    return judge
