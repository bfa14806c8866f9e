"""Names that only the Hugging Face Hub can resolve: decide locally first, ask the hub once.

A name that is not a built-in name or a local path is a hub name. Before a library spends its
retries on it (transformers and datasets retry an unreachable hub for most of a minute),
:func:`check_hub_name` asks the hub once with a short timeout: an unknown repository or an
unreachable hub without a cached copy is a :class:`BiasAwareError` that says what to use instead.
With ``HF_HUB_OFFLINE`` set nothing is asked: a model name without a cached copy is refused at once.
"""

from __future__ import annotations

import os

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
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    info = huggingface_hub.model_info if repo_type == "model" else huggingface_hub.dataset_info
    repo_id = name.split(":", 1)[0] if repo_type == "dataset" else name

    def cached() -> bool:
        probe = "config.json" if repo_type == "model" else "README.md"
        return isinstance(huggingface_hub.try_to_load_from_cache(repo_id, probe, repo_type=repo_type), str)

    if offline():  # nothing is asked; a model's cache decides (a dataset's own cache may live elsewhere)
        if repo_type == "model" and not cached():
            raise BiasAwareError(
                f"{name!r} is not a local path, and with HF_HUB_OFFLINE set the hub is not asked; the cache has no "
                f"copy of it; {instead}"
            )
        return
    try:
        info(repo_id, timeout=TIMEOUT_S)
    except GatedRepoError:
        return  # it exists; the token decides, and the library says so
    except RepositoryNotFoundError:
        raise BiasAwareError(
            f"{name!r} is not a local path and the hub has no {what} of that name; {instead}"
        ) from None
    except Exception:  # no connection, DNS, timeout, proxy: one try, then decide from the cache
        if not cached():
            raise BiasAwareError(
                f"{name!r} is not a local path, so it would load from the Hugging Face Hub, which is not reachable "
                f"from here and has no cached copy; {instead}"
            ) from None
