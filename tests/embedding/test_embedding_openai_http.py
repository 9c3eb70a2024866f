"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 (stdlib http.server)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder
from gitquarry.embedding.openai_http import OpenAICompatibleEmbedder
from gitquarry.errors import EmbeddingConfigInvalidError, EmbeddingEndpointError


@dataclass
class _Server:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: "ok" | "error" | "garbage" | "short"
    mode: str = "ok"


def _vector(text: str) -> list[float]:
    # Fixed, unnormalised vectors: [len, 1, 0, words]; the client must normalise them.
    return [float(len(text)), 1.0, 0.0, float(len(text.split()))]


@pytest.fixture
def server() -> Iterator[_Server]:
    state = _Server(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            body = json.loads(self.rfile.read(length))
            state.requests.append(
                {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
            )
            if state.mode == "error":
                self._send(500, b'{"error": "model not loaded"}')
                return
            if state.mode == "garbage":
                self._send(200, b"<html>not json</html>")
                return
            inputs = body["input"]
            if state.mode == "short":
                inputs = inputs[:-1]
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(t)}
                for i, t in enumerate(inputs)
            ]
            data.reverse()  # servers may answer out of order; "index" is authoritative
            payload = {"object": "list", "data": data, "model": body["model"]}
            self._send(200, json.dumps(payload).encode())

        def _send(self, status: int, raw: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _embedder(url: str, **kw: object) -> OpenAICompatibleEmbedder:
    fields: dict[str, object] = {
        "provider": "openai",
        "url": url,
        "model": "bge-small",
        "data_boundary": "local_network",
        "batch_size": 2,
        "timeout_s": 5.0,
    }
    fields.update(kw)
    embedder = create_embedder(EmbeddingConfig(**fields), purpose="index")  # type: ignore[arg-type]
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    return embedder


def test_embeds_in_order_normalised_and_batched(server: _Server) -> None:
    embedder = _embedder(server.url)
    texts = ["a", "bb cc", "ddd", "e e e e e"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 4) and vectors.dtype == np.float32
    expected = np.array([_vector(t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    # batch_size=2: two requests, to {url}/embeddings, with the OpenAI body shape.
    assert [r["path"] for r in server.requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert server.requests[0]["body"] == {"model": "bge-small", "input": ["a", "bb cc"]}
    assert server.requests[0]["auth"] is None
    assert embedder.dimensions == 4
    assert len(server.requests) == 2  # dimensions learnt from the reply, no probe
    assert embedder.namespace("commit-v1").key == "openai|bge-small|4|commit-v1"


def test_dimensions_probe_and_empty_list(server: _Server) -> None:
    embedder = _embedder(server.url + "/")
    assert embedder.dimensions == 4
    assert len(server.requests) == 1
    assert embedder.embed([]).shape == (0, 4)
    assert len(server.requests) == 1


def test_api_key_from_environment(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GQ_TEST_EMBED_KEY", "sk-test")
    _embedder(server.url, api_key_env="GQ_TEST_EMBED_KEY").embed(["x"])
    assert server.requests[0]["auth"] == "Bearer sk-test"


def test_missing_api_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GQ_TEST_EMBED_KEY", raising=False)
    with pytest.raises(EmbeddingConfigInvalidError) as info:
        _embedder("http://127.0.0.1:9/v1", api_key_env="GQ_TEST_EMBED_KEY")
    assert info.value.key == "api_key_env"


def test_long_text_is_cut_before_sending(server: _Server) -> None:
    _embedder(server.url).embed(["word " * 100_000])
    sent = server.requests[0]["body"]["input"][0]
    assert len(sent) <= 512 * 3


def test_http_error(server: _Server) -> None:
    server.mode = "error"
    with pytest.raises(EmbeddingEndpointError) as info:
        _embedder(server.url).embed(["x"])
    assert info.value.status == 500
    assert "model not loaded" in info.value.detail
    assert info.value.url == server.url + "/embeddings"


@pytest.mark.parametrize("mode", ["garbage", "short"])
def test_malformed_reply(server: _Server, mode: str) -> None:
    server.mode = mode
    with pytest.raises(EmbeddingEndpointError) as info:
        _embedder(server.url).embed(["x", "y"])
    assert info.value.status == 200


def test_unreachable_endpoint() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port any more.
    with pytest.raises(EmbeddingEndpointError) as info:
        _embedder(f"http://127.0.0.1:{port}/v1").embed(["x"])
    assert info.value.status is None
