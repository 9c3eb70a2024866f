"""The ``Embedder`` interface, the embedding namespace, and the vector byte format.

Every provider turns a batch of texts into a float32 array of shape ``(n, d)`` whose rows are
L2-normalised, in the order the texts were given. Because rows are unit vectors, a dot product
between two of them is their cosine similarity, in [-1, 1], higher meaning more similar.

Vectors are stored per :class:`EmbeddingNamespace`: the provider, the model, the number of
dimensions and the version of the text the corpus fed in. Changing any of these gives a new
namespace, so a model switch re-embeds instead of mixing two vector spaces.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from gitquarry.embedding.text import CHARS_PER_TOKEN_LOWER, truncate_to_token_budget

#: Where text sent to a provider goes. ``local_process``: never leaves this process.
#: ``local_network``: a server on this machine or a network the user controls.
#: ``remote``: a third party. ``unknown``: the user does not know (treated like ``remote``).
DATA_BOUNDARIES: Final = ("local_process", "local_network", "remote", "unknown")
#: Boundaries through which repository content may be sent without ``allow_remote``.
SAFE_DATA_BOUNDARIES: Final = ("local_process", "local_network")

#: dtype of every vector gitquarry stores: little-endian float32.
VECTOR_DTYPE: Final = np.dtype("<f4")


def _escape_key_part(part: str) -> str:
    return part.replace("%", "%25").replace("|", "%7C")


@dataclass(frozen=True, kw_only=True)
class EmbeddingNamespace:
    """The identity of a vector space: vectors from two namespaces are never compared.

    ``provider`` is the registry name (``"minilm-onnx"``, ``"openai"``, ...), ``model`` the
    provider's model identifier (a name, a path, or a served model id), ``dimensions`` the
    vector length, and ``text_format`` a version string chosen by the corpus for the text it
    embeds (``"commit-v1"``): bump it when the document text changes and old vectors become
    stale.
    """

    provider: str
    model: str
    dimensions: int
    text_format: str

    @property
    def key(self) -> str:
        """A stable string naming this namespace, e.g.
        ``"minilm-onnx|all-MiniLM-L6-v2-onnx-int8|384|commit-v1"``.

        This is an identity and hashing contract: the store keys vectors by it, so its format
        never changes. It is the four fields in declaration order, joined with ``|``, with
        ``%`` and ``|`` inside a field written as ``%25`` and ``%7C`` (so two different
        namespaces never share a key). Compare keys for equality only; never parse them.
        """
        parts = (self.provider, self.model, str(self.dimensions), self.text_format)
        return "|".join(_escape_key_part(p) for p in parts)


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors.

    Subclasses set :attr:`provider`, :attr:`model` and :attr:`data_boundary`, and implement
    :attr:`dimensions`, :attr:`max_tokens` and :meth:`_embed_batch`. Providers load their model
    lazily: constructing one is cheap, and the first :meth:`embed` pays the load.
    """

    #: registry name of the provider.
    provider: str = ""
    #: model identifier as it appears in the namespace.
    model: str = ""
    #: where text sent to this embedder goes (one of :data:`DATA_BOUNDARIES`).
    data_boundary: str = "local_process"
    #: model ids this provider used in earlier versions and will never produce again: their
    #: stored vectors are deleted once the current model's namespace is complete.
    retired_models: tuple[str, ...] = ()

    @property
    @abstractmethod
    def dimensions(self) -> int:
        """Length of each vector."""

    @property
    @abstractmethod
    def max_tokens(self) -> int:
        """Tokens of each text the model reads; the rest of a longer text is dropped."""

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Embed a non-empty list; return ``(len(texts), dimensions)`` float32, any norm."""

    def _embed_truncated(self, texts: list[str], max_tokens: int) -> np.ndarray:
        """Embed a non-empty list reading at most ``max_tokens`` (< :attr:`max_tokens`) tokens
        of each text. This default cuts by characters at the lower chars-per-token bound (so
        the text holds at most about ``max_tokens`` tokens); providers with a tokenizer
        override it to cut exactly."""
        return self._embed_batch(
            [truncate_to_token_budget(t, max_tokens, chars_per_token=CHARS_PER_TOKEN_LOWER)
             for t in texts]
        )

    def embed(self, texts: Sequence[str], *, max_tokens: int | None = None) -> np.ndarray:
        """Embed ``texts``; returns float32 ``(len(texts), dimensions)``, rows L2-normalised.

        Row ``i`` is the vector of ``texts[i]``. An empty list gives shape ``(0, dimensions)``.
        Texts longer than :attr:`max_tokens` tokens are truncated, never an error.
        ``max_tokens`` lowers that budget (a corpus's document budget, e.g. 128 tokens per
        commit); None or a value >= :attr:`max_tokens` reads the model's full length.

        :raises TypeError: an item is not a ``str``.
        :raises ValueError: ``max_tokens`` is less than 1.
        :raises EmbeddingError: the provider failed (a subclass says how).
        """
        items = list(texts)
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"embed() takes strings, got {type(item).__name__}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if not items:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if max_tokens is not None and max_tokens < self.max_tokens:
            raw = self._embed_truncated(items, max_tokens)
        else:
            raw = self._embed_batch(items)
        return l2_normalise(np.asarray(raw, dtype=np.float32))

    def namespace(self, text_format: str) -> EmbeddingNamespace:
        """The namespace of vectors this embedder makes from text in ``text_format``."""
        return EmbeddingNamespace(
            provider=self.provider,
            model=self.model,
            dimensions=self.dimensions,
            text_format=text_format,
        )

    def close(self) -> None:  # noqa: B027 - optional hook, most providers hold nothing
        """Release resources (sockets, sessions). Safe to call more than once."""


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Return ``vectors`` (2-D) as float32 with each row scaled to unit L2 norm.

    A zero row stays zero (it has no direction); providers do not produce one for real text.
    """
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return (array / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def to_blob(vector: np.ndarray) -> bytes:
    """Serialise one vector as little-endian float32 bytes (``4 * dimensions`` bytes).

    This is the storage format for vector BLOBs on every platform.

    :raises ValueError: ``vector`` is not one-dimensional.
    """
    array = np.asarray(vector)
    if array.ndim != 1:
        raise ValueError(f"to_blob takes one vector, got shape {array.shape}")
    return array.astype(VECTOR_DTYPE, copy=False).tobytes()


def from_blob(blob: bytes, dimensions: int) -> np.ndarray:
    """Read a vector written by :func:`to_blob`; returns native float32 of shape ``(dimensions,)``.

    :raises ValueError: ``blob`` is not ``4 * dimensions`` bytes long.
    """
    if len(blob) != 4 * dimensions:
        raise ValueError(f"vector blob has {len(blob)} bytes, expected {4 * dimensions}")
    return np.frombuffer(blob, dtype=VECTOR_DTYPE).astype(np.float32)
