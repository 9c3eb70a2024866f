"""The web page's guard: login tokens, sessions, CSRF tokens, and the checks every request
passes before any page code runs.

- **Login**: ``gitquarry web`` asks the daemon for a login token (32 random bytes, URL-safe),
  writes it into a private sign-in page (``web.login_page``: a 0600 file in a 0700
  directory) and opens the browser on that file, so the token is never on a command line or
  in an environment another local user can read. The page POSTs the token to ``/login``
  (form-encoded, at most ``MAX_LOGIN_BODY_BYTES``; a ``file://`` page sends ``Origin: null``,
  which only this route accepts: the token is the credential). ``GET /?token=…`` (the link
  ``gitquarry web --no-open`` prints) redeems the same way. A token works once, within
  ``LOGIN_TTL_S``; redeeming it sets an ``HttpOnly; SameSite=Strict`` session cookie and
  leads to ``/`` (a 303 for the GET; for the POST a tiny same-origin page that refreshes to
  ``/``, since a Strict cookie is not sent on a redirect chain that began at ``file://``).
- **Every request**: the ``Host`` header must name the loopback address the server listens on
  (``127.0.0.1:PORT`` or ``localhost:PORT``: a DNS-rebinding page has another host name),
  the session cookie must name a live session, and a state-changing request (any method but
  GET/HEAD) must carry an ``Origin`` of this server; forms and ``fetch`` calls also carry the
  session's CSRF token (checked by :func:`check_csrf`).
- **Every response**: a strict Content-Security-Policy (scripts and styles only from this
  server's ``/static/``, no inline script or style, no frames, forms only to this server),
  ``no-store``, ``nosniff``, ``same-origin`` referrers, ``DENY`` framing.

Only hashes of tokens and session ids are kept in memory; comparisons are constant-time.
Refusals are small plain-text pages with a status code and a sentence saying what to do.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

LOGIN_TTL_S = 600.0
SESSION_IDLE_S = 12 * 3600.0
MAX_SESSIONS = 64
MAX_PENDING_LOGINS = 64
#: where the private sign-in page posts the token
LOGIN_PATH = "/login"
#: the most a sign-in POST body may hold (a token is 43 bytes)
MAX_LOGIN_BODY_BYTES = 1024
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # same-origin, not no-referrer: with no-referrer Chromium sends "Origin: null" on form
    # posts, which the Origin check must refuse
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class Session:
    """One browser session: its CSRF token and when it was last used (monotonic s)."""

    csrf: str
    created: float
    last_seen: float = field(default=0.0)


class Sessions:
    """Login tokens and sessions of one web server (in memory: a daemon restart logs out)."""

    def __init__(self, *, login_ttl_s: float = LOGIN_TTL_S,
                 session_idle_s: float = SESSION_IDLE_S) -> None:
        self.login_ttl_s = login_ttl_s
        self.session_idle_s = session_idle_s
        self._logins: dict[str, float] = {}
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def mint_login(self) -> str:
        """A new single-use login token, valid for ``login_ttl_s`` seconds."""
        token = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            self._logins = {k: v for k, v in self._logins.items() if v > now}
            while len(self._logins) >= MAX_PENDING_LOGINS:
                self._logins.pop(min(self._logins, key=self._logins.__getitem__))
            self._logins[_digest(token)] = now + self.login_ttl_s
        return token

    def redeem(self, token: str) -> tuple[str, Session] | None:
        """Exchange a login token for a new session (id, session); None when the token is
        unknown, used or expired."""
        key = _digest(token)
        now = time.monotonic()
        with self._lock:
            expiry = self._logins.pop(key, None)
            if expiry is None or expiry < now:
                return None
            self._expire(now)
            while len(self._sessions) >= MAX_SESSIONS:
                oldest = min(self._sessions, key=lambda k: self._sessions[k].last_seen)
                self._sessions.pop(oldest)
            session_id = secrets.token_urlsafe(32)
            session = Session(csrf=secrets.token_urlsafe(32), created=now, last_seen=now)
            self._sessions[_digest(session_id)] = session
            return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        """The live session ``session_id`` names (its idle clock restarted), or None."""
        if not session_id:
            return None
        now = time.monotonic()
        with self._lock:
            session = self._sessions.get(_digest(session_id))
            if session is None:
                return None
            if now - session.last_seen > self.session_idle_s:
                self._sessions.pop(_digest(session_id), None)
                return None
            session.last_seen = now
            return session

    def _expire(self, now: float) -> None:
        self._sessions = {k: s for k, s in self._sessions.items()
                          if now - s.last_seen <= self.session_idle_s}

    def count(self) -> int:
        with self._lock:
            self._expire(time.monotonic())
            return len(self._sessions)


def check_csrf(session: Session, given: str | None) -> bool:
    """True when ``given`` is the session's CSRF token (constant-time)."""
    return bool(given) and hmac.compare_digest(session.csrf.encode(), str(given).encode())


