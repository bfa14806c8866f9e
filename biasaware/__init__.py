"""biasaware: build bias probes, train and evaluate LLM judges that resist judgment bias.

The library holds the nouns (taxonomy, records, models, I/O); the entry points under
``data_builders/``, ``recipes/`` and ``eval/`` and the ``biasaware`` command wire them. The names
exported here are the Python API (:mod:`biasaware.api`, ``docs/python-api.md``).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("biasaware")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+local"

from biasaware.api import (  # noqa: E402
    Judge,
    Verdict,
    build_bench,
    build_train,
    compare,
    evaluate,
    judge_pair,
    load_judge,
    score_response,
)
from biasaware.errors import BiasAwareError  # noqa: E402
from biasaware.training.judge_reward import reward_function  # noqa: E402

__all__ = [
    "BiasAwareError",
    "Judge",
    "Verdict",
    "__version__",
    "build_bench",
    "build_train",
    "compare",
    "evaluate",
    "judge_pair",
    "load_judge",
    "reward_function",
    "score_response",
]
