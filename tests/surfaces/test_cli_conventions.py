"""Issue 24 §3: the conventions of git, ripgrep and gh — exit codes (one table, in
``--help`` and README.md), errors as JSON under ``--json``, colour (``--color``,
``NO_COLOR``, ``TERM=dumb``), a pager for ``show``/``blame`` on a terminal, shell completion,
``gitquarry config`` and next-step hints.

Real repositories, real indexes, real subprocesses; terminals are real pseudo-terminals.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitquarry.cli.app import EXIT_CODES

from .conftest import CLI, Repo, user_config

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SGR = re.compile(rb"\x1b\[[0-9;]*m")  # a colour/style escape


@pytest.fixture
def indexed(tmp_path: Path, cli: CLI) -> tuple[Path, str]:
    """(workspace, hash of the retry commit), indexed with keywords only."""
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "repo")
    repo.commit("Add the uploader", {"net.py": "def upload():\n    pass\n"})
    sha = repo.commit("Retry uploads three times\n\nThe \x1b[41mserver\x1b[0m drops them.",
                      {"net.py": "def upload():\n    retries = 3\n"})
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    return ws, sha


def run_tty(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[int, bytes]:
    """``python -m gitquarry argv`` with stdout on a real pseudo-terminal → (status, what
    the terminal received)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "gitquarry", *argv], stdin=slave,
                            stdout=slave, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "PAGER", "GIT_PAGER", "GITQUARRY_PAGER")}
    env.update({"TERM": "xterm-256color", **extra})
    return env


# -- exit codes -------------------------------------------------------------------------


def test_the_exit_code_table_is_in_help_and_readme(cli: CLI) -> None:
    code, out, _ = cli("--help")
    assert code == 0
    assert [c for c, _ in EXIT_CODES] == [0, 1, 2, 3, 130]
    for number, meaning in EXIT_CODES:
        assert re.search(rf"^\s*{number}\s+{re.escape(meaning)}\s*$", out, re.M), (number, out)
        assert re.search(rf"^\| {number} \| ", README, re.M), f"README has no row {number}"
    assert "not found" in dict(EXIT_CODES)[3]
    assert "finds nothing" in dict(EXIT_CODES)[0]  # zero results: exit 0, as git and gh


def test_a_hash_or_path_that_does_not_exist_is_not_found_exit_3(
        indexed: tuple[Path, str], cli: CLI) -> None:
    ws, sha = indexed
    p = ["--project", str(ws)]
    code, out, err = cli("show", "deadbeef", *p)  # exited 2 (a usage error) before issue 24
    assert code == 3 and out == "" and err.startswith("Error: commit 'deadbeef'"), (code, err)
    code, _, err = cli("blame", "nope.py", *p)
    assert code == 3 and err.startswith("Error: 'nope.py'"), (code, err)
    code, _, err = cli("blame", "net.py", "--rev", "no-such-branch", *p)
    assert code == 3, (code, err)
    # malformed is still a usage error; a well-formed existing hash is found
    code, _, err = cli("show", "not-a-hash", *p)
    assert code == 2, (code, err)
    code, out, err = cli("show", sha[:8], *p)
    assert code == 0 and "Retry uploads three times" in out, err
    # zero results: exit 0 (as git log and gh), said on stdout
    code, out, err = cli("history", "zeppelin", "--mode", "lexical", *p)
    assert code == 0 and out.startswith("No commits found"), (code, out, err)


def test_errors_under_json_are_json_on_stdout_and_text_on_stderr(
        indexed: tuple[Path, str], cli: CLI) -> None:
    ws, _ = indexed
    p = ["--project", str(ws)]
    cases = [
        (["show", "deadbeef", "--json", *p], 3, "commit_not_found"),
        (["history", "retry", "--top-n", "0", "--json", *p], 2, "invalid_argument"),
        (["history", "retry", "--bogus", "--json", *p], 2, "usage_error"),
        (["history", "retry", "--json", "--project", str(ws / "repo" / "net.py")], 2,
         "usage_error"),
    ]
    for argv, status, error_code in cases:
        code, out, err = cli(*argv)
        assert code == status, (argv, code, err)
        error = json.loads(out)["error"]
        assert error["code"] == error_code and error["exit_code"] == status, (argv, out)
        assert error["message"] and "Error" in err, (argv, err)
    # without --json stdout stays empty
    code, out, _ = cli("show", "deadbeef", *p)
    assert code == 3 and out == ""


