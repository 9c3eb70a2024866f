"""Leftovers of the s3 newcomer pass (``/work/notes/s3-newcomer.md``, "Not done"), each pinned
by a test on real repositories and the real CLI / web page.

- ``blame`` on a file whose Git object is missing said "no indexed repository has this file
  at HEAD" (rc 3, not found): the file is there, its object is not. Now the typed
  ``git_object_unavailable`` error (rc 1) naming the file and the missing object.
"""

from __future__ import annotations

import json
from pathlib import Path

from testkit import GitRepo
from testkit.cli import CLI


def _drop_loose_object(repo: GitRepo, oid: str) -> None:
    """Delete one loose object from ``repo``'s object store (a damaged or partial clone)."""
    (repo.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()


def test_blame_of_a_file_whose_object_is_missing_names_the_object(tmp_path: Path,
                                                                   cli: CLI) -> None:
    repo = GitRepo(tmp_path / "ws" / "r")
    repo.commit({"a.txt": "alpha\n", "esc.txt": "first\n"}, "first")
    repo.commit({"esc.txt": "second\n"}, "second")
    blob = repo.git("rev-parse", "HEAD:esc.txt").strip()
    workspace = str(tmp_path / "ws")
    code, _out, err = cli("index", "--no-embed", workspace)
    assert code == 0, err
    _drop_loose_object(repo, blob)

    code, out, err = cli("blame", "esc.txt", "--project", workspace)
    assert code == 1, (code, out, err)
    assert blob in err and "esc.txt" in err and "missing" in err, err
    assert "not at HEAD" not in err and "no indexed repository has this file" not in err

    code, out, err = cli("blame", "esc.txt", "--project", workspace, "--json")
    assert code == 1
    payload = json.loads(out)
    assert payload["error"]["code"] == "git_object_unavailable", payload

    # a file that is really not there is still "not found" (rc 3)
    code, _out, err = cli("blame", "nope.txt", "--project", workspace)
    assert code == 3 and "no indexed repository has this file at HEAD" in err, err
    # and a readable file still blames
    code, out, err = cli("blame", "a.txt", "--project", workspace)
    assert code == 0 and "a.txt at " in out and "first" in out, err
