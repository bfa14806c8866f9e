"""A dataset card for a built folder, so that it stands alone: ``datasets.load_dataset(folder)``
reads every file as its own split, and the hub shows what the data is.

A build folder holds JSONL files (a bench: one per bias and side, e.g. ``length.jsonl`` and
``length-mirror.jsonl``; training rows: ``train.jsonl``; traces: ``traces.jsonl``) and
``manifest.json``. The card (``README.md``) carries the hub's YAML header: one ``default`` config whose
``data_files`` name each non-empty JSONL file as a split (a hyphen becomes ``_``: split names are
words), ``dataset_info.features`` (the union of the files' schemas, so that files whose ``meta``
differ, e.g. only identity probes have ``meta.identity``, load as one dataset; a key a row lacks is
null), the license of the source data, tags; then how the folder was built (source, counts, biases,
verifier, rewriter, seed) from the manifest. ``datasets``' own JSON loader infers each file's schema.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from biasaware.errors import BiasAwareError
from biasaware.hub import check_license, check_repo_name
from biasaware.io import read_json, read_records

SOURCE_LICENSES = {
    "builtin": "apache-2.0",
    "helpsteer3": "cc-by-4.0",
}  # the built-in corpus ships with biasaware
KIND_TASKS = {"probe": "bias probes", "train": "training rows", "trace": "SFT traces"}
BUILT_RECORDS = {
    "bench": "probe",
    "train": "train",
    "traces": "trace",
}  # a build's manifest kind -> its records


def _merge(a: Any, b: Any) -> Any:
    """The union of two ``datasets`` feature trees (dict keys merged; otherwise the first)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {**b, **{k: _merge(v, b[k]) if k in b else v for k, v in a.items()}}
    return a


def features(files: list[Path]):
    """The union of the files' schemas as ``datasets.Features``."""
    import datasets

    merged: dict[str, Any] = {}
    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # one bar per file would be noise here
    try:
        for f in files:
            found = datasets.load_dataset("json", data_files={"x": str(f)}, split="x").features
            merged = _merge(merged, dict(found))
    finally:
        if shown:
            datasets.enable_progress_bars()
    return datasets.Features(merged)


def write_dataset_card(folder: str | Path, name: str | None = None, license: str | None = None) -> Path:
    """Write ``folder/README.md`` (see the module docstring); returns its path."""
    from huggingface_hub import DatasetCard, DatasetCardData

    folder = Path(folder)
    if folder.is_file():
        raise BiasAwareError(
            f"{folder} is a file; give the folder a `biasaware build` wrote (it holds manifest.json)"
        )
    if not folder.is_dir():
        raise BiasAwareError(f"{folder}: no such folder")
    check_license(license)
    if name is not None and not name.strip():
        raise BiasAwareError(
            "--name is empty: give the dataset's hub id (or leave --name out: the folder's name)"
        )
    name = check_repo_name(name or folder.name, "--name" if name else "--name (default: the folder's name)")
    path = folder / "manifest.json"
    if not path.exists():
        raise BiasAwareError(
            f"{folder} is not a finished build (no manifest.json): run `biasaware build` first"
        )
    manifest = read_json(path, "build manifest")
    files = data_files(folder, manifest)
    splits = [{"split": f.stem.replace("-", "_"), "path": f.name} for f in files]
    source = str(manifest.get("source", "unknown"))
    config = manifest.get("config") or {}
    biases = manifest.get("biases") or {}
    data = DatasetCardData(
        license=license or SOURCE_LICENSES.get(source, "other"),
        configs=[{"config_name": "default", "data_files": splits}],
        dataset_info={"features": features(files)._to_yaml_list()},
        tags=["biasaware", "llm-as-a-judge", "judgment-bias", "preference"],
        pretty_name=name or folder.name,
    )
    built = str(manifest.get("kind"))
    kind = KIND_TASKS.get(BUILT_RECORDS.get(built, built), built)
    rows = {f.stem: sum(1 for line in f.open() if line.strip()) for f in files}
    body = [
        f"# {name or folder.name}",
        "",
        f"{kind.capitalize()} built by biasaware (`biasaware build`, version {manifest.get('biasaware')}) for "
        "training and evaluating LLM judges that resist judgment bias.",
        "",
        "```python",
        "import datasets",
        "",
        f"data = datasets.load_dataset({json.dumps(name)})  # or a local copy of this folder",
        "```",
        "",
        "## How it was built",
        "",
        f"- source pairs: `{source}`"
        + (f" ({manifest.get('source_pairs')} pairs)" if manifest.get("source_pairs") is not None else ""),
        f"- biases: {', '.join(biases) if isinstance(biases, dict) and biases else config.get('biases', '?')}",
        f"- verifier: {manifest.get('verifier')}; rewriter: {manifest.get('rewriter')}; seed {config.get('seed')}",
    ]
    for key in ("direction", "cues", "augment", "families"):
        if config.get(key) is not None:
            body.append(f"- {key}: {config[key]}")
    body += ["", "## Splits", "", "| split | file | rows |", "|---|---|---:|"]
    body += [f"| {s['split']} | {s['path']} | {rows[Path(s['path']).stem]} |" for s in splits]
    body += [
        "",
        "Each row follows biasaware's record schema (a bias probe: the original and the injected view of one pair, "
        "the correct answer, the bias and `meta`; a mirror probe carries the cue on the better answer). "
        "`manifest.json` holds every build setting, the counts and the verifier's retention.",
    ]
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(body) + "\n")
    readme = folder / "README.md"
    earlier = readme.read_bytes() if readme.exists() else None
    card.save(str(readme))
    try:
        loads_as_described(folder, [s["split"] for s in splits])
    except BiasAwareError:
        readme.unlink()  # a card that claims what datasets cannot do is not left behind
        if earlier is not None:
            readme.write_bytes(earlier)
        raise
    return readme


