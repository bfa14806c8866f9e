"""biasaware: build bias probes, train and evaluate LLM judges that resist judgment bias.

The library holds the nouns (taxonomy, records, models, I/O); the entry points under
``data_builders/``, ``recipes/`` and ``eval/`` and the ``biasaware`` command wire them. The names
exported here are the Python API (:mod:`biasaware.api`, ``docs/python-api.md``).
"""

from biasaware.api import (
    Judge,
    Verdict,
    build_bench,
    build_train,
    compare,
    evaluate,
    judge_pair,
    load_judge,
    preflight,
    score_response,
)
from biasaware.errors import BiasAwareError
from biasaware.training.judge_reward import reward_function
from biasaware.version import __version__

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
    "preflight",
    "reward_function",
    "score_response",
]
