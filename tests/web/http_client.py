"""Raw HTTP against the test server (browsers cannot forge Host or Origin headers)."""

from __future__ import annotations

import http.client
from dataclasses import dataclass
from urllib.parse import urlparse


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str


def request(base: str, method: str, path: str, *, headers: dict[str, str] | None = None,
            body: str | None = None) -> Reply:
    url = urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read().decode("utf-8", "replace")
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
    finally:
        conn.close()


def sign_in(base: str, login_url: str) -> str:
    """Redeem a login URL; returns the ``Cookie`` header value of the new session."""
    url = urlparse(login_url)
    reply = request(base, "GET", f"{url.path}?{url.query}")
    assert reply.status == 303, reply
    return reply.headers["set-cookie"].split(";", 1)[0]


def host_of(base: str) -> str:
    return urlparse(base).netloc
