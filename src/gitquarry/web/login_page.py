"""The private sign-in page ``gitquarry web`` opens instead of a URL carrying the token.

A login token on a command line (``xdg-open http://127.0.0.1:PORT/?token=…``, a ``BROWSER``
launcher) is readable by every local user in ``/proc/*/cmdline`` while the launcher runs, and
the first to redeem it gets the session. So the CLI writes the token into a small HTML file,
mode 0600, in a directory of its own (mode 0700, owned by this user) under the socket
directory (``$XDG_RUNTIME_DIR/gitquarry/web-login/``, else the state directory), and opens
the browser on ``file:///…/login-<random>.html``: only that path is on a command line. The
page POSTs the token to ``http://127.0.0.1:PORT/login`` (a script submits the form; without
scripts the user presses the button); the server answers with the session cookie. Pages older
than the token's lifetime are removed whenever a new one is written.
"""

from __future__ import annotations

import contextlib
import html
import os
import secrets
import stat
import time
from pathlib import Path

from gitquarry.service.paths import ensure_private_dir, socket_dir
from gitquarry.web.security import LOGIN_PATH, LOGIN_TTL_S

DIR_NAME = "web-login"

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<title>gitquarry: signing in</title></head>
<body>
<form id="gq-login" method="post" action="{action}">
<input type="hidden" name="token" value="{token}">
<p>Signing in to the gitquarry web page&hellip; <button type="submit">Sign in</button></p>
</form>
<script>document.getElementById("gq-login").submit();</script>
</body></html>
"""


def login_dir() -> Path:
    """The private directory of sign-in pages (created mode 0700; an existing one is
    tightened to 0700).

    :raises DaemonUnavailableError: it (or the socket directory) is not a directory or
        belongs to another user.
    """
    return ensure_private_dir(ensure_private_dir(socket_dir()) / DIR_NAME)


def write_login_page(base_url: str, token: str, *, directory: Path | None = None) -> Path:
    """Write a new sign-in page for ``token`` (served at ``base_url``, ``http://127.0.0.1:P/``)
    and return its path. The file is created new (``O_EXCL|O_NOFOLLOW``), mode 0600; stale
    pages (older than ``LOGIN_TTL_S``) in the directory are removed first.

    :raises DaemonUnavailableError: the private directory cannot be made.
    :raises OSError: the file cannot be written.
    """
    where = directory if directory is not None else login_dir()
    remove_stale_pages(where)
    path = where / f"login-{secrets.token_hex(16)}.html"
    body = _PAGE.format(action=html.escape(base_url.rstrip("/") + LOGIN_PATH, quote=True),
                        token=html.escape(token, quote=True)).encode("utf-8")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(body)
    finally:
        os.close(fd)
    return path


def remove_stale_pages(directory: Path, *, max_age_s: float = LOGIN_TTL_S) -> int:
    """Delete the sign-in pages in ``directory`` older than ``max_age_s``; returns how many.
    Only regular files named ``login-*.html`` are touched (links are never followed)."""
    removed = 0
    cutoff = time.time() - max_age_s
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if not (entry.name.startswith("login-") and entry.name.endswith(".html")):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
    return removed
