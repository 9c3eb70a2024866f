"""Each command imports only what it needs: the CLI starts without NumPy, ONNX Runtime, the
Markdown parsers or the MCP SDK, and keyword searches never load them.

Every check runs the real entry point in a fresh interpreter (``sys.modules`` of this test
process already holds everything) on real repositories and indexes the test builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: never needed to start the CLI or to answer --version
HEAVY = ("numpy", "onnxruntime", "tokenizers", "markdown_it", "pyromark", "mcp", "yaml")
#: ``--help`` is drawn by typer's rich formatter, whose module imports ``rich.markdown``
#: (and so markdown-it) at import time: that one is typer's, not ours
HELP_HEAVY = tuple(name for name in HEAVY if name != "markdown_it")
#: never needed by a keyword (lexical / full-text) search
MODEL = ("numpy", "onnxruntime", "tokenizers", "mcp")

_PROBE = """
import json, sys
argv, names = json.loads(sys.argv[1]), json.loads(sys.argv[2])
status = 0
if argv is None:
    import gitquarry.cli.app
else:
    from gitquarry.cli.app import main
    sys.argv = ["gitquarry", *argv]
    try:
        main()
    except SystemExit as exc:
        status = exc.code or 0
print("\\nLOADED " + json.dumps([n for n in names if n in sys.modules]))
sys.exit(status)
"""


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Ada\n\temail = ada@example.com\n[commit]\n\tgpgsign = false\n"
        "[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("GIT_", "GITQUARRY_"))}
    return {**environ, "HOME": str(home), "XDG_STATE_HOME": str(home / ".state"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
            "GITQUARRY_CONFIG": "/dev/null"}


def loaded(argv: list[str] | None, names: tuple[str, ...], env: dict[str, str],
           cwd: Path | None = None) -> list[str]:
    """Which of ``names`` a fresh interpreter holds after running ``gitquarry *argv``
    (``None``: after only importing ``gitquarry.cli.app``). The command must succeed."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv), json.dumps(list(names))],
        env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = proc.stdout.rsplit("\nLOADED ", 1)[1]
    return list(json.loads(line))


def git(path: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)


def test_importing_the_cli_loads_no_heavy_library(env: dict[str, str]) -> None:
    assert loaded(None, HEAVY, env) == []


def test_version_loads_no_heavy_library(env: dict[str, str]) -> None:
    assert loaded(["--version"], HEAVY, env) == []


@pytest.mark.parametrize("argv", [["--help"], ["repo-docs", "search", "--help"]])
def test_help_loads_no_heavy_library(argv: list[str], env: dict[str, str]) -> None:
    assert loaded(argv, HELP_HEAVY, env) == []


def test_the_probe_sees_what_a_command_imports(env: dict[str, str]) -> None:
    """The check above can fail: a command that does need NumPy is seen loading it."""
    code = "import gitquarry.retrieval.vectors"
    proc = subprocess.run([sys.executable, "-c", code + "; import sys; "
                           "print('numpy' in sys.modules)"], env=env, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip() == "True"


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_keyword_searches_load_no_model_library(tmp_path: Path, env: dict[str, str]) -> None:
    repo = tmp_path / "ws" / "repo"
    (repo / "docs").mkdir(parents=True)
    git(repo, "init", "-q", env=env)
    (repo / "README.md").write_text("# Project\n\nIntro text.\n", encoding="utf-8")
    (repo / "docs" / "deploy.md").write_text(
        "# Deploy\n\n## Nginx\n\nConfigure the reverse proxy for the zeppelin service.\n",
        encoding="utf-8")
    (repo / "app.py").write_text("print('zeppelin')\n", encoding="utf-8")
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "Add the zeppelin deployment guide", env=env)
    workspace = tmp_path / "ws"
    subprocess.run([sys.executable, "-m", "gitquarry", "index", "--no-embed", "-q",
                    str(workspace)], env=env, check=True, capture_output=True)
    assert loaded(["history", "zeppelin", "--mode", "lexical", "--json"], MODEL, env,
                  cwd=workspace) == []
    subprocess.run([sys.executable, "-m", "gitquarry", "repo-docs", "register", "--repo",
                    "t/repo", "--repository-path", str(repo)], env=env, check=True,
                   capture_output=True)
    # no revision set: the chunks are computed on the spot (the Markdown parser is needed)
    assert loaded(["repo-docs", "search", "zeppelin", "--mode", "fulltext", "--json"],
                  MODEL, env) == []
