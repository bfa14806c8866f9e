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
