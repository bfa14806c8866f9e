"""What binds an eval folder to its items: the items it judged, not every item a stopped run was given."""

import json

import pytest

from biasaware.errors import BiasAwareError
from biasaware.evaluation.resume import check_fingerprint


def test_items_a_stopped_run_never_judged_bind_nothing(tmp_path):
    """A run that stopped partway (an endpoint refusing one probe) recorded every item it was given; only the
    items it judged bind the folder: the corrected input may drop or fix the others, not the judged ones."""
    judge = {"model": "m", "mode": "reward"}
    (tmp_path / "fingerprint.json").write_text(json.dumps({"judge": judge, "items": {"a": "h1", "b": "h2"}}))
    row = {"probe_id": "a", "view": "original", "judge": "m", "raw": "", "verdict": "A"}
    (tmp_path / "judgments.jsonl").write_text(json.dumps(row) + "\n")
    check_fingerprint(tmp_path, {"judge": judge, "items": {"a": "h1"}}, write=False)  # b dropped
    check_fingerprint(tmp_path, {"judge": judge, "items": {"a": "h1", "b": "h3"}}, write=False)  # b fixed
    with pytest.raises(BiasAwareError, match="whose content differs"):
        check_fingerprint(tmp_path, {"judge": judge, "items": {"a": "h9"}}, write=False)
    with pytest.raises(BiasAwareError, match="that are not in this input"):
        check_fingerprint(tmp_path, {"judge": judge, "items": {"c": "h4"}}, write=False)
    # the record written keeps the judged items and this input's
    check_fingerprint(tmp_path, {"judge": judge, "items": {"a": "h1", "d": "h5"}}, write=True)
    assert json.loads((tmp_path / "fingerprint.json").read_text())["items"] == {"a": "h1", "d": "h5"}


def _scoring_items(path):
    rows = [
        {"id": f"i{i}", "instruction": f"Q{i}?", "response": "an answer " * (i + 1), "gold": 1 + 4 * (i % 2)}
        for i in range(3)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _pairs(path):
    rows = [{"prompt": f"q{i}", "chosen": "yes " * i, "rejected": "no", "subset": "s"} for i in range(1, 4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_one_commands_folder_is_not_anothers(tiny_models, tmp_path, capsys):
    """eval general, eval scoring and eval bias write judgments of other kinds: a folder one of them judged is
    refused by the others, judging into it or recounting it, naming the command whose run it holds (before, the
    judgments were read as this command's, one field error per row, or the judge's settings were compared)."""
    from biasaware.cli import main

    reward = ["--judge", str(tiny_models["reward"]), "--mode", "reward"]
    general, scoring = tmp_path / "general", tmp_path / "scoring"
    assert (
        main(["eval", "general", *reward, "--benchmark", _pairs(tmp_path / "p.jsonl"), "--out", str(general)])
        == 0
    )
    assert json.loads((general / "fingerprint.json").read_text())["command"] == "eval general"
    items = _scoring_items(tmp_path / "s.jsonl")
    assert main(["eval", "scoring", *reward, "--data", items, "--out", str(scoring)]) == 0
    capsys.readouterr()
    cases = [
        (["eval", "scoring", "--rescore", "--out", str(general)], "eval general", "eval scoring"),
        (["eval", "bias", "--rescore", "--out", str(general)], "eval general", "eval bias"),
        (["eval", "general", "--rescore", "--out", str(scoring)], "eval scoring", "eval general"),
        (
            ["eval", "scoring", *reward, "--data", items, "--out", str(general)],
            "eval general",
            "eval scoring",
        ),
        (["eval", "general", *reward, "--benchmark", str(tmp_path / "p.jsonl"), "--out", str(scoring)],)
        + ("eval scoring", "eval general"),
    ]
    for argv, theirs, mine in cases:
        before = {f: f.read_bytes() for d in (general, scoring) for f in d.iterdir() if f.is_file()}
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"holds the judgments of an `{theirs}` run, not of `{mine}`" in err, err
        assert f"biasaware {theirs} --rescore --out" in err and "Traceback" not in err
        assert {p: p.read_bytes() for p in before} == before  # nothing rewritten
    # a folder judged before commands were recorded (or a record edited by hand) is known by its judgments
    record = json.loads((general / "fingerprint.json").read_text())
    for command in (None, "eval nonsense"):
        (general / "fingerprint.json").write_text(json.dumps({**record, "command": command}))
        for argv in (["eval", "scoring", "--rescore", "--out", str(general)], cases[3][0]):
            assert main(argv) == 2
            assert (
                "holds the judgments of an `eval general` run, not of `eval scoring`"
                in capsys.readouterr().err
            )
    (general / "fingerprint.json").write_text(json.dumps(record))
    # each command's own rescore still recounts its folder
    assert main(["eval", "general", "--rescore", "--out", str(general)]) == 0
    assert main(["eval", "scoring", "--rescore", "--out", str(scoring)]) == 0


def test_settings_written_otherwise_decide_the_same_verdicts():
    """A resumed judge run compares settings as they decide verdicts: an endpoint with or without its trailing
    slash, scoring templates in any order, repeated, or with the baseline every run scores."""
    from biasaware.evaluation.resume import deciding

    assert deciding({"endpoint": "http://h:8000/v1/"}, "endpoint") == deciding(
        {"endpoint": "http://h:8000/v1"}, "endpoint"
    )
    same = [
        deciding({"scoring_templates": t}, "scoring_templates")
        for t in ("roman,desc+letter", "letter+desc,roman,roman", "baseline,roman,desc+letter")
    ]
    assert same == [["desc+letter", "roman"]] * 3
    assert deciding({"scoring_templates": "desc"}, "scoring_templates") != same[0]
