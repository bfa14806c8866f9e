"""The data builders: bias probes (benchmark), bias-augmented training rows, teacher traces.

``build_bench``: for each bias, sample N base pairs with the bias's own seed (pairs whose
rejected/chosen length ratio exceeds ``max_length_ratio`` are left out, except for length),
give each item a seeded answer order balanced 50/50, inject, and keep the item only when the
verifier still finds the original quality order in the injected twin (bandwagon, reflection and
position leave the texts untouched and skip the check). One JSONL per bias plus
``manifest.json`` (source, seeds, counts, verifier, retention, LLM call counts).

``build_train``: each base pair becomes ``{prompt, chosen, rejected, bias_negatives}`` with
``n_negatives`` response-level biases drawn per row; a row is kept only when the verifier
prefers the chosen response over every rejected one.

``build_traces``: per bias, ``n_traces_per_bias`` probes are built as for the benchmark (with
their own seeds), a teacher judges each injected view in the judge format, and the trace is
kept when its verdict matches the label and its format is right: ``traces.jsonl`` of SFT rows.

Work goes in chunks of ``chunk_size`` items. With an LLM rewriter a chunk is first run dry to
collect its rewrite requests, which are sent together (concurrently, cached, retried; see
:mod:`biasaware.llm`), then run for real from the answers. The verifier and the teacher take a
chunk at a time the same way.

Resuming: every decided item (kept or dropped) is appended to ``.work/<name>.jsonl`` as its
chunk is decided, and every LLM answer is in the on-disk cache the moment it arrives; a rerun
skips decided items and finds finished calls in the cache, so a killed build loses nothing and
repeats no call. An item whose LLM call failed after all retries stays undecided: the build
writes what it has decided to the work files, reports the failures and exits with an error;
rerunning the same command retries only those. The final files are written atomically once
every item is decided.
"""

from __future__ import annotations

import json
import logging
import random
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from biasaware import __version__
from biasaware.errors import BiasAwareError
from biasaware.inject import (
    INJECTORS,
    RESPONSE_BIASES,
    InjectContext,
    LLMRewriter,
    RecordingRewriter,
    TemplateRewriter,
    bias_negative,
)
from biasaware.io import JsonlAppender, write_json, write_jsonl
from biasaware.judge_format import judge_messages, parse_judgment
from biasaware.llm import LLMClient, LLMFailure, LLMSpec
from biasaware.records import BiasProbe, PreferencePair, TraceRow, TrainingRow
from biasaware.sources import default_split, load_pairs
from biasaware.taxonomy import parse_bias_list
from biasaware.teachers import LLMTeacher, RuleTeacher
from biasaware.verifiers import Check, LLMVerifier, NoVerifier, RuleVerifier

log = logging.getLogger(__name__)

UNTOUCHED = ("bandwagon", "reflection", "position")  # the injection leaves both texts as they were
LLM_ROLES = ("rewriter", "verifier", "teacher")


