"""The README is a front page and the docs stand on their own: every relative link resolves, nothing
points outside the repository, and papers are cited by name (docs/references.md), not by a file number."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    text = page.read_text()
    for target, _ in LINK.findall(text):
        if re.match(r"[a-z]+://", target):
            continue
        assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_nothing_points_outside_the_repository_or_cites_a_file_number(page):
    text = page.read_text()
    assert "../shared" not in text and "session" not in text.lower(), page.name
    # a paper is cited by name: "JudgeBiasBench sec. 5.1", never "002 sec. 5.1"
    assert not re.search(r"(?<![\w.\-/,])00[0-4](?:'s)?\s+(?:sec|eq|Table|Tables|fig|Figure)\b", text), (
        page.name
    )


def test_the_readme_is_a_front_page_whose_doc_links_all_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 160
    linked = {Path(t).name for t, _ in LINK.findall(text) if t.startswith("docs/")}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages <= linked, f"docs pages the README does not link: {sorted(pages - linked)}"
    assert "## References" in text and "arxiv.org/abs/2603.08091" in text


def test_the_preflight_tables_are_their_results_files():
    """docs/results.md shows the preflight verdicts exactly as their committed preflight.json files give them."""
    import json

    from biasaware.evaluation.reports import verdicts_markdown

    text = (ROOT / "docs" / "results.md").read_text()
    results = ROOT / "docs" / "results" / "preflight"
    four = {
        n: json.loads((results / f"quickstart-{n}.json").read_text())
        for n in ("baseline", "paper", "balanced", "balanced+keys")
    }
    assert verdicts_markdown(four) in text
    hundred = {"balanced, --per-bias 100": json.loads((results / "quickstart-balanced-100.json").read_text())}
    assert verdicts_markdown(hundred) in text
    outcomes = {n: r["outcome"] for n, r in four.items()}
    assert outcomes == {
        "baseline": "fail",
        "paper": "fail",
        "balanced": "fail",
        "balanced+keys": "cannot tell",
    }


def test_the_quickstart_tables_are_the_results_file():
    """README.md and docs/results.md show the quickstart's table as docs/results/quickstart.json (the
    report.json that `biasaware quickstart` wrote) gives it."""
    import json

    from biasaware.experiments.quickstart import readme_table

    table = readme_table(json.loads((ROOT / "docs" / "results" / "quickstart.json").read_text()))
    assert table in (ROOT / "README.md").read_text()
    assert table in (ROOT / "docs" / "results.md").read_text()


def test_the_master_key_tables_are_the_results_file():
    """docs/results.md shows the master-key tables of the quickstart's judges as docs/results/quickstart.json
    (the report.json that `biasaware quickstart` wrote) gives them."""
    import json

    from biasaware.evaluation.reports import master_key_markdown

    result = json.loads((ROOT / "docs" / "results" / "quickstart.json").read_text())
    text = (ROOT / "docs" / "results.md").read_text()
    assert master_key_markdown(result["master_keys"]) in text
    assert master_key_markdown(result["master_keys_zero_shot"]) in text


def test_the_generative_master_key_tables_are_their_results_files():
    """docs/generative.md shows, per seed, the master-key table of the study's judges as the file
    `biasaware eval compare --baseline` wrote gives it; the file's per-probe indicators recount it."""
    import json

    from biasaware.evaluation.reports import master_key_markdown

    files = sorted((ROOT / "docs" / "results" / "generative-study" / "master-keys").glob("seed-*.json"))
    assert files
    text = (ROOT / "docs" / "generative.md").read_text()
    for f in files:
        result = json.loads(f.read_text())
        assert f"`{f.relative_to(ROOT)}`" in text and master_key_markdown(result["master_keys"]) in text
        probes = result["per_probe"]
        assert len(probes["side"]) == len(probes["ids"])
        keys = [k for k, side in enumerate(probes["side"]) if side == "s"]
        for name, row in result["master_keys"]["runs"].items():
            mine = probes["runs"][name]
            assert row["n"] == len(keys) and row["false_positives"] == sum(
                mine["inj"][k] == "0" for k in keys
            )
            assert row["reference"]["false_positives"] == sum(mine["key_unpunished"][k] == "1" for k in keys)
            assert not any("/" in str(row[k]) and str(row[k]).startswith("/") for k in ("run", "judge"))


