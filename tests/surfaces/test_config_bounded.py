"""Issue 19 §5 for configuration files: the workspace's ``.gitquarry.toml`` (it comes with a
clone) and the user's own file are read only if they are regular files — a FIFO never blocks,
a link to ``/dev/zero`` is never read — and at most ``CONFIG_MAX_BYTES + 1`` bytes are read;
each refusal is a ``config_invalid`` error naming the file. Also through the CLI in a
subprocess with a timeout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitquarry.config import CONFIG_MAX_BYTES, WORKSPACE_CONFIG_NAME, load_config
from gitquarry.errors import ConfigError

from .conftest import Repo, run_gitquarry


@pytest.mark.parametrize("kind", ["fifo", "devzero", "huge", "directory"])
def test_workspace_config_must_be_a_small_regular_file(tmp_path: Path, deadline: None,
                                                       kind: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = workspace / WORKSPACE_CONFIG_NAME
    if kind == "fifo":
        os.mkfifo(path)
        words = "is a FIFO, not a regular file"
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
        words = "is a character device, not a regular file"
    elif kind == "huge":
        path.write_text("# pad\n" * (CONFIG_MAX_BYTES // 6 + 10))
        words = f"a configuration file may hold at most {CONFIG_MAX_BYTES:,}"
    else:
        path.mkdir()
        words = "is a directory, not a regular file"
    with pytest.raises(ConfigError) as info:
        load_config(workspace)
    assert info.value.path == path and words in str(info.value), str(info.value)
    assert info.value.code == "config_invalid"


def test_a_fifo_as_the_users_own_file_is_refused(tmp_path: Path, deadline: None) -> None:
    fifo = tmp_path / "user.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="is a FIFO"):
        load_config(None, user_file=fifo)


def test_cli_with_a_fifo_config_in_the_workspace_exits_with_an_error(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    Repo(project).commit("one", {"a.txt": "a\n"})
    os.mkfifo(project / WORKSPACE_CONFIG_NAME)
    proc = run_gitquarry("index", str(project), "--no-embed", "-q", timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "is a FIFO, not a regular file" in err and "Traceback" not in err
