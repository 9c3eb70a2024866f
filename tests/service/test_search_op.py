"""The daemon's ``search.history`` request (``cli/daemon_search.py``): a running daemon
answers ``history … --json`` with exactly the bytes the command computes itself, refuses
when it could not (another environment), leaves errors to the command, and the client talks
only to a private socket.

Real daemon process, real socket, real index. The random pin id of ``next_cursor`` and the
``checked_at`` clock differ between any two answers and are replaced by placeholders
before comparing (``tests/surfaces/test_fast_cli.py``'s normalisation).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from tests.service.conftest import DaemonProcess, commit, make_repo
from tests.surfaces.test_fast_cli import _normalise, command_line

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # real daemon processes


@pytest.fixture()
def indexed(service_env: dict[str, str], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    repo = make_repo(ws / "app", 6, prefix="fix cache parser")
    for message in ("add auth token refresh", "timeout handling for auth",
                    "refactor cache layer", "über-fix for tokens"):
        commit(repo, message, name=f"{message.split()[0]}.py".replace("-", "_"))
    (ws / "sub").mkdir()
    subprocess.run([sys.executable, "-m", "gitquarry", "index", "--no-embed", "-q", str(ws)],
                   env=service_env, check=True, capture_output=True, timeout=300)
    monkeypatch.chdir(ws)
    return ws


def test_daemon_answers_what_the_command_computes(
    indexed: Path, daemon: DaemonProcess
) -> None:
    from gitquarry.cli.fast import parse_history, render
    from gitquarry.cli.thin import DaemonSearchError, ask_daemon

    daemon.start()
    rng = random.Random(77)
    answered = 0
    for _ in range(40):
        argv = command_line(rng, indexed, valid=True)
        args = parse_history(argv[:])
        assert args is not None, argv
        try:
            local = render(args)
        except Exception:  # an error: the daemon must leave it to the command too
            with pytest.raises(DaemonSearchError):
                ask_daemon(args)
            continue
        remote = ask_daemon(args)
        assert remote is not None, argv
        answered += 1
        assert (_normalise(remote[0]), remote[1]) == (_normalise(local[0]), local[1]), argv
    assert answered >= 20


def test_daemon_refuses_another_environment(
    indexed: Path, daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitquarry.cli.fast import HistoryArgs
    from gitquarry.cli.thin import ask_daemon

    daemon.start()
    args = HistoryArgs(query="cache", as_json=True)
    assert ask_daemon(args) is not None
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # dates would read differently there
    assert ask_daemon(args) is None
    monkeypatch.delenv("TZ")
    monkeypatch.setenv("GITQUARRY_CONFIG", str(indexed / "other.toml"))
    assert ask_daemon(args) is None


def test_client_ignores_a_socket_directory_others_can_enter(
    indexed: Path, daemon: DaemonProcess
) -> None:
    from gitquarry.cli.fast import HistoryArgs
    from gitquarry.cli.thin import ask_daemon
    from gitquarry.service import paths

    daemon.start()
    args = HistoryArgs(query="cache", as_json=True)
    sock = paths.running_socket()
    assert sock is not None and ask_daemon(args) is not None
    mode = sock.parent.stat().st_mode & 0o777
    os.chmod(sock.parent, 0o755)
    try:
        assert ask_daemon(args) is None
    finally:
        os.chmod(sock.parent, mode)


def test_cli_answered_by_the_daemon_without_the_search_modules(
    indexed: Path, daemon: DaemonProcess, service_env: dict[str, str]
) -> None:
    """The console entry in a fresh interpreter: with a daemon it prints the local answer's
    bytes and never imports the search code (nor Typer, Rich, pydantic, NumPy)."""
    daemon.start()
    probe = ("import json, sys\nfrom gitquarry.cli.entry import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
             "names = ('typer', 'rich', 'pydantic', 'numpy', 'gitquarry.history.search.searcher',"
             " 'sqlite3', 'pathlib', 'typing', 'logging', 'platformdirs', 'dataclasses')\n"
             "sys.stderr.write('LOADED ' + json.dumps([n for n in names if n in sys.modules])"
             " + ' CODE ' + str(code) + '\\n')\n")
    argv = ["history", "cache parser", "--json", "--mode", "lexical", "-n", "3"]
    via = subprocess.run([sys.executable, "-c", probe, *argv], cwd=indexed, env=service_env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert via.stderr.rsplit("LOADED ", 1)[-1].strip() == "[] CODE 0", via.stderr[-2000:]
    local = subprocess.run([sys.executable, "-m", "gitquarry", *argv], cwd=indexed,
                           env={**service_env, "GITQUARRY_FAST": "0"}, capture_output=True,
                           text=True, timeout=120, check=False)
    assert local.returncode == 0, local.stderr
    assert _normalise(via.stdout) == _normalise(local.stdout)
    assert json.loads(via.stdout)["results"]
    # an error is the command's own: message and exit code as without a daemon
    bad = ["history", "cache", "--json", "--top-n", "0"]
    errs = [subprocess.run([sys.executable, "-m", "gitquarry", *bad], cwd=indexed,
                           env={**service_env, "GITQUARRY_FAST": fast}, capture_output=True,
                           text=True, timeout=120, check=False) for fast in ("", "0")]
    assert (errs[0].returncode, errs[0].stdout, errs[0].stderr) == \
        (errs[1].returncode, errs[1].stdout, errs[1].stderr)
    assert errs[0].returncode == 2


def test_thin_client_finds_the_socket_as_service_paths_does(
    indexed: Path, daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cli.thin``'s own socket lookup and peer check equal ``service.paths`` and
    ``service.ipc`` (it avoids importing them), with and without a daemon, for the
    environments it answers itself."""
    import socket

    from gitquarry.cli import thin
    from gitquarry.service import ipc, paths

    assert thin.running_socket() is None and paths.running_socket() is None
    daemon.start()
    assert thin.running_socket() == str(paths.running_socket())
    assert thin.state_dir() == str(paths.state_dir())
    state = os.environ["XDG_STATE_HOME"]
    for xdg, home in ((state, "/nonexistent-home"), ("relative/state", os.environ["HOME"]),
                      ("", os.environ["HOME"]), (None, os.environ["HOME"])):
        if xdg is None:
            monkeypatch.delenv("XDG_STATE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_STATE_HOME", xdg)
        monkeypatch.setenv("HOME", home)
        assert thin.state_dir() == str(paths.state_dir()), (xdg, home)
    monkeypatch.setenv("XDG_STATE_HOME", state)
    sock_path = thin.running_socket()
    assert sock_path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(sock_path)
        assert thin.peer_uid(sock) == ipc.peer_uid(sock) == os.geteuid()
