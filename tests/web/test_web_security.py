"""Sign-in, session, Host, Origin, CSRF and CSP checks over raw HTTP, the loopback-only
bind, and a crawl of every page and JSON endpoint for private paths and document bodies."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gitquarry.errors import WebBindRefusedError, WebPortError
from gitquarry.web.server import WebServer, bind_socket

from .conftest import WebEnv
from .fixture_data import DOC_FILES
from .http_client import host_of, request, sign_in


@pytest.fixture
def cookie(web_env: WebEnv) -> str:
    return sign_in(web_env.base, web_env.login_url())


def _csrf(body: str) -> str:
    match = re.search(r'<meta name="csrf-token" content="([^"]+)"', body)
    assert match, "no CSRF meta tag"
    return match.group(1)


def test_token_exchange_sets_a_strict_http_only_cookie(web_env: WebEnv) -> None:
    login = web_env.login_url()
    token_path = login[len(web_env.base) - 1:]
    reply = request(web_env.base, "GET", token_path)
    assert reply.status == 303 and reply.headers["location"] == "/"
    cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    # the token works once
    again = request(web_env.base, "GET", token_path)
    assert again.status == 403 and "gitquarry web" in again.body
    # a made-up token is refused too
    assert request(web_env.base, "GET", "/?token=forged").status == 403
    page = request(web_env.base, "GET", "/", headers={"Cookie": cookie.split(";")[0]})
    assert page.status == 200 and "Commit history" in page.body


def test_every_request_needs_a_session(web_env: WebEnv) -> None:
    for path in ("/", "/history?q=parser", "/api/status", "/static/app.js", "/status"):
        reply = request(web_env.base, "GET", path)
        assert reply.status == 401, path
        assert "Not signed in" in reply.body
    forged = request(web_env.base, "GET", "/", headers={
        "Cookie": f"gq_session_{host_of(web_env.base).split(':')[1]}=forged"})
    assert forged.status == 401


@pytest.mark.parametrize("host", ["evil.example:{port}", "attacker.test", "127.0.0.1:1",
                                  "localhost.evil.example:{port}", "[::1]:{port}", ""])
def test_foreign_host_is_refused_even_signed_in(web_env: WebEnv, cookie: str,
                                                host: str) -> None:
    port = host_of(web_env.base).split(":")[1]
    reply = request(web_env.base, "GET", "/status",
                    headers={"Host": host.format(port=port), "Cookie": cookie})
    assert reply.status == 421
    assert "127.0.0.1" in reply.body
    ok = request(web_env.base, "GET", "/status", headers={"Host": f"localhost:{port}",
                                                          "Cookie": cookie})
    assert ok.status == 200


def test_state_changing_requests_need_origin_and_csrf(web_env: WebEnv, cookie: str) -> None:
    s = web_env.selectors["ready"]
    page = request(web_env.base, "GET", "/status", headers={"Cookie": cookie})
    csrf = _csrf(page.body)
    form = (f"repo={s['repo_id']}&reg={s['registration_id']}&src="
            f"{s['source_registration_id']}&gen={s['source_registration_generation']}")
    base_headers = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
    origin = web_env.base.rstrip("/")
    cases: list[tuple[dict[str, str], str, int]] = [
        ({}, f"{form}&csrf={csrf}", 403),                                  # no Origin
        ({"Origin": "http://evil.example"}, f"{form}&csrf={csrf}", 403),    # foreign Origin
        ({"Origin": "null"}, f"{form}&csrf={csrf}", 403),
        ({"Origin": origin}, form, 403),                                   # no CSRF token
        ({"Origin": origin}, f"{form}&csrf=wrong", 403),                   # wrong CSRF token
        ({"Origin": origin}, f"{form}&csrf={csrf}", 200),                  # confirmation page
    ]
    web_jobs = sum(j.origin == "web" for j in web_env.daemon.state.list_jobs(limit=1000))
    for extra, body, status in cases:
        reply = request(web_env.base, "POST", "/repos/docs/reconcile",
                        headers={**base_headers, **extra}, body=body)
        assert reply.status == status, (extra, body, reply.body[:200])
    assert "Yes, reconcile now" in reply.body  # the last one: asks before doing anything
    assert web_jobs == sum(j.origin == "web" for j in web_env.daemon.state.list_jobs(limit=1000))


def test_every_post_route_checks_csrf(web_env: WebEnv, cookie: str) -> None:
    from starlette.routing import Route

    routes = [r for r in web_env.daemon.web.app.routes
              if isinstance(r, Route) and "POST" in (r.methods or set())]
    assert routes
    origin = web_env.base.rstrip("/")
    for route in routes:
        path = route.path.replace("{action}", "reconcile").replace("{job_id}", "job-000001")
        reply = request(web_env.base, "POST", path, headers={
            "Cookie": cookie, "Origin": origin,
            "Content-Type": "application/x-www-form-urlencoded"}, body="confirm=yes")
        assert reply.status == 403 and "CSRF" in reply.body, path


def test_security_headers_on_every_response(web_env: WebEnv, cookie: str) -> None:
    for path in ("/", "/static/style.css", "/api/status", "/nope"):
        reply = request(web_env.base, "GET", path, headers={"Cookie": cookie})
        csp = reply.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert reply.headers["x-frame-options"] == "DENY"
        assert reply.headers["cache-control"] == "no-store"
    refused = request(web_env.base, "GET", "/")
    assert "content-security-policy" in refused.headers
    page = request(web_env.base, "GET", "/", headers={"Cookie": cookie}).body
    assert "<script>" not in page and " style=" not in page and "onclick" not in page


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "::1", "localhost", "192.168.1.2", ""])
def test_only_loopback_127_0_0_1_is_bound(host: str) -> None:
    with pytest.raises(WebBindRefusedError):
        WebServer(object(), host=host)
    with pytest.raises(WebBindRefusedError):
        bind_socket(host, 0)


def test_daemon_refuses_other_binds_and_taken_ports(web_env: WebEnv) -> None:
    with pytest.raises(WebBindRefusedError):
        web_env.daemon.op_web_start({"host": "0.0.0.0"})
    port = int(host_of(web_env.base).split(":")[1])
    with pytest.raises(WebPortError):  # the page already runs elsewhere
        web_env.daemon.op_web_start({"port": port + 1 if port < 65535 else port - 1})
    again = web_env.daemon.op_web_start({})
    assert again["port"] == port and not again["started"]
    with pytest.raises(WebPortError, match="in use"):
        bind_socket("127.0.0.1", port)


def _crawl_targets(env: WebEnv) -> list[str]:
    commit = env.commits[-1]
    paths = ["/", "/history?q=config+parser&explain=1", "/history?q=lease&mode=lexical&glob="
             "src/**&after=2021-01-01&before=2024-12-31", "/history?q=retry&mode=semantic",
             "/history?q=x&after=not-a-date", f"/history/commit/{commit}",
             "/history/commit/0000000", "/graph", "/graph?q=search&kind=service",
             "/graph/node/search?q=search", "/graph/node/missing", "/repos", "/status",
             "/jobs", "/api/history?q=config+parser&explain=1", "/api/graph?q=search",
             "/api/status", "/api/jobs/job-000001", "/api/jobs/job-999999", "/no-such-page"]
    for name in env.selectors:
        for extra in ({}, {"q": "writer lease"}, {"q": "nginx", "mode": "fulltext"},
                      {"q": "lease", "overlay": "1"}, {"q": "lease", "rev": "HEAD~5"}):
            url = env.docs_url(name, **extra)[len(env.base) - 1:]
            paths += [url, url.replace("/repos/docs", "/api/repos/docs")]
    for job in env.daemon.state.list_jobs(limit=50):
        paths.append(f"/jobs/{job.public_id}")
    return paths


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_crawl_no_absolute_path_and_no_document_body(web_env: WebEnv, cookie: str) -> None:
    import json
    import os

    private = {root for root in web_env.private_roots} | {
        os.path.expanduser("~"), str(web_env.config_path.parent)}
    whole_docs = [text.strip() for text in DOC_FILES.values() if len(text) > 80]
    seen = 0
    for path in _crawl_targets(web_env):
        reply = request(web_env.base, "GET", path, headers={"Cookie": cookie})
        assert reply.status < 500, (path, reply.status, reply.body[:300])
        seen += 1
        for root in private:
            assert root not in reply.body, (path, root)
        assert "/tmp/" not in reply.body, path
        for text in whole_docs:
            assert text not in reply.body, (path, "a whole document body was sent")
        if path.startswith("/api/repos/docs") and reply.status == 200:
            search: dict[str, Any] | None = json.loads(reply.body).get("search")
            for hit in (search or {}).get("hits", []):
                assert len(hit["snippet"].encode("utf-8")) <= 800
    assert seen > 80
