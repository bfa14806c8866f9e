"""The installed version of biasaware, recorded in every manifest, card and summary it writes."""

import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    __version__ = version("biasaware")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+local"


def source_commit() -> str | None:
    """The git commit of the checkout this copy of biasaware runs from, with ``+changes`` when files
    differ from it; ``None`` for an installed package (no checkout) or where git is missing. Recorded
    beside results, so a published figure names the code that wrote it."""

    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+changes" if status.stdout.strip() else "")
