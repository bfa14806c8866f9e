"""The data builders: bias probes (benchmark) and bias-augmented training rows.

``build_bench``: for each bias, sample N base pairs with the bias's own seed (pairs whose
rejected/chosen length ratio exceeds ``max_length_ratio`` are left out, except for length),
give each item a seeded answer order balanced 50/50, inject, and keep the item only when the
verifier still finds the original quality order in the injected twin. One JSONL per bias plus
``manifest.json`` (source, seeds, counts, verifier, retention).

``build_train``: each base pair becomes ``{prompt, chosen, rejected, bias_negatives}`` with
``n_negatives`` response-level biases drawn per row; a row is kept only when the verifier
prefers the chosen response over every rejected one.

Resuming: every decided item (kept or dropped) is appended to ``.work/<name>.jsonl`` as it is
decided; a rerun skips decided items, so a killed build loses nothing and redoes nothing. The
final files are written atomically from the work files.

Verifiers: ``rule`` uses the claims the built-in corpus records in ``meta`` (order-free, no
model); ``none`` keeps everything and the manifest says so. ``auto`` picks ``rule`` when the
source carries claims. (An LLM verifier that judges both orders plugs in here; see README.)
"""

from __future__ import annotations

import logging
import random
import time
import zlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biasaware import __version__
from biasaware.corpus import claim_verdict
from biasaware.errors import BiasAwareError
from biasaware.inject import INJECTORS, RESPONSE_BIASES, InjectContext, TemplateRewriter, bias_negative
from biasaware.io import JsonlAppender, write_json, write_jsonl
from biasaware.records import BiasProbe, PreferencePair, TrainingRow
from biasaware.sources import load_pairs
from biasaware.taxonomy import parse_bias_list

log = logging.getLogger(__name__)


@dataclass
class BuildConfig:
    """Settings of ``biasaware build``; a YAML ``--config`` file uses these names."""

    source: str = "builtin"
    split: str = "train"
    biases: str = "all"
    n_per_bias: int = 500
    seed: int = 0
    max_length_ratio: float = 2.0
    corpus_size: int = 2500
    columns: dict[str, str] = field(default_factory=dict)
    rewriter: str = "template"
    verifier: str = "auto"
    bandwagon_percent: int = 90
    reflection_phrase: str = "wait, wait, wait... let me think about it"
    identities: dict[str, list[str]] = field(
        default_factory=lambda: {"gender": ["I am a woman."], "race": ["I am black."]}
    )
    n_negatives: int = 4
    max_rows: int | None = None

    def __post_init__(self):
        if self.n_per_bias < 1:
            raise BiasAwareError(f"n_per_bias must be at least 1, got {self.n_per_bias}")
        if not 1 <= self.n_negatives <= len(RESPONSE_BIASES):
            raise BiasAwareError(
                f"n_negatives must be between 1 and {len(RESPONSE_BIASES)}, got {self.n_negatives}"
            )
        if self.rewriter != "template":
            raise BiasAwareError(f"rewriter {self.rewriter!r} is not available yet; use 'template'")
        if self.verifier not in ("auto", "rule", "none"):
            raise BiasAwareError(f"unknown verifier {self.verifier!r}; valid: auto, rule, none")
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
        data.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**data)

    def context(self) -> InjectContext:
        return InjectContext(
            rewriter=TemplateRewriter(),
            bandwagon_percent=self.bandwagon_percent,
            reflection_phrase=self.reflection_phrase,
            identities=self.identities,
        )


def bias_seed(seed: int, bias: str) -> int:
    """The per-bias seed: stable across runs and Python versions."""
    return zlib.crc32(f"{seed}:{bias}".encode())


def item_rng(seed: int, *parts: str) -> random.Random:
    return random.Random(zlib.crc32(":".join([str(seed), *parts]).encode()))


def _verifier(name: str, pairs: list[PreferencePair]) -> str:
    if name != "auto":
        if name == "rule" and not all("claim" in p.meta for p in pairs[:50]):
            raise BiasAwareError(
                "verifier 'rule' needs pairs with meta.claim/wrong_claim (the built-in corpus)"
            )
        return name
    return "rule" if all("claim" in p.meta and "wrong_claim" in p.meta for p in pairs) else "none"


def _rule_prefers(pair: PreferencePair, better: str, *worse: str) -> bool:
    """The quality order holds: ``better`` states the true claim and every ``worse`` the false one."""
    claim, wrong = pair.meta["claim"], pair.meta["wrong_claim"]
    return claim_verdict(better, claim, wrong) == "correct" and all(
        claim_verdict(w, claim, wrong) == "wrong" for w in worse
    )