# -- colour ---------------------------------------------------------------------------------


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_colour_follows_color_no_color_and_term_dumb(indexed: tuple[Path, str]) -> None:
    ws, sha = indexed
    argv = ["history", "retry", "--mode", "lexical", "--project", str(ws)]
    code, shown = run_tty(argv, _env())
    assert code == 0 and SGR.search(shown), shown  # a terminal: coloured
    assert b"\x1b[33m" + sha[:10].encode() in shown  # the hash yellow
    for env in (_env(NO_COLOR="1"), _env(TERM="dumb")):
        code, shown = run_tty(argv, env)
        assert code == 0 and b"retry" in shown.lower() and not SGR.search(shown), shown
    code, shown = run_tty(["--color=never", *argv], _env())
    assert code == 0 and not SGR.search(shown), shown
    # a pipe: plain, unless --color=always
    piped = subprocess.run([sys.executable, "-m", "gitquarry", *argv], env=_env(),
                           capture_output=True, check=False)
    assert piped.returncode == 0 and not SGR.search(piped.stdout)
    forced = subprocess.run([sys.executable, "-m", "gitquarry", "--color=always", *argv],
                            env=_env(), capture_output=True, check=False)
    assert forced.returncode == 0 and SGR.search(forced.stdout), forced.stdout


