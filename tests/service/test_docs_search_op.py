"""The daemon's ``search.docs`` request (``cli/daemon_docs.py``): a running daemon answers
``repo-docs search … --json`` with exactly the bytes the command computes itself, keeps
following the repository (a new commit, a new index), refuses when it could not answer the
same (another environment), and leaves errors to the command.

Real daemon process, real socket, real registered repository and docs cache.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from tests.service.conftest import DaemonProcess
from tests.surfaces.test_fast_docs_cli import DOCS, command_line

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # real daemon processes


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture()
def registered(service_env: dict[str, str], tmp_path: Path) -> Path:
    """``acme/widget`` (two commits, indexed) and ``acme/other`` registered."""
    Path(service_env["GITQUARRY_CONFIG"]).write_text(
        '[embedding]\nprovider = "none"\n', encoding="utf-8")
    repos = {}
    for name in ("widget", "other"):
        repo = tmp_path / name
        repo.mkdir()
        _git(repo, "init", "-q")
        files = DOCS if name == "widget" else {"README.md": "# Other\n\nA proxy cache.\n"}
        for path, text in files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "docs")
        repos[name] = repo
    (repos["widget"] / "docs" / "scale.md").write_text("# Scaling\n\nMore gunicorn workers.\n")
    _git(repos["widget"], "add", "-A")
    _git(repos["widget"], "commit", "-q", "-m", "scaling")
    for name, repo in repos.items():
        subprocess.run([sys.executable, "-m", "gitquarry", "repo-docs", "register", "--repo",
                        f"acme/{name}", "--repository-path", str(repo)], env=service_env,
                       check=True, capture_output=True, timeout=120)
    subprocess.run([sys.executable, "-m", "gitquarry", "repo-docs", "index", "--repo",
                    "acme/widget", "--foreground", "--json"], env=service_env, check=True,
                   capture_output=True, timeout=300)
    return repos["widget"]


def test_daemon_answers_what_the_command_computes(registered: Path,
                                                   daemon: DaemonProcess) -> None:
    from gitquarry.cli.fast_docs import ask_daemon_docs, parse_docs_search, render_docs
    from gitquarry.cli.thin import DaemonSearchError

    daemon.start()
    rng = random.Random(78)
    answered = 0
    for round_ in range(2):
        for _ in range(20):
            argv = command_line(rng, valid=True)
            params = parse_docs_search(argv[:])
            assert params is not None, argv
            try:
                local = render_docs(params)
            except Exception:  # an error: the daemon must leave it to the command too
                with pytest.raises(DaemonSearchError):
                    ask_daemon_docs(params)
                continue
            assert ask_daemon_docs(params) == local, argv
            assert ask_daemon_docs(params) == local, argv  # its kept tables: the same
            answered += 1
        if round_ == 0:  # the repository moves on: the daemon's answers follow it
            (registered / "docs" / "deploy.md").write_text(
                "# Deployment\n\n## Proxy\n\nNew proxy text about gunicorn workers.\n")
            _git(registered, "commit", "-qam", "rewrite deploy")
    assert answered >= 20


def test_daemon_refuses_another_environment(registered: Path, daemon: DaemonProcess,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from gitquarry.cli.fast_docs import ask_daemon_docs, parse_docs_search

    daemon.start()
    params = parse_docs_search(["repo-docs", "search", "proxy", "--repo", "acme/widget",
                                "--json"])
    assert params is not None
    assert ask_daemon_docs(params) is not None
    monkeypatch.setenv("GITQUARRY_CONFIG", str(registered / "other.toml"))
    assert ask_daemon_docs(params) is None
    monkeypatch.setenv("GITQUARRY_CONFIG", "relative.toml")  # the client's directory
    assert ask_daemon_docs(params) is None


def test_cli_through_the_daemon_prints_the_local_bytes(
        registered: Path, daemon: DaemonProcess, service_env: dict[str, str]) -> None:
    daemon.start()
    for argv in (["repo-docs", "search", "gunicorn workers", "--repo", "acme/widget",
                  "--json"],
                 ["repo-docs", "search", "proxy", "--json"],  # two registered: an error
                 ["repo-docs", "search", "proxy", "--repo", "acme/widget", "--json",
                  "--limit", "51"]):
        runs = [subprocess.run([sys.executable, "-m", "gitquarry", *argv],
                               env={**service_env, "GITQUARRY_FAST": fast},
                               capture_output=True, text=True, timeout=120, check=False)
                for fast in ("", "0")]
        assert (runs[0].returncode, runs[0].stdout, runs[0].stderr) == \
            (runs[1].returncode, runs[1].stdout, runs[1].stderr), argv