# A figure is a one-decimal number ("92.0", "5.6 minutes"), or any decimal with a unit of time, a ratio or
# a percentage ("2.25 s", "17.0x", "+0.3%"): what a run measures.
FIGURE = re.compile(r"(?<![\w.\-])(\d+\.\d)(?![\d\w])|(?<![\w.\-])(\d+\.\d+)(?=x\b| ?s\b| ?ms\b|%)")
# The results files a page names: docs/results/NAME.json, results/NAME.json, {a,b} alternatives, NAME or * globs.
NAMED = re.compile(r"results/([\w./{},*-]+?\.json)")
# Figures that are not measurements, per page, each with what it is. Anything else on a page must be a
# number of a results file the page names.
NOT_MEASURED = {
    "docs/data.md": {
        "2.0": "the max_length_ratio setting",
        "0.7": "the natural cue rate setting",
        "5.1": "a section of the JudgeBiasBench paper",
        "0.5": "the context_cues setting",
        "0.0": "a temperature setting",
        "0.1": "the benchmark's 100 ms latency setting, in a formula",
        "1.0": "the fluency_margin setting",
    },
    "docs/evaluation.md": {
        "0.5": "chance, and a preflight threshold",
        "0.2": "preflight thresholds",
        "0.1": "a preflight threshold in an example file",
        "0.3": "a preflight threshold in an example file",
        "4.1": "an example of the estimate line",
        "4.10": "an example of the estimate line",
        "2.3": "an example of a stage's console line",
        "156.5": "an example of a stage's console line",
        "72.0": "an example of the confound warning",
        **{
            f: "a worked Wilson interval (test_the_worked_intervals_are_wilson_intervals)"
            for f in ("5.9", "1.6", "19.1", "8.8", "3.0", "23.0", "20.7")
        },
    },
    "docs/formats.md": {"0.9": "a number in an example record"},
    "docs/generative.md": {"0.7": "the study's cue-rate setting"},
    "docs/multi-node.md": {"10.1": "an example address", "127.0": "the loopback address"},
    "docs/real.md": {"1.5": "AlpacaEval's preference midpoint (no preference)"},
    "docs/training.md": {"0.5": "the InfoNCE temperature setting", "0.3": "a vLLM memory setting"},
    "docs/sweeps-and-releases.md": {"5.5": "a section of the JudgeBiasBench paper"},
}
PAGE_NAMES = ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")))]


def _values(paths) -> set[str]:
    """Every number of the given results files, as the docs write it: one decimal as a percentage, as a
    value and in minutes (seconds / 60), and two or three decimals as a value."""
    import json

    values: set[str] = set()

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, int | float) and not isinstance(x, bool):
            for y in {
                x,
                abs(x),
            }:  # a negative is written with a minus sign ("−13.6"), which FIGURE does not read
                values.update({f"{100 * y:.1f}", f"{y:.1f}", f"{y / 60:.1f}", f"{y:.2f}", f"{y:.3f}"})

    for path in paths:
        walk(json.loads(path.read_text()))
    return values


def _named_files(text: str) -> list[Path]:
    files = []
    for name in set(NAMED.findall(text)):
        alternatives = re.match(r"(.*)\{([^}]*)\}(.*)", name)
        names = (
            [alternatives[1] + a + alternatives[3] for a in alternatives[2].split(",")]
            if alternatives
            else [name]
        )
        for n in names:
            files += sorted((ROOT / "docs" / "results").glob(n.replace("NAME", "*")))
    return files


def _unexplained(page: str, text: str) -> list[str]:
    figures = {a or b for a, b in FIGURE.findall(text)}
    return sorted(figures - _values(_named_files(text)) - set(NOT_MEASURED.get(page, {})))


