"""A closed stdout pipe ends every output command as git ends: quietly, killed by SIGPIPE.

``gitquarry show X | head -1`` used to exit 1 (Rich's console), or print an error, where git
is killed by SIGPIPE (the shell's status 141), which ``set -o pipefail`` scripts expect.
Each command runs in a real subprocess whose stdout is a real pipe with its reading end
already closed, so its first write to stdout fails; the expected end is git's own, checked
in the same test: killed by SIGPIPE, nothing on stderr.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.surfaces.conftest import Repo

from testkit import isolate_user, run_gitquarry


def _closed_pipe_run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, bytes]:
    """(return code, stderr) of ``argv`` run with stdout a pipe nobody reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the command writes anything
    try:
        proc = subprocess.run(argv, cwd=cwd, stdout=write_end, stderr=subprocess.PIPE,
                              env=env, timeout=180, check=False)
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Path, str, dict[str, str]]]:
    """An indexed repository (no vectors), the hash of its newest commit and the (isolated)
    environment it was indexed in, for every command of this module."""
    root = tmp_path_factory.mktemp("pipe")
    with pytest.MonkeyPatch.context() as mp:
        (root / "home").mkdir()
        isolate_user(root / "home", mp)
        env = dict(os.environ)
        repo = Repo(root / "app")
        for n in range(4):
            repo.commit(f"fix cache timeout {n}\n\nThe cache body {n}.",
                        {"src/cache.py": "".join(f"line {i} of version {n}\n"
                                                 for i in range(40))})
        done = run_gitquarry("index", "--no-embed", "-q", str(root / "app"), cwd=root / "app",
                             env=env)
        assert done.returncode == 0, done.stderr
        yield root / "app", repo.head(), env


COMMANDS = {
    "show": ["show", "{head}"],
    "show --json": ["show", "{head}", "--json"],
    "history text": ["history", "cache", "--mode", "lexical"],
    "history --json (fast path)": ["history", "cache", "--json"],
    "blame": ["blame", "src/cache.py"],
    "status": ["status"],
    "help": ["--help"],
    "version": ["--version"],
}


Indexed = tuple[Path, str, dict[str, str]]


def test_git_itself_is_killed_by_sigpipe(indexed: Indexed) -> None:
    """The convention the commands follow (the anchor of the test below)."""
    repo, head, env = indexed
    code, err = _closed_pipe_run(["git", "show", head], repo, env)
    assert code == -signal.SIGPIPE and err == b""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_closed_stdout_pipe_ends_the_command_as_git_does(indexed: Indexed, name: str) -> None:
    repo, head, env = indexed
    argv = [a.format(head=head) for a in COMMANDS[name]]
    code, err = _closed_pipe_run([sys.executable, "-m", "gitquarry", *argv], repo, env)
    assert (code, err.decode("utf-8", "replace")) == (-signal.SIGPIPE, ""), (argv, err)


def test_the_typer_json_path_too(indexed: Indexed) -> None:
    """``history --json`` through the Typer app (fast path off)."""
    repo, _head, env = indexed
    code, err = _closed_pipe_run([sys.executable, "-m", "gitquarry", "history", "cache",
                                  "--json"], repo, {**env, "GITQUARRY_FAST": "0"})
    assert (code, err.decode("utf-8", "replace")) == (-signal.SIGPIPE, "")


def test_pipefail_sees_141_as_for_git(indexed: Indexed) -> None:
    """The shell's view (``set -o pipefail``): a reader that stops after one line, output
    longer than a pipe's buffer, so the writer meets the closed pipe for certain."""
    repo, _head, env = indexed
    big = repo.parent / "big"
    big_repo = Repo(big)
    big_repo.commit("a big change", {"big.txt": "".join(f"row {i}\n" for i in range(60_000))})
    done = run_gitquarry("index", "--no-embed", "-q", str(big), cwd=big, env=env)
    assert done.returncode == 0, done.stderr
    script = ('set -o pipefail; "$1" -m gitquarry show "$2" | head -n 1 >/dev/null; '
              'echo "gq=$?"; git show "$2" | head -n 1 >/dev/null; echo "git=$?"')
    out = subprocess.run(["bash", "-c", script, "bash", sys.executable, big_repo.head()],
                         cwd=big, capture_output=True, text=True, timeout=180, check=False,
                         env=env)
    assert out.stdout.split() == ["gq=141", "git=141"], (out.stdout, out.stderr)
    assert out.stderr == ""


def test_a_broken_pipe_that_is_not_stdout_stays_an_error() -> None:
    """A ``BrokenPipeError`` from a socket or a child's stdin, while stdout is fine, is not
    taken for a closed stdout (the process is not ended)."""
    from gitquarry.cli.pipes import end_if_stdout_closed, stdout_reader_gone

    assert stdout_reader_gone() is False
    end_if_stdout_closed(BrokenPipeError())  # returns: the caller reports it as an error