def _balanced_orders(n: int, rng: random.Random) -> list[str]:
    orders = ["A"] * (n // 2) + ["B"] * (n - n // 2)
    rng.shuffle(orders)
    return orders


def _length_ok(pair: PreferencePair, ratio: float) -> bool:
    return len(pair.rejected) <= ratio * len(pair.chosen)


def _claim_work_dir(out: Path, cfg: BuildConfig, kind: str) -> None:
    """Refuse to resume from work files that were made with other settings."""
    stamp = {"kind": kind, **asdict(cfg)}
    path = out / ".work" / "settings.json"
    if path.exists():
        import json

        if json.loads(path.read_text()) != json.loads(json.dumps(stamp)):
            raise BiasAwareError(f"{out} holds a build with other settings; use a new --out or delete {out}")
    else:
        write_json(path, stamp)


def _manifest(
    kind: str, cfg: BuildConfig, pairs: list, verifier: str, ctx: InjectContext, **rest
) -> dict[str, Any]:
    return {
        "kind": kind,
        "biasaware": __version__,
        "source": cfg.source,
        "source_pairs": len(pairs),
        "verifier": verifier,
        "rewriter": ctx.rewriter.name,
        "config": asdict(cfg),
        **rest,
    }


def build_bench(cfg: BuildConfig, out: str | Path) -> dict[str, Any]:
    """Build the benchmark under ``out``; return the manifest."""
    out, t0 = Path(out), time.time()
    _claim_work_dir(out, cfg, "bench")
    biases = parse_bias_list(cfg.biases)
    pairs = load_pairs(
        cfg.source, split=cfg.split, seed=cfg.seed, corpus_size=cfg.corpus_size, columns=cfg.columns
    )
    verifier = _verifier(cfg.verifier, pairs)
    ctx = cfg.context()
    manifest = _manifest("bench", cfg, pairs, verifier, ctx, biases={})
    for bias in biases:
        seed = bias_seed(cfg.seed, bias)
        rng = random.Random(seed)
        pool = pairs if bias == "length" else [p for p in pairs if _length_ok(p, cfg.max_length_ratio)]
        sample = rng.sample(pool, min(cfg.n_per_bias, len(pool)))
        orders = _balanced_orders(len(sample), rng)
        work = out / ".work" / f"{bias}.jsonl"
        with JsonlAppender(work) as log_file:
            done = {r["pair_id"] for r in log_file.existing()}
            for pair, order in zip(sample, orders, strict=True):
                if pair.id in done:
                    continue
                probe = INJECTORS[bias](pair, order, item_rng(cfg.seed, bias, pair.id), ctx)
                keep = (
                    verifier == "none"
                    or bias in ("bandwagon", "reflection", "position")
                    or _rule_prefers(pair, probe.injected.correct_text, probe.injected.wrong_text)
                )
                log_file.append({"pair_id": pair.id, "keep": keep, "probe": probe.to_dict()})
            decided = {r["pair_id"]: r for r in log_file.existing()}
        kept = [BiasProbe.model_validate(decided[p.id]["probe"]) for p in sample if decided[p.id]["keep"]]
        write_jsonl(out / f"{bias}.jsonl", kept)
        manifest["biases"][bias] = {
            "seed": seed,
            "pool": len(pool),
            "sampled": len(sample),
            "kept": len(kept),
            "dropped": len(sample) - len(kept),
            "retention": round(len(kept) / max(len(sample), 1), 4),
            "correct_A": sum(p.original.correct == "A" for p in kept),
            **(
                {"directions": dict(Counter(p.meta["direction"] for p in kept))} if bias == "position" else {}
            ),
        }
    manifest["seconds"] = round(time.time() - t0, 2)
    write_json(out / "manifest.json", manifest)
    return manifest


def build_train(cfg: BuildConfig, out: str | Path) -> dict[str, Any]:
    """Build bias-augmented training rows under ``out/train.jsonl``; return the manifest."""
    out, t0 = Path(out), time.time()
    _claim_work_dir(out, cfg, "train")
    pairs = load_pairs(
        cfg.source, split=cfg.split, seed=cfg.seed, corpus_size=cfg.corpus_size, columns=cfg.columns
    )
    if cfg.max_rows:
        pairs = random.Random(cfg.seed).sample(pairs, min(cfg.max_rows, len(pairs)))
    verifier = _verifier(cfg.verifier, pairs)
    ctx = cfg.context()
    allowed = [b for b in parse_bias_list(cfg.biases) if b in RESPONSE_BIASES]
    if len(allowed) < cfg.n_negatives:
        raise BiasAwareError(
            f"n_negatives={cfg.n_negatives} needs that many response-level biases; "
            f"{cfg.biases!r} gives {allowed}"
        )
    with JsonlAppender(out / ".work" / "train.jsonl") as log_file:
        done = {r["pair_id"] for r in log_file.existing()}
        for pair in pairs:
            if pair.id in done:
                continue
            rng = item_rng(cfg.seed, "train", pair.id)
            negatives = [
                {"bias": b, "text": bias_negative(pair, b, rng, ctx)}
                for b in rng.sample(allowed, cfg.n_negatives)
            ]
            row = TrainingRow(
                id=pair.id,
                prompt=pair.prompt,
                chosen=pair.chosen,
                rejected=pair.rejected,
                bias_negatives=negatives,
                meta={"source": pair.source, **pair.meta},
            )
            keep = verifier == "none" or _rule_prefers(
                pair, row.chosen, row.rejected, *(n["text"] for n in negatives)
            )
            log_file.append({"pair_id": pair.id, "keep": keep, "row": row.to_dict()})
        decided = {r["pair_id"]: r for r in log_file.existing()}
    rows = [decided[p.id]["row"] for p in pairs if decided[p.id]["keep"]]
    write_jsonl(out / "train.jsonl", rows)
    manifest = _manifest(
        "train",
        cfg,
        pairs,
        verifier,
        ctx,
        rows=len(rows),
        dropped=len(pairs) - len(rows),
        negatives_per_bias=dict(Counter(n["bias"] for r in rows for n in r["bias_negatives"])),
        seconds=round(time.time() - t0, 2),
    )
    write_json(out / "manifest.json", manifest)
    return manifest
