"""A workspace removed while something still works on it is never created again (s7: the
cause of ``test_every_daemon_key_is_read``'s "timed out waiting for a failed job" under
load). A daemon job that had loaded the workspace before ``rm -rf`` took the writer lease
after it; ``ensure_state_dir`` made the index directory's parents as ``mkdir -p`` does, so
the workspace came back as an empty directory holding ``.gitquarry/index.lock``, every later
job found a workspace with no repositories and succeeded, and no job ever failed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitquarry.config import load_config
from gitquarry.errors import IndexAccessError
from gitquarry.store import safe_paths
from gitquarry.workspace import Workspace

from .conftest import make_repo


def test_the_writer_lease_of_a_removed_workspace_fails_and_creates_nothing(
        service_env: dict[str, str], tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws", commits=1).resolve()
    workspace = Workspace(root=root, config=load_config(root))
    shutil.rmtree(root)
    with pytest.raises(IndexAccessError, match="is gone"), workspace.write_lock():
        pass
    with pytest.raises(IndexAccessError, match="is gone"):
        workspace.open_store(create=True)
    assert not root.exists()


def test_state_dirs_are_still_made_below_an_existing_root_and_anywhere_else(
        tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    assert safe_paths.ensure_state_dir(root / "a" / "b", root).is_dir()
    # a location the user configured (not under the root): its parents as mkdir -p
    elsewhere = tmp_path / "configured" / "index"
    assert safe_paths.ensure_state_dir(elsewhere, root).is_dir()
    assert safe_paths.ensure_state_dir(tmp_path / "plain" / "x").is_dir()
    shutil.rmtree(root)
    with pytest.raises(IndexAccessError):
        safe_paths.ensure_state_dir(root / "a", root)
    assert not root.exists()