def data_files(folder: Path, manifest: dict[str, Any]) -> list[Path]:
    """The build's own data files (those its manifest names: a file copied in later is not part of
    the dataset; :func:`built_files`), each checked row by row against the record schema (a bad row names
    its file, line and field). An empty one the build left empty is left out with a warning that names it."""

    kind = BUILT_RECORDS.get(str(manifest.get("kind")), str(manifest.get("kind")))
    files = []
    for f in built_files(folder, manifest):
        if f.stat().st_size == 0:
            print(
                f"[release] warning: {f.name} is empty (every item of it was dropped): no split for it in the card"
            )
            continue
        read_records(f, kind if kind in KIND_TASKS else None)  # each row checked as the build's own records
        files.append(f)
    if not files:
        raise BiasAwareError(f"{folder}: no data rows to describe")
    return sorted(files)


def built_files(folder: Path, manifest: dict[str, Any]) -> list[Path]:
    """The files a build's manifest names (``outputs``), as the build left them: a named file that is missing
    is an error, and so is an empty one unless the build left it empty (every item of a bias was dropped; the
    manifest's ``empty``), since one emptied since would be read as a bias with nothing to measure."""
    where = folder / "manifest.json"
    if "outputs" not in manifest:
        raise BiasAwareError(
            f"{where}: field 'outputs' is missing, so it names no data file; rebuild {folder}"
        )
    outputs = manifest["outputs"]
    if not isinstance(outputs, list) or not all(isinstance(n, str) and n for n in outputs):
        raise BiasAwareError(
            f"{where}: field 'outputs' is a list of file names in the folder; got {outputs!r}"
        )
    files = []
    for name in outputs:
        f = folder / name
        if Path(name).is_absolute() or Path(name).name != name:
            raise BiasAwareError(
                f"{where}: field 'outputs' names {name!r}, not a file of {folder}; a build's files are in its folder"
            )
        if not f.is_file():
            raise BiasAwareError(f"{f}: the manifest names this file, and it is missing; rebuild {folder}")
        if f.stat().st_size == 0 and name not in manifest.get("empty", [name]):  # older builds: no list
            raise BiasAwareError(
                f"{f} is empty, yet its build wrote rows into it (the manifest's 'empty' does not name it): "
                f"the folder changed after the build; rebuild {folder}"
            )
        files.append(f)
    return files


def loads_as_described(folder: Path, splits: list[str]) -> None:
    """Load ``folder`` with ``datasets`` as a user would, into a scratch cache, and check its splits."""

    import datasets

    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        with tempfile.TemporaryDirectory() as cache:
            loaded = datasets.load_dataset(str(folder), cache_dir=cache)
            found = sorted(loaded)
    except Exception as exc:  # datasets raises many kinds: any of them means the card's claim fails
        raise BiasAwareError(f"{folder} does not load with datasets.load_dataset: {str(exc)[:300]}") from None
    finally:
        if shown:
            datasets.enable_progress_bars()
    if found != sorted(splits):
        raise BiasAwareError(f"{folder} loads with splits {found}, not the card's {sorted(splits)}")