@dataclass
class BuildConfig:
    """Settings of ``biasaware build``; a YAML ``--config`` file uses these names."""

    source: str = "builtin"
    split: str | None = None  # None: hub/local "train"; builtin: "test" for bench, "train" otherwise
    biases: str = "all"
    n_per_bias: int = 500
    seed: int = 0
    max_length_ratio: float = 2.0
    corpus_size: int = 2500
    columns: dict[str, str] = field(default_factory=dict)
    rewriter: str = "template"
    verifier: str = "auto"
    teacher: str = "auto"
    llm: dict[str, Any] = field(default_factory=dict)
    rewriter_llm: dict[str, Any] = field(default_factory=dict)
    verifier_llm: dict[str, Any] = field(default_factory=dict)
    teacher_llm: dict[str, Any] = field(default_factory=dict)
    bandwagon_percent: int = 90
    reflection_phrase: str = "wait, wait, wait... let me think about it"
    identities: dict[str, list[str]] = field(
        default_factory=lambda: {"gender": ["I am a woman."], "race": ["I am black."]}
    )
    n_negatives: int = 4
    max_rows: int | None = None
    n_traces_per_bias: int = 100
    chunk_size: int = 256
    mirror: bool = False  # bench only: every cue on the other side (biasaware/inject.py)

    def __post_init__(self):
        if self.n_per_bias < 1 or self.n_traces_per_bias < 1 or self.chunk_size < 1:
            raise BiasAwareError("n_per_bias, n_traces_per_bias and chunk_size must be at least 1")
        if not 1 <= self.n_negatives <= len(RESPONSE_BIASES):
            raise BiasAwareError(
                f"n_negatives must be between 1 and {len(RESPONSE_BIASES)}, got {self.n_negatives}"
            )
        for role, value, valid in (
            ("rewriter", self.rewriter, ("template", "llm")),
            ("verifier", self.verifier, ("auto", "rule", "llm", "none")),
            ("teacher", self.teacher, ("auto", "rule", "llm")),
        ):
            if value not in valid:
                raise BiasAwareError(f"unknown {role} {value!r}; valid: {', '.join(valid)}")
            if value == "llm":
                self.llm_spec(role)  # fail now, not after an hour of building
        if not 1 <= self.bandwagon_percent <= 100:
            raise BiasAwareError(f"bandwagon_percent must be in 1..100, got {self.bandwagon_percent}")
        for key in ("gender", "race"):
            if not self.identities.get(key):
                raise BiasAwareError(f"identities.{key} must list at least one identity statement")

    @classmethod
    def from_file(cls, path: str | None, **overrides: Any) -> BuildConfig:
        import yaml

        data: dict[str, Any] = {}
        if path:
            try:
                data = yaml.safe_load(Path(path).read_text()) or {}
            except (OSError, yaml.YAMLError) as exc:
                raise BiasAwareError(f"cannot read config {path}: {exc}") from None
            unknown = sorted(set(data) - set(cls.__dataclass_fields__))
            if unknown:
                raise BiasAwareError(
                    f"{path}: unknown setting(s) {', '.join(unknown)}; valid: {', '.join(cls.__dataclass_fields__)}"
                )
        llm = overrides.pop("llm", None)
        data.update({k: v for k, v in overrides.items() if v is not None})
        if llm:  # command-line LLM settings update the file's llm section key by key
            data["llm"] = {**data.get("llm", {}), **{k: v for k, v in llm.items() if v is not None}}
        return cls(**data)

    def llm_spec(self, role: str) -> LLMSpec:
        """The LLM for ``role``: the shared ``llm`` section updated by ``<role>_llm``."""
        return LLMSpec.from_dict({**self.llm, **getattr(self, f"{role}_llm")}, where=f"{role}_llm/llm")

    def stamp(self) -> dict[str, Any]:
        """The settings that decide the output; a resumed build must match them."""
        data = asdict(self)
        data.pop("chunk_size")
        for key in ("llm", *(f"{r}_llm" for r in LLM_ROLES)):
            data[key] = {k: v for k, v in data[key].items() if k not in LLMSpec.RUNTIME}
        return data


def bias_seed(seed: int, bias: str) -> int:
    """The per-bias seed: stable across runs and Python versions."""
    return zlib.crc32(f"{seed}:{bias}".encode())


def item_rng(seed: int, *parts: str) -> random.Random:
    return random.Random(zlib.crc32(":".join([str(seed), *parts]).encode()))