class Guard:
    """ASGI middleware applying the module docstring's checks around ``app``.

    ``port`` is the listening port (the allowed ``Host``/``Origin`` values depend on it; it
    may be set after the socket is bound). The session is put in ``scope["gq_session"]``.
    """

    def __init__(self, app: ASGIApp, sessions: Sessions, port: int = 0) -> None:
        self.app = app
        self.sessions = sessions
        self.port = port

    @property
    def cookie_name(self) -> str:
        # cookies are shared by every port of a host: one name per port keeps two servers
        # (or two daemons of two test runs) from overwriting each other's session
        return f"gq_session_{self.port}"

    def allowed_hosts(self) -> set[str]:
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def allowed_origins(self) -> set[str]:
        return {f"http://{h}" for h in self.allowed_hosts()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "")
        if host.lower() not in self.allowed_hosts():
            await _refuse(send, 421, "Refused: this page answers only at "
                          f"http://127.0.0.1:{self.port}/ (the Host header named another "
                          "site).")
            return
        method = scope.get("method", "GET").upper()
        if scope.get("path") == LOGIN_PATH and method == "POST":
            await self._login_post(headers, receive, send)
            return
        if method in STATE_CHANGING:
            origin = headers.get("origin")
            if origin is None or origin.lower() not in self.allowed_origins():
                await _refuse(send, 403, "Refused: a state-changing request must come from "
                              "this page itself (missing or foreign Origin header).")
                return
        cookies = _cookies(headers.get("cookie", ""))
        session = self.sessions.get(cookies.get(self.cookie_name))
        if scope.get("path") == "/" and method == "GET":
            token = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
            if token:
                redeemed = self.sessions.redeem(token[0])
                if redeemed is not None:
                    await _login(send, self.cookie_name, redeemed[0])
                    return
                if session is None:
                    await _refuse(send, 403, "This sign-in link was already used or has "
                                  "expired. Run `gitquarry web` again for a new one.")
                    return
        if session is None:
            await _refuse(send, 401, "Not signed in. Run `gitquarry web` and open the link "
                          "it prints (it signs this browser in).")
            return
        scope["gq_session"] = session

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _merge_headers(message.get("headers") or [])
            await send(message)

        await self.app(scope, receive, send_secured)


    async def _login_post(self, headers: dict[str, str], receive: Receive,
                          send: Send) -> None:
        """``POST /login`` from the private sign-in page: ``token=…`` form-encoded. The
        ``Origin`` must be this server's, ``null`` (a ``file://`` page) or absent."""
        origin = headers.get("origin")
        if origin is not None and origin != "null" and \
                origin.lower() not in self.allowed_origins():
            await _refuse(send, 403, "Refused: sign-in must come from the page `gitquarry "
                          "web` opened (foreign Origin header).")
            return
        body = await _read_body(receive, MAX_LOGIN_BODY_BYTES)
        if body is None:
            await _refuse(send, 413, "Refused: the sign-in request is too large.")
            return
        token = parse_qs(body.decode("latin-1")).get("token")
        redeemed = self.sessions.redeem(token[0]) if token else None
        if redeemed is None:
            await _refuse(send, 403, "This sign-in page was already used or has expired. "
                          "Run `gitquarry web` again for a new one.")
            return
        await _login_page_response(send, self.cookie_name, redeemed[0])


async def _read_body(receive: Receive, max_bytes: int) -> bytes | None:
    """The request body, or None once it passes ``max_bytes`` (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_bytes:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers") or []:
        name = key.decode("latin-1").lower()
        if name in out:  # a repeated Host/Origin is ambiguous: make it fail the checks
            out[name] = "\0"
        else:
            out[name] = value.decode("latin-1")
    return out


def _cookies(header: str) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed Cookie header is no session
        return {}
    return {k: m.value for k, m in jar.items()}


def _merge_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    names = {k.lower() for k, _ in SECURITY_HEADERS}
    kept = [(k, v) for k, v in headers if k.lower() not in names]
    return kept + SECURITY_HEADERS


async def _refuse(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status, "headers": _merge_headers([
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ])})
    await send({"type": "http.response.body", "body": body})


_SIGNED_IN = (b'<!doctype html><html lang="en"><head><meta charset="utf-8">'
              b'<meta http-equiv="refresh" content="0;url=/">'
              b'<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
              b'<title>gitquarry: signed in'
              b'</title></head><body><p>Signed in. <a href="/">Continue to the gitquarry web '
              b'page</a>.</p></body></html>\n')


async def _login_page_response(send: Send, cookie_name: str, session_id: str) -> None:
    """The session cookie on a 200 page that refreshes to ``/`` (same-origin, so the Strict
    cookie goes with it; a 303 here would carry on the ``file://`` page's cross-site chain)."""
    cookie = f"{cookie_name}={session_id}; Path=/; HttpOnly; SameSite=Strict"
    await send({"type": "http.response.start", "status": 200, "headers": _merge_headers([
        (b"content-type", b"text/html; charset=utf-8"),
        (b"set-cookie", cookie.encode("latin-1")),
        (b"content-length", str(len(_SIGNED_IN)).encode()),
    ])})
    await send({"type": "http.response.body", "body": _SIGNED_IN})


async def _login(send: Send, cookie_name: str, session_id: str) -> None:
    cookie = f"{cookie_name}={session_id}; Path=/; HttpOnly; SameSite=Strict"
    await send({"type": "http.response.start", "status": 303, "headers": _merge_headers([
        (b"location", b"/"),
        (b"set-cookie", cookie.encode("latin-1")),
        (b"content-length", b"0"),
    ])})
    await send({"type": "http.response.body", "body": b""})
