"""Issue 19 §4: the private sign-in page. ``gitquarry web`` writes the token into a 0600 file
in a 0700 directory and opens the browser on that file; the page POSTs the token to
``/login``. In Chromium: the file signs the browser in once; over raw HTTP: the route's
Origin, size and single-use rules."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from gitquarry.errors import DaemonUnavailableError
from gitquarry.web.login_page import login_dir, remove_stale_pages, write_login_page

from .conftest import WebEnv
from .http_client import request

# issue 24: seconds per test (daemons, Chromium, an index per case); CI runs the slow set
pytestmark = pytest.mark.slow


def _token(web_env: WebEnv) -> str:
    query = urlparse(web_env.login_url()).query
    assert query.startswith("token=")
    return query[len("token="):]


def test_the_sign_in_file_signs_chromium_in_once(page_factory: Any, web_env: WebEnv) -> None:
    token = _token(web_env)
    path = write_login_page(web_env.base, token)
    assert path.parent == login_dir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700
    assert token in path.read_text(encoding="utf-8")
    page, console = page_factory(login=False)
    page.goto(path.as_uri())
    page.wait_for_url(web_env.base, timeout=30_000)
    assert "Commit history" in page.locator("main").inner_text()
    assert page.context.cookies()[0]["sameSite"] == "Strict"
    # the same file in another browser: the token was used
    other, _ = page_factory(login=False)
    other.goto(path.as_uri())
    other.wait_for_load_state()
    assert "already used" in other.locator("body").inner_text()
    assert console.errors == []


def test_login_post_rules_over_raw_http(web_env: WebEnv) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    token = _token(web_env)
    foreign = request(web_env.base, "POST", "/login", body=f"token={token}",
                      headers={**form, "Origin": "http://evil.example"})
    assert foreign.status == 403 and "set-cookie" not in foreign.headers
    huge = request(web_env.base, "POST", "/login", body="token=" + "A" * 5000,
                   headers={**form, "Origin": "null"})
    assert huge.status == 413 and "set-cookie" not in huge.headers
    forged = request(web_env.base, "POST", "/login", body="token=forged",
                     headers={**form, "Origin": "null"})
    assert forged.status == 403 and "set-cookie" not in forged.headers
    # the refusals above did not spend the token
    good = request(web_env.base, "POST", "/login", body=f"token={token}",
                   headers={**form, "Origin": "null"})
    assert good.status == 200, good
    cookie = good.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert 'http-equiv="refresh"' in good.body and token not in good.body
    assert request(web_env.base, "GET", "/status",
                   headers={"Cookie": cookie.split(";")[0]}).status == 200
    again = request(web_env.base, "POST", "/login", body=f"token={token}",
                    headers={**form, "Origin": "null"})
    assert again.status == 403 and "already used" in again.body
    # a GET of /login is no sign-in (and needs a session like every page)
    assert request(web_env.base, "GET", f"/login?token={token}").status == 401


def test_stale_pages_are_removed_and_links_never_followed(tmp_path: Path) -> None:
    directory = tmp_path / "pages"
    directory.mkdir(mode=0o700)
    old = directory / "login-old.html"
    old.write_text("x", encoding="utf-8")
    past = time.time() - 3600
    os.utime(old, (past, past))
    victim = tmp_path / "victim.html"
    victim.write_text("keep", encoding="utf-8")
    os.utime(victim, (past, past))
    (directory / "login-link.html").symlink_to(victim)
    fresh = write_login_page("http://127.0.0.1:1/", "tok", directory=directory)
    assert not old.exists() and fresh.exists()
    assert victim.read_text(encoding="utf-8") == "keep"
    assert remove_stale_pages(directory) == 0


def test_a_login_dir_of_another_user_is_refused(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory owned by another user")
    runtime = tmp_path / "run"
    (runtime / "gitquarry" / "web-login").mkdir(parents=True)
    os.chown(runtime / "gitquarry" / "web-login", 65534, 65534)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with pytest.raises(DaemonUnavailableError, match="another user"):
        write_login_page("http://127.0.0.1:1/", "tok")
    os.chown(runtime / "gitquarry" / "web-login", 0, 0)
    os.chmod(runtime / "gitquarry" / "web-login", 0o777)
    page = write_login_page("http://127.0.0.1:1/", "tok")
    assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
