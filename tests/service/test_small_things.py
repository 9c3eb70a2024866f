"""Small things a user sees (issue 20 §7), through the real CLI, daemon and web page:

- ``gitquarry web PATH`` opens on PATH's workspace; the Documentation link keeps the chosen
  workspace; a workspace that is itself a repository is shown by its name, not ".";
- a commit's diff on the web page is not double-spaced (Chromium measures it);
- ``daemon status`` right after ``watch`` shows the last indexed commit and time;
- ``gitquarry blame PATH QUERY`` prints the ranked answer first, the full blame after it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from .conftest import commit, git, make_repo

# issue 24: real daemon processes or a second uid (seconds each); CI runs the slow set
pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"


def _cli(env: dict[str, str], *args: str, cwd: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=180)


def _get(base: str, path: str, cookie: str = "") -> tuple[int, dict[str, str], str]:
    import http.client

    url = urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        resp = conn.getresponse()
        return (resp.status, {k.lower(): v for k, v in resp.getheaders()},
                resp.read().decode("utf-8", "replace"))
    finally:
        conn.close()


def _web(env: dict[str, str], *args: str) -> tuple[str, str]:
    """``gitquarry web ARGS --no-open --json``: (base URL, login URL)."""
    out = _cli(env, "web", *args, "--no-open", "--json")
    assert out.returncode == 0, out.stderr
    login = json.loads(out.stdout)["login_url"]
    url = urlparse(login)
    return f"{url.scheme}://{url.netloc}/", login


def _sign_in(base: str, login: str) -> str:
    url = urlparse(login)
    status, headers, _ = _get(base, f"{url.path}?{url.query}")
    assert status == 303, status
    return headers["set-cookie"].split(";", 1)[0]


def _wait_indexed(env: dict[str, str], workspaces: int) -> None:
    """Until the history jobs of ``workspaces`` watched workspaces all finished."""
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        jobs = json.loads(_cli(env, "jobs", "list", "--json").stdout)["jobs"]
        mine = [j for j in jobs if j["type"] == "history_index"]
        if len({j["scope"] for j in mine}) >= workspaces and all(j["terminal"] for j in mine):
            return
        time.sleep(0.2)
    raise AssertionError("the watched workspaces were not indexed")


def test_web_opens_on_paths_workspace_keeps_it_and_names_the_repository(
    service_env: dict[str, str], tmp_path: Path
) -> None:
    from gitquarry.repo_docs.registry import Registry

    first = make_repo(tmp_path / "first", commits=2, prefix="first")
    alpha = make_repo(tmp_path / "alpha", commits=3, prefix="alpha")  # a workspace = a repo
    (alpha / "docs").mkdir()
    (alpha / "docs" / "guide.md").write_text("# Guide\n\nHow alpha works.\n", "utf-8")
    git(alpha, "add", "-A")
    git(alpha, "commit", "-q", "-m", "alpha docs\n\nA body line.")
    for i in range(6):  # a diff of several lines
        (alpha / "many.txt").write_text("".join(f"line {j}\n" for j in range(i + 4)), "utf-8")
    git(alpha, "add", "-A")
    git(alpha, "commit", "-q", "-m", "many lines")
    head = git(alpha, "rev-parse", "HEAD")
    Registry().register("acme/alpha", alpha)
    try:
        watched = []
        for ws in (first, alpha):
            out = _cli(service_env, "daemon", "watch", str(ws), "--json")
            assert out.returncode == 0, out.stderr
            watched.append(json.loads(out.stdout)["workspace_ref"])
        first_ref, alpha_ref = watched
        _wait_indexed(service_env, 2)
        base, login = _web(service_env, str(alpha))
        cookie = _sign_in(base, login)
        status, _, page = _get(base, "/", cookie)
        assert status == 200
        # the workspace picker shows PATH's workspace, and the links carry it
        assert re.search(rf'<option value="{alpha_ref}" selected>', page), page[:2000]
        assert f'href="/repos?ws={alpha_ref}"' in page
        _, _, repos = _get(base, f"/repos?ws={alpha_ref}", cookie)
        docs_links = re.findall(r'href="(/repos/docs\?[^"]+)">Documentation</a>', repos)
        assert docs_links and all(f"ws={alpha_ref}" in link.replace("&amp;", "&")
                                  for link in docs_links), docs_links
        _, _, docs = _get(base, docs_links[0].replace("&amp;", "&"), cookie)
        assert re.search(rf'<option value="{alpha_ref}" selected>', docs)
        assert f'href="/history?ws={alpha_ref}"' in docs
        # a workspace that is one repository: shown by its name, never "."
        section = repos.split('id="ws-h"', 1)[1]
        assert "<code>alpha</code>" in section and "<code>.</code>" not in section
        status_cli = _cli(service_env, "daemon", "status")
        assert "  alpha: last indexed commit" in status_cli.stdout, status_cli.stdout
        assert "  .: " not in status_cli.stdout
        # another `gitquarry web PATH` moves the page to that workspace
        base, login = _web(service_env, str(first))
        _, _, page = _get(base, "/", _sign_in(base, login))
        assert re.search(rf'<option value="{first_ref}" selected>', page)
        # a commit's diff: one line box per diff line
        _, _, commit_page = _get(base, f"/history/commit/{head}?ws={alpha_ref}", cookie)
        assert 'class="commit-title"' in commit_page
        assert "</span>\n<span" not in commit_page.split('class="diff"', 1)[1]
        if Path(CHROMIUM).exists():
            _diff_line_height_in_chromium(base, _web(service_env)[1],
                                          f"history/commit/{head}?ws={alpha_ref}")
    finally:
        _cli(service_env, "daemon", "stop")


def _diff_line_height_in_chromium(base: str, login: str, path: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(login)
            page.goto(base + path)
            spans = page.locator("pre.diff > span")
            n = spans.count()
            assert n >= 8
            box = page.locator("pre.diff").evaluate(
                "e => { const s = getComputedStyle(e); return [e.scrollHeight, "
                "parseFloat(s.paddingTop) + parseFloat(s.paddingBottom), "
                "e.querySelector('span').getBoundingClientRect().height]; }")
            height, padding, line = box
            assert line > 0
            # n line boxes, not 2n (a newline between block spans added an empty line each)
            assert height - padding < 1.3 * n * line, (height, padding, line, n)
            text = page.locator("pre.diff").inner_text()
            assert "\n\n" not in text.strip("\n")
        finally:
            browser.close()


def test_daemon_status_right_after_watch_shows_the_last_indexed_commit(
    service_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    make_repo(ws / "lib", commits=4)
    head = git(ws / "lib", "rev-parse", "HEAD")
    assert _cli(service_env, "index", str(ws), "--no-embed", "-q").returncode == 0
    try:
        # the daemon's own job cannot record anything first: it waits behind this lease
        from gitquarry.config import load_config
        from gitquarry.workspace import Workspace

        with Workspace(root=ws, config=load_config(ws)).write_lock():
            watched = _cli(service_env, "daemon", "watch", str(ws))
            assert watched.returncode == 0, watched.stderr
            status = _cli(service_env, "daemon", "status", "--json")
        data = json.loads(status.stdout)
        (repo,) = data["workspaces"][0]["repositories"]
        assert repo["name"] == "lib"
        assert repo["last_indexed_commit"] == head, repo
        assert repo["last_indexed_at"], repo
        text = _cli(service_env, "daemon", "status").stdout
        assert f"lib: last indexed commit {head[:12]} at " in text and "never" not in text
    finally:
        _cli(service_env, "daemon", "stop")


@pytest.mark.parametrize("as_json", [False])
def test_blame_with_a_query_prints_the_ranked_answer_first(
    service_env: dict[str, str], tmp_path: Path, as_json: bool
) -> None:
    repo = make_repo(tmp_path / "proj", commits=1)
    (repo / "net.py").write_text("def fetch():\n    return 1\n", "utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add fetch")
    commit(repo, "retry the fetch on timeout", name="net.py")
    commit(repo, "log the fetch duration", name="net.py")
    assert _cli(service_env, "index", str(repo), "--no-embed", "-q").returncode == 0
    out = _cli(service_env, "blame", "net.py", "timeout retry", "--project", str(repo))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    ranked = next(n for n, line in enumerate(lines) if line.startswith("History of the file"))
    blame = lines.index("Blame:")
    first_entry = next(n for n, line in enumerate(lines) if line.startswith("    lines "))
    assert ranked < blame < first_entry, out.stdout
    assert "retry the fetch on timeout" in lines[ranked + 1], out.stdout
    # without a query: the blame alone, as before
    plain = _cli(service_env, "blame", "net.py", "--project", str(repo))
    assert "History of the file" not in plain.stdout and "Blame:" not in plain.stdout
    assert "    lines " in plain.stdout
