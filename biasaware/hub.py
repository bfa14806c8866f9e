"""Names that only the Hugging Face Hub can resolve: decide locally first, ask the hub once.

A name that is not a built-in name or a local path is a hub name. Before a library spends its
retries on it (transformers and datasets retry an unreachable hub for most of a minute),
:func:`check_hub_name` asks the hub once with a short timeout: an unknown repository or an
unreachable hub without a cached copy is a :class:`BiasAwareError` that says what to use instead.
With ``HF_HUB_OFFLINE`` set nothing is asked: a model name without a cached copy is refused at once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from biasaware.errors import BiasAwareError

TIMEOUT_S = 5.0


def offline() -> bool:
    """``HF_HUB_OFFLINE`` as huggingface_hub read it at import, or as set since."""
    import huggingface_hub.constants

    set_now = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    return bool(huggingface_hub.constants.HF_HUB_OFFLINE) or set_now


def check_hub_name(name: str, repo_type: str, what: str, instead: str) -> None:
    """Refuse ``name`` now when the hub does not have it, or cannot be reached and the local
    cache has no copy. ``what`` names the thing ("model", "dataset"); ``instead`` says what to
    give instead (e.g. the built-in names)."""
    import huggingface_hub
    from huggingface_hub.errors import GatedRepoError, HFValidationError, RepositoryNotFoundError
    from huggingface_hub.utils import validate_repo_id

    info = huggingface_hub.model_info if repo_type == "model" else huggingface_hub.dataset_info
    repo_id = name.split(":", 1)[0] if repo_type == "dataset" else name
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        raise BiasAwareError(
            f"{name!r} names no local file or folder, nor a {what} name the hub could hold (letters, digits, '-', '_' and "
            f"'.', with one '/' after an owner); {instead}"
        ) from None

    def cached() -> bool:
        probe = "config.json" if repo_type == "model" else "README.md"
        return isinstance(huggingface_hub.try_to_load_from_cache(repo_id, probe, repo_type=repo_type), str)

    if offline():  # nothing is asked; a model's cache decides (a dataset's own cache may live elsewhere)
        if repo_type == "model" and not cached():
            raise BiasAwareError(
                f"{name!r} names no local file or folder, and with HF_HUB_OFFLINE set the hub is not asked; the cache has no "
                f"copy of it; {instead}"
            )
        return
    try:
        info(repo_id, timeout=TIMEOUT_S)
    except GatedRepoError:
        return  # it exists; the token decides, and the library says so
    except RepositoryNotFoundError:
        raise BiasAwareError(
            f"{name!r} names no local file or folder and the hub has no {what} of that name; {instead}"
        ) from None
    except Exception:  # no connection, DNS, timeout, proxy: one try, then decide from the cache
        if not cached():
            raise BiasAwareError(
                f"{name!r} names no local file or folder, so it would load from the Hugging Face Hub, which is not reachable "
                f"from here and has no cached copy; {instead}"
            ) from None


def raised_by_hub(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside ``huggingface_hub`` (an upload, a repository created, the
    connection under them), whichever HTTP client it used: told apart from a training error."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith("huggingface_hub"):
            return True
        tb = tb.tb_next
    return False


@contextmanager
def hub_calls(
    repo_id: str, token: str | None = None, after: str = "", only_hub: bool = False
) -> Iterator[None]:
    """Turn an error raised in the block (a block of hub calls: every error; ``only_hub``, a block that
    does other work too: those raised inside huggingface_hub, :func:`raised_by_hub`) into a
    :class:`BiasAwareError` naming ``repo_id`` with the first line of its message, the ``token`` (or
    ``HF_TOKEN``) shown as ``***``; ``after``: what the user has and can do next."""
    try:
        yield
    except Exception as exc:  # the network boundary: HTTP, connection and validation errors alike
        if only_hub and not raised_by_hub(exc):
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        for secret in (token, os.environ.get("HF_TOKEN")):
            if secret and len(secret) >= 8:  # a real token; a short value would mangle ordinary words
                message = message.replace(secret, "***")
        raise BiasAwareError(f"pushing to {repo_id} failed: {message}{after}") from None


# The license identifiers a Hub card's `license:` takes (huggingface.co/docs/hub/repositories-licenses);
# another license is `other`, with its text in the repository.
HUB_LICENSES = frozenset(
    """apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0
    bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc
    cc0-1.0 cc-by-2.0 cc-by-2.5 cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0
    cc-by-nc-4.0 cc-by-nd-4.0 cc-by-nc-nd-3.0 cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0
    cdla-sharing-1.0 cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0 epl-1.0 epl-2.0 etalab-2.0 eupl-1.1
    agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0 odc-by odbl openrail++
    osl-3.0 postgresql ofl-1.1 ncsa unlicense zlib pddl lgpl-lr deepfloyd-if-license llama2 gemma unknown
    other""".split()
)


def check_license(license: str | None, flag: str = "--license") -> str | None:
    """``license`` when it is one of the Hub's identifiers (:data:`HUB_LICENSES`), else an error."""
    if license is not None and license not in HUB_LICENSES:
        raise BiasAwareError(
            f"{flag} {license!r} is not a license identifier of the Hugging Face Hub (e.g. apache-2.0, mit, "
            "cc-by-4.0; the list: huggingface.co/docs/hub/repositories-licenses); give `other` for another license"
        )
    return license


def check_repo_name(name: str, flag: str = "--name") -> str:
    """``name`` when it is a valid Hub repository id (``name`` or ``namespace/name``), else an error: it is
    written into a card's title and into code that loads the model by that id."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:  # its words end "Use `repo_type` argument if needed", which no flag sets here
        raise BiasAwareError(
            f"{flag} {name!r} is not a Hugging Face repository id: NAME or OWNER/NAME, of letters, digits, '-', "
            "'_' and '.', neither starting nor ending with '-' or '.', at most 96 characters"
        ) from None
    return name
