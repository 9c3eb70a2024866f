"""The provider registry and ``create_embedder``: config in, embedder out, boundary enforced.

Built-in providers are registered through the same hook plugins use. A plugin package
registers more through the ``gitquarry.embedders`` entry-point group: each entry point loads an
:class:`EmbedderProvider` (or a zero-argument callable returning one). Entry points are read
lazily, the first time the registry is consulted, never at import (looking up a built-in
provider's name before then does not read them: no plugin may take that name); one that
fails to load or reuses a registered name is skipped with a warning, so a broken plugin
cannot break the default provider. Code (tests, embedding applications) may also call
:func:`register_provider` and :func:`unregister_provider` directly.

Data boundary rule, for ``purpose="index"`` and ``purpose="query"`` alike: text goes only to a
provider whose boundary is ``local_process`` or ``local_network``; ``remote``, ``unknown`` or
an undeclared boundary needs ``[embedding] allow_remote = true``. Queries get the same rule
although they are the user's own text: queries often quote code from the repository, and a
configuration refused for indexing has no stored vectors to query against anyway, so one rule
is both safer and simpler to explain.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding.base import DATA_BOUNDARIES, SAFE_DATA_BOUNDARIES, Embedder
from gitquarry.errors import (
    DataBoundaryError,
    EmbeddingConfigInvalidError,
    UndeclaredDataBoundaryError,
    UnknownEmbeddingProviderError,
)

ENTRY_POINT_GROUP: Final = "gitquarry.embedders"
#: the provider name that turns embeddings off; never registered.
NO_PROVIDER: Final = "none"

EmbedderFactory = Callable[[EmbeddingConfig], Embedder]


@dataclass(frozen=True, kw_only=True)
class EmbedderProvider:
    """A registered provider: its ``[embedding] provider`` name and how to build it.

    ``factory`` receives the whole ``[embedding]`` config and returns an :class:`Embedder`; it
    must be cheap (load models lazily) and raise an ``EmbeddingError`` subclass for a bad
    config. ``data_boundary`` is fixed for in-process providers (``"local_process"``); ``None``
    means the user declares it in ``[embedding] data_boundary`` (HTTP providers).
    """

    name: str
    factory: EmbedderFactory
    data_boundary: str | None = None
    description: str = ""


def _create_minilm(config: EmbeddingConfig) -> Embedder:
    from gitquarry.embedding import minilm

    return minilm.create(config)


def _create_onnx(config: EmbeddingConfig) -> Embedder:
    from gitquarry.embedding import onnx_dir

    return onnx_dir.create(config)


def _create_sbert(config: EmbeddingConfig) -> Embedder:
    from gitquarry.embedding import sbert

    return sbert.create(config)


def _create_openai(config: EmbeddingConfig) -> Embedder:
    from gitquarry.embedding import openai_http

    return openai_http.create(config)


_BUILTIN_PROVIDERS: Final = (
    EmbedderProvider(
        name="minilm-onnx",
        factory=_create_minilm,
        data_boundary="local_process",
        description="bundled all-MiniLM-L6-v2 (int8) on ONNX Runtime, offline (default)",
    ),
    EmbedderProvider(
        name="onnx",
        factory=_create_onnx,
        data_boundary="local_process",
        description="an ONNX encoder directory on ONNX Runtime, offline (accurate profile: "
        "all-mpnet-base-v2 int8 from tools/build_encoder_int8.py)",
    ),
    EmbedderProvider(
        name="sentence-transformers",
        factory=_create_sbert,
        data_boundary="local_process",
        description="any local sentence-transformers model (optional extra, needs torch)",
    ),
    EmbedderProvider(
        name="openai",
        factory=_create_openai,
        data_boundary=None,
        description="an OpenAI-compatible /embeddings endpoint (TEI, vLLM, Ollama, LM Studio)",
    ),
)

_providers: dict[str, EmbedderProvider] = {}
_loaded = False
_lock = threading.RLock()


def entry_points(*, group: str) -> Any:
    """``importlib.metadata.entry_points(group=group)``, imported on first use (it imports
    ``email``, ``socket``…: ~30 ms CPU of a cold hybrid query, issue 21 §1)."""
    from importlib.metadata import entry_points as installed_entry_points

    return installed_entry_points(group=group)


def _load_entry_points() -> None:
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = entry_point.load()
            provider = loaded if isinstance(loaded, EmbedderProvider) else loaded()
            if not isinstance(provider, EmbedderProvider):
                raise TypeError(f"expected an EmbedderProvider, got {type(provider).__name__}")
        except Exception as exc:  # a broken plugin must not break the default provider
            warnings.warn(
                f"skipping embedding provider plugin {entry_point.name!r}: {exc}",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        if provider.name in _providers or provider.name == NO_PROVIDER:
            warnings.warn(
                f"skipping embedding provider plugin {entry_point.name!r}: the name "
                f"{provider.name!r} is already taken",
                RuntimeWarning,
                stacklevel=2,
            )
            continue
        _providers[provider.name] = provider


def _ensure_loaded() -> None:
    global _loaded
    with _lock:
        if _loaded:
            return
        _loaded = True
        for provider in _BUILTIN_PROVIDERS:
            _providers.setdefault(provider.name, provider)
        _load_entry_points()


def register_provider(provider: EmbedderProvider, *, replace: bool = False) -> None:
    """Add ``provider`` to the registry.

    :raises ValueError: the name is ``"none"``, or is taken and ``replace`` is false, or
        ``provider.data_boundary`` is not one of :data:`DATA_BOUNDARIES` or None.
    """
    if provider.name == NO_PROVIDER:
        raise ValueError(f"{NO_PROVIDER!r} is reserved for 'no embeddings'")
    if provider.data_boundary is not None and provider.data_boundary not in DATA_BOUNDARIES:
        raise ValueError(f"unknown data boundary {provider.data_boundary!r}")
    _ensure_loaded()
    with _lock:
        if provider.name in _providers and not replace:
            raise ValueError(f"embedding provider {provider.name!r} is already registered")
        _providers[provider.name] = provider


def unregister_provider(name: str) -> None:
    """Remove the provider called ``name``; no error if there is none."""
    _ensure_loaded()
    with _lock:
        _providers.pop(name, None)


def get_provider(name: str) -> EmbedderProvider:
    """The registered provider called ``name``.

    :raises UnknownEmbeddingProviderError: no provider has that name.
    """
    with _lock:
        if not _loaded:  # a built-in name is answered without reading the plugins: a plugin
            # may not take a built-in's name (``_load_entry_points``), so the answer is the same
            for builtin in _BUILTIN_PROVIDERS:
                if builtin.name == name:
                    return builtin
    _ensure_loaded()
    with _lock:
        provider = _providers.get(name)
        if provider is None:
            raise UnknownEmbeddingProviderError(name, [*_providers, NO_PROVIDER])
        return provider


def provider_names() -> list[str]:
    """Names of every registered provider, sorted (``"none"`` is not one)."""
    _ensure_loaded()
    with _lock:
        return sorted(_providers)


def check_data_boundary(provider: str, declared: str, *, allow_remote: bool) -> str:
    """Apply the data boundary rule; return the effective boundary.

    ``declared`` is the provider's boundary, ``""`` when undeclared (treated as ``unknown``).

    :raises EmbeddingConfigInvalidError: ``declared`` is not a known boundary.
    :raises UndeclaredDataBoundaryError: undeclared, and ``allow_remote`` is false.
    :raises DataBoundaryError: ``remote`` or ``unknown``, and ``allow_remote`` is false.
    """
    if declared and declared not in DATA_BOUNDARIES:
        raise EmbeddingConfigInvalidError(
            "data_boundary", f"{declared!r} is not one of {', '.join(DATA_BOUNDARIES)}"
        )
    if declared in SAFE_DATA_BOUNDARIES or allow_remote:
        return declared or "unknown"
    if not declared:
        raise UndeclaredDataBoundaryError(provider)
    raise DataBoundaryError(provider, declared)


def create_embedder(
    config: EmbeddingConfig, *, purpose: Literal["index", "query"]
) -> Embedder | None:
    """Build the embedder ``config`` describes, or None for ``provider = "none"``.

    ``purpose`` says what the text will be: repository content (``"index"``) or search queries
    (``"query"``). Both follow the same data boundary rule (see the module docstring). The
    effective boundary is the provider's own for in-process providers and
    ``config.data_boundary`` for the others. Cheap: models load on first ``embed``.

    :raises UnknownEmbeddingProviderError: ``config.provider`` is not registered.
    :raises DataBoundaryError: the boundary is ``remote``/``unknown``/undeclared (subclass
        :class:`UndeclaredDataBoundaryError`) and ``config.allow_remote`` is false.
    :raises EmbeddingError: the provider rejects the config or cannot run here (a subclass
        names the condition: a missing package, model or device, an invalid setting).
    """
    if purpose not in ("index", "query"):
        raise ValueError(f"purpose must be 'index' or 'query', not {purpose!r}")
    if config.provider == NO_PROVIDER:
        return None
    provider = get_provider(config.provider)
    declared = (
        provider.data_boundary if provider.data_boundary is not None else config.data_boundary
    )
    boundary = check_data_boundary(provider.name, declared, allow_remote=config.allow_remote)
    embedder = provider.factory(config)
    embedder.data_boundary = boundary
    return embedder
