import pytest

from biasaware.errors import BiasAwareError
from biasaware.taxonomy import BIAS_NAMES, BIASES, CATEGORIES, biases_in, get_bias, parse_bias_list


def test_twelve_biases_in_four_categories():
    assert len(BIAS_NAMES) == 12
    assert {BIASES[n].category for n in BIAS_NAMES} == set(CATEGORIES)
    assert [b.name for b in biases_in("security")] == ["injection", "masterkey"]  # outside the taxonomy
    assert [b.name for b in biases_in("superficial_quality")] == [
        "length",
        "authority",
        "beauty",
        "assertiveness",
        "sycophancy",
        "sentiment",
        "concreteness",
    ]
    assert [b.name for b in biases_in("context")] == ["reflection", "bandwagon"]
    assert [b.name for b in biases_in("presentation")] == ["position"]


def test_reward_model_applicability():
    assert {n for n, b in BIASES.items() if not b.applies_to_reward_model} == {
        "bandwagon",
        "reflection",
        "position",
    }


def test_unknown_bias_lists_valid_names():
    with pytest.raises(BiasAwareError, match="valid biases: length, authority"):
        get_bias("verbosity")


def test_parse_bias_list():
    assert parse_bias_list("all") == list(BIAS_NAMES)
    assert parse_bias_list("diversity,length,gender") == ["gender", "race", "length"]
    assert parse_bias_list("all,injection,length") == [*BIAS_NAMES, "injection"]
    with pytest.raises(BiasAwareError):
        parse_bias_list("length,nope")