def assert_same_figures(computed, committed, where: str = "") -> None:
    """``computed`` (as JSON writes it) is ``committed``: the same keys, lists and values, a float within
    1e-9 of its committed value (numpy's sums and scipy's distributions may differ in the last bits between
    releases and machines; the committed files keep full precision)."""
    import json
    import math

    def same(a, b, at):
        if isinstance(a, float) or isinstance(b, float):
            assert isinstance(a, int | float) and isinstance(b, int | float), at
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (a != a and b != b), f"{at}: {a} != {b}"
        elif isinstance(a, dict):
            assert isinstance(b, dict) and sorted(a) == sorted(b), f"{at}: keys {sorted(a)} != {sorted(b)}"
            for k in a:
                same(a[k], b[k], f"{at}.{k}")
        elif isinstance(a, list):
            assert isinstance(b, list) and len(a) == len(b), f"{at}: {a} != {b}"
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                same(x, y, f"{at}[{i}]")
        else:
            assert a == b, f"{at}: {a!r} != {b!r}"

    same(json.loads(json.dumps(computed)), committed, where or "figures")


def _committed_aggregate(study: Path) -> dict:
    """A study folder's committed aggregate, checked equal to what its committed seed files give
    (recomputed here, bench comparison included)."""
    import json

    from biasaware.evaluation.seeds import aggregate, bench_rates, load_seeds

    agg = json.loads((study / "aggregate.json").read_text())
    again = aggregate(load_seeds(study), bench_rates(ROOT / "docs" / "results" / "bench"))
    assert_same_figures(again, agg)
    return agg


def test_the_generative_study_tables_are_its_aggregate():
    """The committed aggregate of the generative study is what its committed seed files give (recomputed
    here, bench comparison included), it has the pre-registered ten seeds at least, and README.md and
    docs/generative.md show its tables exactly as the library renders them."""

    from biasaware.evaluation.reports import study_headline_markdown, study_markdown

    study = ROOT / "docs" / "results" / "generative-study"
    agg = _committed_aggregate(study)
    assert len(agg["seeds"]) >= 10 and agg["seeds"] == sorted(agg["seeds"])
    assert study_headline_markdown(agg) in (ROOT / "README.md").read_text()
    assert study_markdown(agg) in (ROOT / "docs" / "generative.md").read_text()
    assert (study / "aggregate.md").read_text().endswith(study_markdown(agg))


@pytest.mark.parametrize("design", ["generative-design2", "generative-design3"])
def test_the_later_generative_designs_tables_are_their_aggregates(design):
    """The second and third designs' committed aggregates are what their committed seed files give, five
    seeds each, and docs/generative.md shows their judge, difference, signal and reward-check tables as
    the library renders them."""

    from biasaware.evaluation.reports import study_markdown

    study = ROOT / "docs" / "results" / design
    agg = _committed_aggregate(study)
    assert agg["seeds"] == [0, 1, 2, 3, 4]
    rendered = study_markdown(agg)
    assert (study / "aggregate.md").read_text().endswith(rendered)
    text = (ROOT / "docs" / "generative.md").read_text()
    titles = ("**Per judge", "**Differences", "**GRPO's signal", "**Reward checks per judge")
    blocks = rendered.split("\n\n")
    tables = [blocks[i] + "\n\n" + blocks[i + 1] for i, b in enumerate(blocks) if b.startswith(titles)]
    assert len(tables) == 4
    for table in tables:
        assert table in text, table.splitlines()[0]


@pytest.mark.parametrize(
    "first, second, saved",
    [
        ("generative-study", "generative-design2", "generative-design2/against-design1.json"),
        ("generative-design2", "generative-bf16", "generative-bf16/against-float32.json"),
    ],
)
def test_a_published_study_comparison_is_what_their_seed_files_give(first, second, saved):
    """The committed comparisons of two studies (the second design against the first; the second design
    in bfloat16 against float32) are `eval compare` of the committed studies, recomputed here."""
    import json

    from biasaware.evaluation.compare import comparison

    results = ROOT / "docs" / "results"
    again = comparison([str(results / first), str(results / second)], None)
    assert_same_figures(again, json.loads((results / saved).read_text()))


def test_the_bfloat16_study_is_its_aggregate():
    """The second design's five seeds in bfloat16: the committed aggregate is what the committed seed
    files give, and every seed trained in bfloat16."""
    study = ROOT / "docs" / "results" / "generative-bf16"
    agg = _committed_aggregate(study)
    assert agg["seeds"] == [0, 1, 2, 3, 4]
    assert {m["training_precision"] for m in agg["machines"].values()} == {"bfloat16"}


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_every_figure_comes_from_a_results_file_the_page_names(page):
    """Every measured figure on every page is a number of a committed results file that the same page
    names (the tables are also checked whole against their files by the tests above)."""
    text = (ROOT / page).read_text()
    missing = _unexplained(page, text)
    assert not missing, f"{page}: figures in no results file it names (and not listed as settings): {missing}"
    figures = {a or b for a, b in FIGURE.findall(text)}
    stale = sorted(set(NOT_MEASURED.get(page, {})) - figures)
    assert not stale, f"{page}: NOT_MEASURED lists figures the page no longer shows: {stale}"


