"""The toolkit's own folder (the cache), and one run at a time in a folder it writes.

**One run a folder.** Every command that writes a folder (``--out``, a recipe's ``output_dir``) holds it
from the moment it checks it (:func:`biasaware.io.check_out_folder`) until the command returns. While it
runs, another run into the same folder, into a folder inside it or into a folder that holds it is refused
at once (exit 2, naming the process, its command and since when), never let in to mix its files with the
first run's. The command line's commands, the Python API's functions and a recipe's entry point each open a
:func:`command` scope; a run's folders are let go when its scope ends, so a notebook that built a folder does
not block a terminal that resumes it. Called outside any scope, the check refuses a held folder and holds
nothing.

**How.** An operating-system file lock (``filelock``: ``flock`` on Unix), one a folder, kept in the cache
(``locks/``, named by a hash of the folder's resolved path), so nothing is added to the folder itself: no
folder's own rules ("not empty and holds no build") change, and a run that failed leaves nothing that
blocks the corrected command. The system lets a lock go when its process ends, killed or not. Beside each
held lock a small JSON file names its holder (process id, command words, start time, owner), for the
message and for the holder's own processes:

* a run that holds a folder passes its owner to the processes it starts (``BIASAWARE_FOLDER_OWNER``): an
  experiment's launched training stages write inside its folder;
* the ranks of one ``accelerate launch`` (or torchrun) share an owner (the launch's rendezvous address), so
  one of them holds the folder and the others write beside it.

The threads of one process count as one run. Locks are seen by the processes that share the cache folder
(``BIASAWARE_CACHE``) on a file system with ``flock``: the processes of one machine, as a rule.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from biasaware.errors import BiasAwareError

OWNER_ENV = "BIASAWARE_FOLDER_OWNER"
# how long a launched rank waits for the rank that took the lock to say whose it is
HOLDER_WAIT_S = 5.0


def cache_dir() -> Path:
    """Where converted built-in models, endpoint replies and folder locks live: ``$BIASAWARE_CACHE`` or
    ``~/.cache/biasaware``."""
    root = Path(
        os.environ.get("BIASAWARE_CACHE")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "biasaware")
    )
    for place in (root, *root.parents):  # named before a model is converted into it
        if place.exists() and not place.is_dir():
            named = "BIASAWARE_CACHE" if os.environ.get("BIASAWARE_CACHE") else "the cache folder"
            raise BiasAwareError(
                f"{named} {root}: {place} is a file; it must be a folder (converted built-in models and "
                "endpoint replies are kept there)"
            )
    return root


class _Scope(threading.local):
    depth = 0
    held: dict[Path, FileLock]
    env_set = False

    def __init__(self) -> None:
        self.held = {}


_scope = _Scope()


def owner() -> str:
    """Who this process writes for: the run that started it (inherited), the launch its rank belongs to,
    or itself."""
    inherited = os.environ.get(OWNER_ENV)
    if inherited:
        return inherited
    if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        where = f"{os.environ.get('MASTER_ADDR', '')}:{os.environ.get('MASTER_PORT', '')}"
        return f"launch:{where}:{os.environ.get('TORCHELASTIC_RUN_ID', '')}"  # every node's ranks alike
    return f"run:{socket.gethostname()}:{os.getpid()}"


def _locks() -> Path | None:
    """The lock folder, made if needed: the cache's, else (a cache that cannot be made) the temporary folder's;
    ``None`` when neither can be made (nothing is held then)."""
    try:
        places = [cache_dir() / "locks"]
    except BiasAwareError:
        places = []
    for root in (
        *places,
        Path(tempfile.gettempdir()) / f"biasaware-locks-{getattr(os, 'getuid', lambda: 'user')()}",
    ):
        try:
            root.mkdir(parents=True, exist_ok=True)
            return root
        except OSError:
            continue
    return None


def _key(folder: Path) -> str:
    return hashlib.sha256(str(folder).encode()).hexdigest()[:32]


def _words() -> str:
    """The command's words before its first flag (``biasaware build bench``): no value a flag carries (an
    address with credentials) is written down."""
    first = sys.argv[0] if sys.argv and sys.argv[0] else ""
    words = [Path(first).name if first not in ("", "-c") else f"python {first}".strip()]
    for word in sys.argv[1:4]:
        if word.startswith("-") or "/" in word or "=" in word:
            break
        words.append(word)
    return " ".join(words)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _holder(root: Path, folder: Path) -> dict | None:
    """Who holds ``folder``'s lock, when someone other than this thread's scope does (``None``: nobody)."""
    lock_path = root / f"{_key(folder)}.lock"
    if not lock_path.exists():
        return None
    probe = FileLock(str(lock_path), timeout=0)
    try:
        probe.acquire()
    except Timeout:
        return _said(root, folder)
    except OSError:
        return None  # a lock file this user cannot open: not ours to judge
    try:  # free: a holder killed before it let go left its note
        (root / f"{_key(folder)}.json").unlink(missing_ok=True)
    finally:
        probe.release()
    return None


def _said(root: Path, folder: Path) -> dict:
    """The held lock's note; a moment's wait when its holder has just taken it and not yet written it."""
    note = root / f"{_key(folder)}.json"
    deadline = time.monotonic() + HOLDER_WAIT_S
    while True:
        try:
            said = json.loads(note.read_text())
            if said.get("host") != socket.gethostname() or _alive(int(said.get("pid", 0))):
                return said
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        if time.monotonic() > deadline:
            return {"folder": str(folder)}
        time.sleep(0.05)


def _busy(given: object, what: str, folder: Path, place: Path, said: dict) -> BiasAwareError:
    who = ", ".join(
        part
        for part in (
            f"process {said['pid']}" if "pid" in said else "",
            f"`{said['command']}`" if said.get("command") else "",
            f"since {said['since']}" if said.get("since") else "",
        )
        if part
    )
    if folder == place:
        where = f"{what} {given} is in use by another biasaware run"
    elif folder in place.parents:
        where = f"{what} {given} is inside {folder}, which another biasaware run is writing"
    else:
        where = f"{what} {given} holds {folder}, which another biasaware run is writing"
    named = f"`{what}`" if what.isidentifier() else what  # a keyword or setting (`out`), or a flag (--out)
    return BiasAwareError(
        f"{where} ({who or 'its holder unknown'}); wait for it to end, or give another {named}"
    )


def _descendants(root: Path, place: Path) -> Iterator[Path]:
    for note in root.glob("*.json"):
        try:
            folder = Path(json.loads(note.read_text())["folder"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if place in folder.parents:
            yield folder


def hold_folder(given: str | os.PathLike, what: str = "--out") -> None:
    """Refuse ``given`` (a folder about to be written; ``what`` names the option that gave it) while another
    run holds it, a folder it lies in, or a folder inside it; inside a :func:`command` scope, hold it until
    the scope ends."""
    root = _locks()
    if root is None:
        return
    place = Path(given).expanduser().resolve()
    mine = owner()
    scope, took = _scope, False
    if scope.depth and place not in scope.held and not any(p in scope.held for p in place.parents):
        lock = FileLock(str(root / f"{_key(place)}.lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            said = _said(root, place)
            if said.get("owner") != mine:
                raise _busy(given, what, place, place, said) from None
        except OSError:
            return  # a lock this user cannot open (another user's): the folder's own checks still apply
        else:
            scope.held[place], took = lock, True
            _write_note(root, place, mine)
    for folder in (place, *place.parents, *_descendants(root, place)):
        if folder in scope.held:
            continue
        said = _holder(root, folder)
        if said is not None and said.get("owner") != mine:
            if took:
                _let_go(root, place)
            raise _busy(given, what, folder, place, said)


def _write_note(root: Path, place: Path, mine: str) -> None:
    note = {
        "folder": str(place),
        "owner": mine,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": _words(),
        "since": _dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
    }
    part = root / f".{_key(place)}.{os.getpid()}.part"
    part.write_text(json.dumps(note))
    os.replace(part, root / f"{_key(place)}.json")
    if not os.environ.get(OWNER_ENV):  # what this run starts writes for it
        os.environ[OWNER_ENV] = mine
        _scope.env_set = True


def _let_go(root: Path, place: Path) -> None:
    lock = _scope.held.pop(place, None)
    if lock is None:
        return
    try:
        (root / f"{_key(place)}.json").unlink(missing_ok=True)
    finally:
        lock.release()


@contextlib.contextmanager
def command() -> Iterator[None]:
    """A command's span: the folders it holds (:func:`hold_folder`) are let go when the outermost scope of
    this thread ends, however it ends. Also a decorator."""
    scope = _scope
    scope.depth += 1
    try:
        yield
    finally:
        scope.depth -= 1
        if not scope.depth:
            root = _locks() if scope.held else None
            for place in list(scope.held):
                if root is not None:
                    _let_go(root, place)
            scope.held.clear()
            if scope.env_set:
                os.environ.pop(OWNER_ENV, None)
                scope.env_set = False
