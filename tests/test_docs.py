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

    from biasaware.evaluation.preflight import verdicts_markdown

    text = (ROOT / "docs" / "results.md").read_text()
    results = ROOT / "docs" / "results" / "preflight"
    three = {
        n: json.loads((results / f"quickstart-{n}.json").read_text())
        for n in ("baseline", "paper", "balanced")
    }
    assert verdicts_markdown(three) in text
    hundred = {"balanced, --per-bias 100": json.loads((results / "quickstart-balanced-100.json").read_text())}
    assert verdicts_markdown(hundred) in text
    outcomes = {n: r["outcome"] for n, r in three.items()}
    assert outcomes == {"baseline": "fail", "paper": "fail", "balanced": "warn"}


def test_the_quickstart_tables_are_the_results_file():
    """README.md and docs/results.md show the quickstart's table as docs/results/quickstart.json (the
    report.json that `biasaware quickstart` wrote) gives it."""
    import json

    from biasaware.quickstart import readme_table

    table = readme_table(json.loads((ROOT / "docs" / "results" / "quickstart.json").read_text()))
    assert table in (ROOT / "README.md").read_text()
    assert table in (ROOT / "docs" / "results.md").read_text()


RESULT_PAGES = ("README.md", "docs/results.md", "docs/generative.md", "docs/sweeps-and-releases.md")


def _result_values() -> set[str]:
    """Every number of the committed results files, as a one-decimal percentage, value and minutes."""
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
            values.update({f"{100 * x:.1f}", f"{x:.1f}", f"{x / 60:.1f}"})

    for path in sorted((ROOT / "docs" / "results").rglob("*.json")):
        walk(json.loads(path.read_text()))
    return values


@pytest.mark.parametrize("page", RESULT_PAGES)
def test_every_result_figure_comes_from_a_results_file(page):
    """Every one-decimal figure on the results pages (the README, the results and generative pages) is
    a number of a committed results file; a figure edited by hand is caught (the tables are also
    checked whole against their files by the tests above)."""
    text = (ROOT / page).read_text()
    figures = re.findall(r"(?<![\w.\-])(\d+\.\d)(?![\d\w])", text)
    assert figures
    missing = sorted(set(figures) - _result_values())
    assert not missing, f"{page}: figures in no results file: {missing}"


def test_the_figures_check_catches_a_hand_edit():
    values = _result_values()
    edited = next(f"{k / 10:.1f}" for k in range(900, 1000) if f"{k / 10:.1f}" not in values)
    text = (ROOT / "README.md").read_text().replace("92.0 [85.0, 95.9]", f"{edited} [85.0, 95.9]", 1)
    figures = set(re.findall(r"(?<![\w.\-])(\d+\.\d)(?![\d\w])", text))
    assert edited in figures - values


def test_the_sweep_table_is_its_results_file():
    import json

    from biasaware.sweep import sweep_markdown

    table = sweep_markdown(json.loads((ROOT / "docs" / "results" / "sweep-negatives.json").read_text()))
    assert table in (ROOT / "docs" / "sweeps-and-releases.md").read_text()
