"""The data contract: every required field, every field's error, and round trips."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biasaware.errors import RecordError
from biasaware.io import read_records, write_jsonl, write_parquet
from biasaware.records import (
    FLAG_META,
    GROUPING_META,
    RECORD_TYPES,
    guess_kind,
    json_kind,
    json_shown,
    parse_record,
    same_answer,
    shown_as,
    visible,
)
from biasaware.taxonomy import BIASES

REQUIRED = {
    "pair": ["id", "source", "prompt", "chosen", "rejected"],
    "probe": ["id", "bias", "category", "original", "injected"],
    "train": ["id", "prompt", "chosen", "rejected"],
    "judgment": ["probe_id", "view", "judge", "raw", "verdict"],
}


def problems(kind, row):
    with pytest.raises(RecordError) as err:
        parse_record(kind, row, "f.jsonl:7")
    return err.value.problems


@pytest.mark.parametrize("kind", list(REQUIRED))
def test_valid_rows_parse(kind, rows):
    record = parse_record(kind, rows[kind])
    assert isinstance(record, RECORD_TYPES[kind])
    assert guess_kind(rows[kind]) == kind


@pytest.mark.parametrize("kind,field", [(k, f) for k, fs in REQUIRED.items() for f in fs])
def test_each_missing_field_is_named(kind, field, rows):
    row = dict(rows[kind])
    del row[field]
    assert problems(kind, row) == [f"f.jsonl:7: field '{field}' is missing"]


@pytest.mark.parametrize("field", ["prompt", "response_a", "response_b", "correct"])
def test_missing_view_field_is_named(field, probe_row):
    del probe_row["injected"][field]
    assert problems("probe", probe_row) == [f"f.jsonl:7: field 'injected.{field}' is missing"]


def test_plain_ascii_is_read_as_every_text_is():
    """The ASCII fast path of shown_as drops what the general one drops, no more."""
    from biasaware.records import _ASCII_UNSEEN, _unseen

    assert [c for c in range(128) if _unseen().match(chr(c))] == [
        c for c in range(128) if _ASCII_UNSEEN.match(chr(c))
    ]
    for text in ("a\x00b\x7f c", "tab\tand  new\nline", "plain"):
        assert shown_as(text) == shown_as(text + "\u200b")  # the second takes the general path


def test_answers_a_reader_tells_apart_are_two_answers(rows):
    """Compatibility forms, case and punctuation show: x² is not x2, nor Paris paris."""
    for chosen, rejected in (
        ("x\u00b2", "x2"),
        ("Paris", "paris"),
        ("0.9", "0.9."),
        ("\uff10.\uff19", "0.9"),
    ):
        record = parse_record("pair", {**rows["pair"], "chosen": chosen, "rejected": rejected}, "f.jsonl:7")
        assert (record.chosen, record.rejected) == (chosen, rejected)


@pytest.mark.parametrize(
    "kind,change,expected",
    [
        ("pair", {"chosen": 5}, "field 'chosen': input should be a valid string (got a number 5)"),
        ("pair", {"chosen": "  "}, "field 'chosen' is empty or whitespace only"),
        ("pair", {"rejected": ""}, "field 'rejected' is empty or whitespace only"),
        ("pair", {"chosen": "\u200b\u200b"}, "field 'chosen' is empty or whitespace only (or shows nothing"),
        ("pair", {"rejected": "0.9"}, "field 'rejected' is identical to 'chosen'"),
        # a judge sees one answer twice: white space, zero-width characters, a decomposed accent
        *(
            (
                "pair",
                {"rejected": text},
                "field 'rejected' is identical to 'chosen' but for white space, "
                "invisible characters or Unicode form",
            )
            for text in ("0.9 ", " 0.9\n", "0\u200b.9", "\ufeff0.9", "0.9\u3164")
        ),
        (
            "pair",
            {"chosen": "caf\u00e9", "rejected": "cafe\u0301"},
            "field 'rejected' is identical to 'chosen' but for white space",
        ),
        ("pair", {"prompt": "hi"}, "field 'prompt': input should be a valid list"),
        ("pair", {"prompt": []}, "field 'prompt': must hold at least one message"),
        ("pair", {"prompt": [{"role": "assistant", "content": "x"}]}, "last message must be the user turn"),
        ("pair", {"prompt": [{"role": "robot", "content": "x"}]}, "field 'prompt[0].role'"),
        ("pair", {"meta": [1]}, "field 'meta': input should be a valid dictionary"),
        ("pair", {"meta": "not json"}, "field 'meta' is a string but not a JSON object"),
        ("pair", {"choosen": "x"}, "unknown field 'choosen' (put extra data under 'meta')"),
        ("pair", {"id": ""}, "field 'id'"),
        ("probe", {"bias": "verbosity"}, "field 'bias': unknown bias 'verbosity'; valid: length, authority"),
        (
            "probe",
            {"category": "diversity"},
            "field 'category' is 'diversity' but bias 'bandwagon' belongs to 'context'",
        ),
        ("train", {"bias_negatives": [{"bias": "nope", "text": "x"}]}, "field 'bias_negatives[0].bias'"),
        ("train", {"bias_negatives": [{"bias": "length"}]}, "field 'bias_negatives[0].text' is missing"),
        ("train", {"rejected": "0.9"}, "field 'rejected' is identical to 'chosen'"),
        (
            "train",
            {"bias_negatives": [{"bias": "length", "text": "0.9\u200d"}]},
            "bias_negatives[0].text is identical to 'chosen' but for white space, invisible characters or Unicode form",
        ),
        ("judgment", {"verdict": "C"}, "field 'verdict': input should be 'A', 'B', 'tie' or 'invalid'"),
        ("judgment", {"correct": "X"}, "field 'correct'"),
        ("judgment", {"scores": {"A": "high"}}, "field 'scores.A'"),
    ],
)
def test_field_errors(kind, change, expected, rows):
    found = problems(kind, {**rows[kind], **change})
    assert len(found) == 1 and found[0].startswith("f.jsonl:7: ") and expected in found[0], found


def test_label_out_of_range(probe_row):
    probe_row["original"]["correct"] = "C"
    assert problems("probe", probe_row) == ["f.jsonl:7: field 'original.correct': input should be 'A' or 'B'"]


def test_all_problems_reported_at_once(pair_row):
    del pair_row["chosen"]
    pair_row["source"] = 3
    assert len(problems("pair", pair_row)) == 2


@pytest.mark.parametrize("value", [[], {}, 1, None, ["length"], True])
def test_judgment_meta_bias_of_another_type_is_named(value, rows):
    found = problems("judgment", {**rows["judgment"], "meta": {"bias": value}})
    assert len(found) == 1 and found[0].startswith("f.jsonl:7: field 'meta'") and "meta.bias" in found[0], (
        found
    )
    assert json_shown(value) in found[0]


@pytest.mark.parametrize("kind", ["pair", "probe", "train", "judgment"])
@pytest.mark.parametrize("key", GROUPING_META)
@pytest.mark.parametrize("value", [[], {"a": 1}, [1, 2]])
def test_grouping_meta_must_be_a_scalar(kind, key, value, rows):
    found = problems(kind, {**rows[kind], "meta": {key: value}})
    assert any(f"meta.{key}" in line and json_kind(value) in line for line in found), found


@pytest.mark.parametrize("kind", ["probe", "judgment"])
@pytest.mark.parametrize("value", ["false", 0, 1, None, "no"])
def test_a_side_flag_is_a_boolean(kind, value, rows):
    """meta.mirror says which answer a probe's cue is on: "false" (a string) would read as true, so a
    flag that is not a JSON boolean is named, not taken."""
    found = problems(kind, {**rows[kind], "meta": {"mirror": value}})
    assert any("meta.mirror must be true or false" in line and json_shown(value) in line for line in found), (
        found
    )
    parse_record(kind, {**rows[kind], "meta": {"mirror": False}}, "f.jsonl:7")


def test_non_object_row():
    assert problems("pair", [1, 2]) == ["f.jsonl:7: expected a JSON object, got an array"]


# --------------------------------------------------------------------------- round trips
text = st.text(min_size=1, max_size=30).filter(visible)  # what a record holds: visible text
# free-form meta: keys the toolkit reads (meta.bias, meta.pair_id, ...) have rules of their own, tested
# above; a key drawn by chance is never one of them, so every drawn record is valid
meta = st.dictionaries(
    st.text(max_size=8).filter(lambda k: k not in GROUPING_META + FLAG_META),
    st.one_of(st.integers(), st.text(max_size=8), st.none(), st.lists(st.integers(), max_size=3)),
    max_size=4,
)
messages = st.lists(
    st.builds(
        lambda r, c: {"role": r, "content": c},
        st.sampled_from(["system", "user", "assistant"]),
        st.text(max_size=20),
    ),
    max_size=3,
).flatmap(lambda head: text.map(lambda last: head + [{"role": "user", "content": last}]))


@st.composite
def pairs(draw):
    chosen = draw(text)
    rejected = draw(text.filter(lambda s: same_answer(chosen, s) is None))
    return {
        "id": draw(text),
        "source": draw(text),
        "prompt": draw(messages),
        "chosen": chosen,
        "rejected": rejected,
        "meta": draw(meta),
    }


@st.composite
def probes(draw):
    bias = draw(st.sampled_from(list(BIASES)))

    def view():
        a = draw(text)
        return {
            "prompt": draw(messages),
            "response_a": a,
            "response_b": draw(
                text.filter(lambda s: same_answer(a, s) is None)
            ),  # one answer twice is refused
            "correct": draw(st.sampled_from("AB")),
            "context": draw(st.text(max_size=10)),
            "between": draw(st.text(max_size=10)),
        }

    return {
        "id": draw(text),
        "bias": bias,
        "category": BIASES[bias].category,
        "original": view(),
        "injected": view(),
        "meta": draw(meta),
    }


@st.composite
def train_rows(draw):
    row = draw(pairs())
    del row["source"]
    other = text.filter(lambda s: same_answer(row["chosen"], s) is None)  # the chosen answer again is refused
    row["bias_negatives"] = draw(
        st.lists(
            st.builds(lambda b, t: {"bias": b, "text": t}, st.sampled_from(list(BIASES)), other), max_size=4
        )
    )
    return row


judgments = st.builds(
    lambda p, v, j, r, verdict, scores, meta: {
        "probe_id": p,
        "view": v,
        "judge": j,
        "raw": r,
        "verdict": verdict,
        "scores": scores,
        "correct": "A",
        "meta": meta,
    },
    text,
    st.sampled_from(["original", "injected"]),
    text,
    st.text(max_size=40),
    st.sampled_from(["A", "B", "tie", "invalid"]),
    st.one_of(st.none(), st.fixed_dictionaries({"A": st.floats(-1e6, 1e6), "B": st.floats(-1e6, 1e6)})),
    meta,
)

STRATEGIES = {"pair": pairs(), "probe": probes(), "train": train_rows(), "judgment": judgments}


@pytest.mark.parametrize("kind", list(STRATEGIES))
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_round_trip(kind, fmt, data, tmp_path):
    unique = (lambda r: (r["probe_id"], r["view"])) if kind == "judgment" else (lambda r: r["id"])
    raw = data.draw(st.lists(STRATEGIES[kind], min_size=1, max_size=4, unique_by=unique))  # ids are unique
    records = [parse_record(kind, r) for r in raw]
    path = tmp_path / f"{kind}.{fmt}"
    (write_jsonl if fmt == "jsonl" else write_parquet)(path, records)
    back = read_records(path, kind)
    assert [r.to_dict() for r in back] == [r.to_dict() for r in records]
    if fmt == "jsonl":  # the file is plain JSON, one record a line, meta last
        first = json.loads(path.read_text(encoding="utf-8").split("\n")[0])
        assert list(first)[-1] == "meta"


def test_probes_and_rows_that_measure_nothing_are_refused(tmp_path):
    """A view whose two answers are one, a probe whose cue was never written in (read for use: validate),
    and a training row whose bias negative is the chosen answer."""
    from biasaware.io import validate_rows
    from biasaware.judging.judge_format import RECORD_CHECKS

    view = {
        "prompt": [{"role": "user", "content": "q"}],
        "response_a": "x",
        "response_b": "y",
        "correct": "A",
    }
    probe = {"id": "p", "bias": "authority", "category": "superficial_quality", "original": view, "meta": {}}
    row = {"id": "t", "prompt": view["prompt"], "chosen": "a", "rejected": "b", "meta": {}}
    cases = [
        ("probe", {**probe, "injected": view}, "injected is identical to original: no cue was written in"),
        ("probe", {**probe, "injected": {**view, "response_b": "x"}}, "injected.response_b is identical to"),
        (
            "probe",
            {**probe, "injected": {**view, "response_b": "x\u2060"}},
            "injected.response_b is identical to injected.response_a but for white space",
        ),
        ("train", {**row, "bias_negatives": [{"bias": "length", "text": "a"}]}, "bias_negatives[0].text is"),
    ]
    for kind, record, said in cases:
        path = tmp_path / f"{kind}.jsonl"
        path.write_text(json.dumps(record) + "\n")
        assert said in validate_rows(path, kind, checks=RECORD_CHECKS)[2][0]
    good = {**probe, "injected": {**view, "response_a": "x, says an expert"}}
    (tmp_path / "good.jsonl").write_text(json.dumps(good) + "\n")
    assert validate_rows(tmp_path / "good.jsonl", "probe", checks=RECORD_CHECKS)[2] == []
