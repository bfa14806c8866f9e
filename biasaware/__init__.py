"""biasaware: build bias probes, train and evaluate LLM judges that resist judgment bias.

The library holds the nouns (taxonomy, records, models, I/O); the entry points under
``data_builders/``, ``recipes/`` and ``eval/`` and the ``biasaware`` command wire them.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("biasaware")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+local"

from biasaware.errors import BiasAwareError  # noqa: E402

__all__ = ["BiasAwareError", "__version__"]