def test_the_figures_check_catches_a_hand_edit():
    """One figure of the README's quickstart table changed by hand, to a new value or to a value that only
    a results file the README does not name holds, fails the check."""
    text = (ROOT / "README.md").read_text()
    assert not _unexplained("README.md", text)
    named = _values(_named_files(text))
    elsewhere = sorted(
        f
        for f in _values([ROOT / "docs" / "results" / "sweep-negatives.json"]) - named
        if re.fullmatch(r"\d\d\.\d", f)
    )[0]
    for edited in ("92.1", elsewhere):
        assert edited in _unexplained(
            "README.md", text.replace("92.0 [85.0, 95.9]", f"{edited} [85.0, 95.9]", 1)
        )


def test_the_worked_intervals_are_wilson_intervals():
    from biasaware.evaluation.metrics import wilson_interval

    text = (ROOT / "docs" / "evaluation.md").read_text()
    for k, n, shown in ((2, 34, "5.9% [1.6, 19.1]"), (3, 34, "8.8% [3.0, 23.0]"), (1, 1, "100% [20.7, 100]")):
        lo, hi = wilson_interval(k, n)
        rate = f"{100 * k / n:.1f}%" if k < n else "100%"
        assert f"{rate} [{100 * lo:.1f}, {100 * hi:.1f}]".replace("[20.7, 100.0]", "[20.7, 100]") == shown
        assert shown in text


def test_the_sweep_table_is_its_results_file():
    import json

    from biasaware.experiments.sweep import sweep_markdown

    table = sweep_markdown(json.loads((ROOT / "docs" / "results" / "sweep-negatives.json").read_text()))
    assert table in (ROOT / "docs" / "sweeps-and-releases.md").read_text()


def test_the_real_text_shortcut_table_is_its_results_file():
    """docs/real.md shows the length shortcut of each real set exactly as `build real`'s summary gives it."""
    import json

    from biasaware.data.real import shortcut_markdown

    summary = json.loads((ROOT / "docs" / "results" / "real" / "build-summary.json").read_text())
    assert shortcut_markdown(summary) in (ROOT / "docs" / "real.md").read_text()
    assert summary["missing"] == [] and summary["split"]["instructions"] == 805


def test_the_real_text_study_tables_are_its_aggregate():
    """The committed aggregate of the real-text experiment is what its committed seed files give (recomputed
    here), it has the five seeds the experiment asks for at least, and README.md and docs/real.md show its
    tables exactly as the library renders them. It holds every arm of the experiment."""
    import json

    from biasaware.experiments.real_study import ARMS, aggregate, aggregate_markdown, headline_markdown

    study = ROOT / "docs" / "results" / "real" / "study"
    agg = json.loads((study / "aggregate.json").read_text())
    seeds = {
        int(p.parent.name.split("-")[1]): json.loads(p.read_text()) for p in study.glob("seed-*/real.json")
    }
    assert len(agg["seeds"]) >= 5 and sorted(seeds) == agg["seeds"] and agg["arms"] == list(ARMS)
    again = aggregate(seeds)
    assert_same_figures(again, agg)
    # and what each metric is: a reward model is scored on 9 of the 12 biases (none that lives in the prompt)
    assert {m: v["what"] for m, v in again["metrics"].items()} == {
        m: v["what"] for m, v in agg["metrics"].items()
    }
    assert "the 9 biases a reward model is scored on" in agg["metrics"]["injected BSR"]["what"]
    assert headline_markdown(agg) in (ROOT / "README.md").read_text()
    assert aggregate_markdown(agg).split("\n", 2)[2] in (ROOT / "docs" / "real.md").read_text()  # no title
    assert (study / "aggregate.md").read_text() == aggregate_markdown(agg)