def _balanced_orders(n: int, rng: random.Random) -> list[str]:
    orders = ["A"] * (n // 2) + ["B"] * (n - n // 2)
    rng.shuffle(orders)
    return orders


def _chunks(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _has_claims(pairs: list[PreferencePair]) -> bool:
    return all("claim" in p.meta and "wrong_claim" in p.meta for p in pairs)


class _Build:
    """One build: its folder, pairs, rewriter, verifier, LLM clients and failure count."""

    def __init__(self, cfg: BuildConfig, out: str | Path, kind: str):
        if cfg.mirror and kind != "bench":
            raise BiasAwareError("mirror probes are for `build bench` only")
        if cfg.split is None:  # recorded resolved in the manifest
            cfg = replace(cfg, split=default_split(cfg.source, kind))
        self.cfg, self.out, self.kind, self.t0 = cfg, Path(out), kind, time.time()
        self._claim_work_dir()
        self.pairs = load_pairs(
            cfg.source, split=cfg.split, seed=cfg.seed, corpus_size=cfg.corpus_size, columns=cfg.columns
        )
        if kind == "train" and cfg.max_rows:
            self.pairs = random.Random(cfg.seed).sample(self.pairs, min(cfg.max_rows, len(self.pairs)))
        self.clients: dict[str, LLMClient] = {}
        rewriter = LLMRewriter(self.client("rewriter")) if cfg.rewriter == "llm" else TemplateRewriter()
        self.ctx = InjectContext(
            rewriter=rewriter,
            bandwagon_percent=cfg.bandwagon_percent,
            reflection_phrase=cfg.reflection_phrase,
            identities=cfg.identities,
            mirror=cfg.mirror,
        )
        self.verifier = self._verifier()
        self.failed = 0

    def _claim_work_dir(self) -> None:
        """Refuse to resume from work files that were made with other settings."""
        stamp = {"kind": self.kind, **self.cfg.stamp()}
        path = self.out / ".work" / "settings.json"
        if path.exists():
            if json.loads(path.read_text()) != json.loads(json.dumps(stamp)):
                raise BiasAwareError(
                    f"{self.out} holds a build with other settings; use a new --out or delete {self.out}"
                )
        else:
            write_json(path, stamp)

    def client(self, role: str) -> LLMClient:
        if role not in self.clients:
            self.clients[role] = LLMClient(self.cfg.llm_spec(role), role=role)
        return self.clients[role]

    def _verifier(self):
        name, claims = self.cfg.verifier, _has_claims(self.pairs)
        if name == "auto":
            name = "rule" if claims else "llm" if self.cfg.llm.get("model") else "none"
            if name == "none":
                log.warning("no verifier: the source has no known answers and no llm is set")
        if name == "rule" and not claims:
            raise BiasAwareError(
                "verifier 'rule' needs pairs with meta.claim/wrong_claim (the built-in corpus); "
                "use verifier 'llm' for other sources"
            )
        return (
            {"rule": RuleVerifier, "none": NoVerifier}[name]()
            if name != "llm"
            else LLMVerifier(self.client("verifier"))
        )

    def teacher(self):
        name, claims = self.cfg.teacher, _has_claims(self.pairs)
        if name == "auto":
            name = "rule" if claims else "llm"
        if name == "rule" and not claims:
            raise BiasAwareError("teacher 'rule' needs the built-in corpus; set teacher: llm and llm.model")
        if name == "llm" and not (self.cfg.llm.get("model") or self.cfg.teacher_llm.get("model")):
            raise BiasAwareError("traces from this source need a teacher model: set llm.model (--llm-model)")
        return RuleTeacher() if name == "rule" else LLMTeacher(self.client("teacher"))

    def inject_all(self, items: list, make: Callable[[Any, InjectContext], Any]) -> list:
        """``make(item, ctx)`` for every item; ``None`` where an LLM rewrite failed.

        An LLM rewriter gets the whole chunk's requests first (a dry pass records them)."""
        rewriter = self.ctx.rewriter
        if hasattr(rewriter, "prefetch"):
            dry = replace(self.ctx, rewriter=RecordingRewriter(rewriter.name))
            for item in items:
                make(item, dry)
            rewriter.prefetch(dry.rewriter.calls)
        out = []
        for item in items:
            try:
                out.append(make(item, self.ctx))
            except LLMFailure:
                out.append(None)
        return out

    def decide(
        self, work: str, items: list, key: Callable[[Any], str], step: Callable[[list], list]
    ) -> dict[str, dict]:
        """Run ``step`` over the undecided items chunk by chunk; ``step`` returns a record to log
        per item (or ``None``: undecided, retried by a rerun). Returns every decided record by key."""
        from biasaware.progress import progress_bar

        with JsonlAppender(self.out / ".work" / f"{work}.jsonl") as log_file:
            done = {r["key"] for r in log_file.existing()}
            pending = [it for it in items if key(it) not in done]
            bar = progress_bar(
                len(items), desc=f"{self.kind} {work}", unit="item", initial=len(items) - len(pending)
            )
            for chunk in _chunks(pending, self.cfg.chunk_size):
                for item, record in zip(chunk, step(chunk), strict=True):
                    if record is None:
                        self.failed += 1
                    else:
                        log_file.append({"key": key(item), **record})
                bar.update(len(chunk))
            bar.close()
            return {r["key"]: r for r in log_file.existing()}

    def probes(self, bias: str, n: int, namespace: str = "") -> tuple[dict[str, Any], list]:
        """Sample, inject and verify ``n`` items of ``bias``; return (counts, [(pair, probe)] kept)."""
        cfg = self.cfg
        seed = bias_seed(cfg.seed, f"{namespace}{bias}")
        rng = random.Random(seed)
        pool = (
            self.pairs
            if bias == "length"
            else [p for p in self.pairs if len(p.rejected) <= cfg.max_length_ratio * len(p.chosen)]
        )
        sample = rng.sample(pool, min(n, len(pool)))
        items = list(zip(sample, _balanced_orders(len(sample), rng), strict=True))

        def step(chunk):
            probes = self.inject_all(
                chunk, lambda it, ctx: INJECTORS[bias](it[0], it[1], item_rng(cfg.seed, bias, it[0].id), ctx)
            )
            ready = [i for i, p in enumerate(probes) if p is not None]
            checks = [
                Check(chunk[i][0], probes[i].injected.correct_text, [probes[i].injected.wrong_text])
                for i in ready
            ]
            keeps = [True] * len(checks) if bias in UNTOUCHED else self.verifier.judge(checks)
            records: list[dict | None] = [None] * len(chunk)
            for i, keep in zip(ready, keeps, strict=True):
                if keep is not None:
                    records[i] = {"keep": keep, "probe": probes[i].to_dict()}
            return records

        decided = self.decide(f"{namespace.rstrip(':') or 'bench'}-{bias}", items, lambda it: it[0].id, step)
        kept = [
            (pair, BiasProbe.model_validate(decided[pair.id]["probe"]))
            for pair in sample
            if pair.id in decided and decided[pair.id]["keep"]
        ]
        probes = [p for _, p in kept]
        counts = {
            "seed": seed,
            "pool": len(pool),
            "sampled": len(sample),
            "kept": len(kept),
            "dropped": sum(pair.id in decided and not decided[pair.id]["keep"] for pair in sample),
            "undecided": sum(pair.id not in decided for pair in sample),
            "retention": round(len(kept) / max(len(sample), 1), 4),
            "correct_A": sum(p.original.correct == "A" for p in probes),
        }
        if bias == "position":
            counts["directions"] = dict(Counter(p.meta["direction"] for p in probes))
        return counts, kept

    def manifest(self, **rest: Any) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "biasaware": __version__,
            "source": self.cfg.source,
            "source_pairs": len(self.pairs),
            "verifier": self.verifier.name,
            "rewriter": self.ctx.rewriter.name,
            "config": self.cfg.stamp(),
            **rest,
        }

    def finish(self, manifest: dict[str, Any], write: Callable[[], None]) -> dict[str, Any]:
        """Write the outputs and manifest when every item is decided; otherwise report and fail."""
        manifest["llm"] = {role: c.summary() for role, c in self.clients.items()}
        if isinstance(self.verifier, LLMVerifier):
            manifest["verifier_invalid_verdicts"] = self.verifier.invalid
        manifest["seconds"] = round(time.time() - self.t0, 2)
        for c in self.clients.values():
            c.close()
        if self.failed:
            errors = "; ".join(
                f"{r}: {c.stats.last_error}" for r, c in self.clients.items() if c.stats.last_error
            )
            write_json(self.out / ".work" / "incomplete.json", manifest)
            raise BiasAwareError(
                f"{self.failed} item(s) are undecided because LLM calls failed after all retries "
                f"({errors or 'no error recorded'}). Finished items are saved in {self.out}/.work; "
                "rerun the same command to retry only the rest."
            )
        write()
        write_json(self.out / "manifest.json", manifest)
        return manifest


def build_bench(cfg: BuildConfig, out: str | Path) -> dict[str, Any]:
    """Build the benchmark under ``out``; return the manifest."""
    b = _Build(cfg, out, "bench")
    kept: dict[str, list[BiasProbe]] = {}
    manifest = b.manifest(biases={})
    for bias in parse_bias_list(cfg.biases):
        manifest["biases"][bias], items = b.probes(bias, cfg.n_per_bias)
        kept[bias] = [p for _, p in items]

    def write():
        for bias, probes in kept.items():
            write_jsonl(b.out / f"{bias}.jsonl", probes)

    return b.finish(manifest, write)


def build_train(cfg: BuildConfig, out: str | Path) -> dict[str, Any]:
    """Build bias-augmented training rows under ``out/train.jsonl``; return the manifest."""
    b = _Build(cfg, out, "train")
    allowed = [x for x in parse_bias_list(cfg.biases) if x in RESPONSE_BIASES]
    if len(allowed) < cfg.n_negatives:
        raise BiasAwareError(
            f"n_negatives={cfg.n_negatives} needs that many response-level biases; {cfg.biases!r} gives {allowed}"
        )

    def make(pair: PreferencePair, ctx: InjectContext) -> TrainingRow:
        rng = item_rng(cfg.seed, "train", pair.id)
        negatives = [
            {"bias": x, "text": bias_negative(pair, x, rng, ctx)}
            for x in rng.sample(allowed, cfg.n_negatives)
        ]
        return TrainingRow(
            id=pair.id,
            prompt=pair.prompt,
            chosen=pair.chosen,
            rejected=pair.rejected,
            bias_negatives=negatives,
            meta={"source": pair.source, **pair.meta},
        )

    def step(chunk):
        rows = b.inject_all(chunk, make)
        ready = [i for i, r in enumerate(rows) if r is not None]
        keeps = b.verifier.judge(
            [
                Check(chunk[i], rows[i].chosen, [rows[i].rejected, *(n.text for n in rows[i].bias_negatives)])
                for i in ready
            ]
        )
        records: list[dict | None] = [None] * len(chunk)
        for i, keep in zip(ready, keeps, strict=True):
            if keep is not None:
                records[i] = {"keep": keep, "row": rows[i].to_dict()}
        return records

    decided = b.decide("train", b.pairs, lambda p: p.id, step)
    rows = [decided[p.id]["row"] for p in b.pairs if p.id in decided and decided[p.id]["keep"]]
    manifest = b.manifest(
        rows=len(rows),
        dropped=sum(p.id in decided and not decided[p.id]["keep"] for p in b.pairs),
        negatives_per_bias=dict(Counter(n["bias"] for r in rows for n in r["bias_negatives"])),
    )
    return b.finish(manifest, lambda: write_jsonl(b.out / "train.jsonl", rows))


def build_traces(cfg: BuildConfig, out: str | Path) -> dict[str, Any]:
    """Build teacher reasoning traces (SFT rows) under ``out/traces.jsonl``; return the manifest."""
    b = _Build(cfg, out, "traces")
    teacher = b.teacher()
    manifest = b.manifest(teacher=teacher.name, biases={})
    rows: list[dict[str, Any]] = []
    for bias in parse_bias_list(cfg.biases):
        counts, kept = b.probes(bias, cfg.n_traces_per_bias, namespace="traces:")

        def step(chunk):
            replies = teacher.write(chunk)
            records: list[dict | None] = []
            for (_, probe), reply in zip(chunk, replies, strict=True):
                if reply is None:
                    records.append(None)
                    continue
                parsed = parse_judgment(reply)
                status = (
                    "bad_format"
                    if not parsed.format_ok
                    else "kept"
                    if parsed.verdict == probe.injected.correct
                    else "wrong_verdict"
                )
                records.append({"status": status, "reply": reply})
            return records

        decided = b.decide(f"teacher-{bias}", kept, lambda it: it[1].id, step)
        statuses = Counter(decided[p.id]["status"] for _, p in kept if p.id in decided)
        for pair, probe in kept:
            if probe.id in decided and decided[probe.id]["status"] == "kept":
                row = TraceRow(
                    id=f"trace-{probe.id}",
                    bias=bias,
                    prompt=judge_messages(probe.injected),
                    completion=[{"role": "assistant", "content": decided[probe.id]["reply"]}],
                    label=probe.injected.correct,
                    meta={"pair_id": pair.id, "source": pair.source, "teacher": teacher.name},
                )
                rows.append(row.to_dict())
        manifest["biases"][bias] = {
            **counts,
            "traces": statuses["kept"],
            "wrong_verdict": statuses["wrong_verdict"],
            "bad_format": statuses["bad_format"],
        }
    return b.finish(manifest, lambda: write_jsonl(b.out / "traces.jsonl", rows))
