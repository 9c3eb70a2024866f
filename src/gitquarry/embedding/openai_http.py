"""An OpenAI-compatible embeddings endpoint over HTTP: TEI, vLLM, Ollama, LM Studio, OpenAI.

Each batch is one ``POST {url}/embeddings`` with the JSON body ``{"model": ..., "input": [...]}``;
the reply's ``data[i].embedding`` lists (ordered by ``data[i].index``) become the rows.
Vectors are L2-normalised here whatever the server returns. The API key, if any, is read from
the environment variable named by ``api_key_env`` and sent as ``Authorization: Bearer``.

Where the text goes is the user's declaration, ``data_boundary``; the registry refuses to send
repository content through ``remote``, ``unknown`` or an undeclared boundary unless
``allow_remote = true``.

Texts are cut to ``max_tokens * 3`` characters before sending (no tokenizer is available here,
and code runs about 3 characters per token), so a server that rejects over-long inputs
(TEI without ``--auto-truncate``) still accepts them.

Uses the standard library's ``urllib`` (``httpx`` is not a dependency of gitquarry): one
connection per batch, negligible next to the server's embedding time.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any, Final

import numpy as np

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding.base import DATA_BOUNDARIES, Embedder
from gitquarry.embedding.text import CHARS_PER_TOKEN_LOWER, truncate_to_token_budget
from gitquarry.errors import EmbeddingConfigInvalidError, EmbeddingEndpointError

PROVIDER: Final = "openai"
#: tokens assumed per input; most served embedding models read 512.
DEFAULT_MAX_TOKENS: Final = 512
_DETAIL_CHARS: Final = 300


class OpenAICompatibleEmbedder(Embedder):
    """Embeddings from ``{url}/embeddings``. ``dimensions`` is learnt from the first reply.

    Reading :attr:`dimensions` before any :meth:`embed` sends one short probe request.
    """

    provider = PROVIDER

    def __init__(
        self,
        *,
        url: str,
        model: str,
        data_boundary: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        batch_size: int = 100,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.data_boundary = data_boundary
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._batch_size = max(1, batch_size)
        self._max_tokens = max_tokens
        self._dimensions: int | None = None

    @property
    def endpoint(self) -> str:
        return f"{self.url}/embeddings"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self._embed_batch(["dimension probe"])
        assert self._dimensions is not None
        return self._dimensions

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        budgeted = [
            truncate_to_token_budget(t, self._max_tokens, chars_per_token=CHARS_PER_TOKEN_LOWER)
            for t in texts
        ]
        parts = [
            self._post(budgeted[i : i + self._batch_size])
            for i in range(0, len(budgeted), self._batch_size)
        ]
        return np.concatenate(parts, axis=0)

    def _post(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:_DETAIL_CHARS] or str(exc.reason)
            raise EmbeddingEndpointError(self.endpoint, exc.code, detail) from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EmbeddingEndpointError(self.endpoint, None, str(reason)) from exc
        return self._parse(raw, len(texts))

    def _parse(self, raw: bytes, expected: int) -> np.ndarray:
        try:
            payload: Any = json.loads(raw)
            items = payload["data"]
            if not isinstance(items, list):
                raise TypeError("'data' is not a list")
            items = sorted(items, key=lambda item: int(item.get("index", 0)))
            vectors = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            snippet = raw[:_DETAIL_CHARS].decode("utf-8", "replace")
            raise EmbeddingEndpointError(
                self.endpoint, 200, f"malformed reply ({exc}): {snippet}"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected or vectors.shape[1] == 0:
            raise EmbeddingEndpointError(
                self.endpoint,
                200,
                f"expected {expected} vectors, got an array of shape {vectors.shape}",
            )
        if self._dimensions is not None and vectors.shape[1] != self._dimensions:
            raise EmbeddingEndpointError(
                self.endpoint,
                200,
                f"vector length changed from {self._dimensions} to {vectors.shape[1]}",
            )
        self._dimensions = int(vectors.shape[1])
        return vectors


def create(config: EmbeddingConfig) -> OpenAICompatibleEmbedder:
    """Registry factory for ``provider = "openai"``.

    :raises EmbeddingConfigInvalidError: ``url`` or ``model`` is empty, ``data_boundary`` is
        not one of :data:`DATA_BOUNDARIES`, or ``api_key_env`` names an unset variable.
    """
    if not config.url:
        raise EmbeddingConfigInvalidError(
            "url", "provider 'openai' needs the endpoint's base URL, e.g. http://127.0.0.1:8080/v1"
        )
    if not config.url.startswith(("http://", "https://")):
        raise EmbeddingConfigInvalidError("url", f"{config.url!r} is not an http(s) URL")
    if not config.model:
        raise EmbeddingConfigInvalidError("model", "provider 'openai' needs the served model id")
    if config.data_boundary and config.data_boundary not in DATA_BOUNDARIES:
        raise EmbeddingConfigInvalidError(
            "data_boundary",
            f"{config.data_boundary!r} is not one of {', '.join(DATA_BOUNDARIES)}",
        )
    api_key = None
    if config.api_key_env:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise EmbeddingConfigInvalidError(
                "api_key_env", f"environment variable {config.api_key_env} is not set"
            )
    return OpenAICompatibleEmbedder(
        url=config.url,
        model=config.model,
        data_boundary=config.data_boundary or "unknown",
        api_key=api_key,
        timeout_s=config.timeout_s,
        batch_size=config.batch_size,
    )
