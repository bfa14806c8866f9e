"""The installed version of biasaware, recorded in every manifest, card and summary it writes."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("biasaware")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+local"