def test_colour_never_lets_commit_text_drive_the_terminal(indexed: tuple[Path, str]) -> None:
    ws, sha = indexed
    proc = subprocess.run([sys.executable, "-m", "gitquarry", "--color=always", "show", sha,
                           "--project", str(ws)], env=_env(), capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b[41m" not in proc.stdout  # the commit's own escape, shown escaped
    assert b"\\x1b[41mserver" in proc.stdout


def test_a_bad_color_value_is_a_usage_error(cli: CLI) -> None:
    code, _, err = cli("--color=sometimes", "status")
    assert code == 2 and "auto, always, never" in err


# -- pager ----------------------------------------------------------------------------------


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_show_and_blame_page_on_a_terminal_unless_no_pager(indexed: tuple[Path, str]) -> None:
    ws, sha = indexed
    pager = "sed s/^/PAGED:/"
    for argv in (["show", sha], ["blame", "net.py"]):
        full = [*argv, "--project", str(ws)]
        code, shown = run_tty(full, _env(GITQUARRY_PAGER=pager))
        assert code == 0 and b"PAGED:" in shown, shown
        code, shown = run_tty(full, _env(PAGER=pager))  # the usual variable, as git reads it
        assert code == 0 and b"PAGED:" in shown, shown
        code, shown = run_tty([*full, "--no-pager"], _env(PAGER=pager))
        assert code == 0 and b"PAGED:" not in shown and sha[:10].encode() in shown, shown
        code, shown = run_tty(full, _env(PAGER="cat", GIT_PAGER=pager))
        assert code == 0 and b"PAGED:" in shown  # GIT_PAGER before PAGER, as git
        piped = subprocess.run([sys.executable, "-m", "gitquarry", *full],
                               env=_env(PAGER=pager), capture_output=True, check=False)
        assert piped.returncode == 0 and b"PAGED:" not in piped.stdout  # not a terminal


# -- completion -----------------------------------------------------------------------------


@pytest.mark.slow  # issue 24: ~4.5 s (a real bash); CI runs it
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_completes_commands_options_and_subcommands() -> None:
    exe = Path(sys.executable).parent / "gitquarry"
    env = _env(PATH=f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}")

    def complete(*words: str) -> list[str]:
        script = (
            'eval "$(gitquarry completion bash)"\n'
            f"COMP_WORDS=(gitquarry {' '.join(words)})\n"
            f"COMP_CWORD={len(words)}\n"
            "_gitquarry_completion gitquarry\n"
            'printf "%s\\n" "${COMPREPLY[@]}"\n'
        )
        proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert "history" in complete("hist")
    assert complete("repo-docs", "reg") == ["register"]
    assert "--mode" in complete("history", "x", "--mo")


@pytest.mark.parametrize(("shell", "needle"), [("zsh", "compdef"), ("fish", "complete")])
def test_zsh_and_fish_scripts(cli: CLI, shell: str, needle: str) -> None:
    code, out, _ = cli("completion", shell)
    assert code == 0 and needle in out and "_GITQUARRY_COMPLETE" in out


def test_an_unknown_shell_is_a_usage_error(cli: CLI) -> None:
    code, _, err = cli("completion", "tcsh")
    assert code == 2 and "bash, zsh, fish" in err


# -- config ---------------------------------------------------------------------------------


def test_config_show_says_where_each_value_came_from(tmp_path: Path, cli: CLI) -> None:
    user = user_config('[search]\ntop_n = 7\n\n[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitquarry.toml").write_text(
        '[search]\nrrf_k = 30\n\n[embedding]\nprovider = "openai"\n', encoding="utf-8")
    code, out, err = cli("config", "show", "--json", "--project", str(ws))
    assert code == 0, err
    data = json.loads(out)
    source = {(v["section"], v["key"]): (v["value"], v["source"]) for v in data["values"]}
    assert source[("search", "top_n")] == (7, "user file")
    assert source[("search", "rrf_k")] == (30, "workspace file (accepted)")
    assert source[("embedding", "provider")] == ("none", "user file")  # the workspace's refused
    assert source[("search", "mode")][1] == "default"
    refused = [r for r in data["refused"] if r["code"] == "config_key_refused"]
    assert refused and "[embedding] provider" in refused[0]["keys"], data["refused"]
    assert data["user_file"] == str(user) and data["workspace_file_exists"]
    code, out, err = cli("config", "show", "--project", str(ws))
    assert code == 0 and "top_n = 7  # user file" in out and "rrf_k = 30  # workspace file" in out
    assert "refused" in err
    code, out, _ = cli("config", "path", "--project", str(ws))
    assert code == 0 and str(user) in out and str(ws / ".gitquarry.toml") in out
    code, out, err = cli("config", "check", "--project", str(ws))
    assert code == 0 and "configuration valid" in out, err
    # the loader's trust rules: [trust] in a workspace file is an error, as for every command
    (ws / ".gitquarry.toml").write_text("[trust]\nworkspaces = []\n", encoding="utf-8")
    code, out, err = cli("config", "check", "--project", str(ws))
    assert code == 2 and "[trust] may only be set in your own configuration" in err, err
    user.write_text("[search]\ntop_n = \n", encoding="utf-8")
    code, _, err = cli("config", "check", "--project", str(ws))
    assert code == 2 and "not valid TOML" in err, err


# -- next-step hints ------------------------------------------------------------------------


def test_hints_after_index_no_embed_and_repo_docs_register(tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Initial", {"README.md": "# Hello\n"})
    code, out, err = cli("index", "--no-embed", str(ws))
    assert code == 0, err
    assert "hint:" in err and "compute the vectors later with `gitquarry index" in err, err
    assert "hint:" not in out
    code, out, err = cli("index", "--no-embed", "--json", str(ws))
    assert code == 0 and "hint:" not in err + out  # machine output: no hints
    code, out, err = cli("repo-docs", "register", "--repo", "o/r", "--repository-path",
                         str(ws / "repo"))
    assert code == 0, err
    assert "hint: next: `gitquarry repo-docs index --repo o/r`" in err, err
