"""Nothing skipped or ignored in silence (issue 20 §5): a bare repository under
``safe.bareRepository=explicit`` is indexed, and ``[indexing] exclude`` follows gitignore rules
with the one glob engine ``files_glob`` uses. Real repositories, a real index."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitquarry.errors import InvalidGlobError
from gitquarry.gitio.discovery import discover
from gitquarry.globs import directory_matcher
from gitquarry.retrieval.filters import compile_glob

from .conftest import GitRepo, Indexer


def _explicit_bare_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """What hardened setups and agent harnesses set: git opens a bare repository only when
    it is named (``--git-dir``), never by discovery from its directory."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "safe.bareRepository")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "explicit")


def test_bare_repository_is_indexed_under_safe_bare_repository_explicit(
    make_repo, tmp_path: Path, workspace: Path, indexer: Indexer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    src = GitRepo(tmp_path / "src")
    commit = src.commit({"a.py": "x = 1\n"}, "Raise the wombat timeout")
    bare = workspace / "vendor" / "proj.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src.path), str(bare)], check=True)
    _explicit_bare_only(monkeypatch)
    # git itself refuses the directory when it has to discover it
    refused = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=bare, capture_output=True)
    assert refused.returncode != 0 and b"bare" in refused.stderr
    found = discover(workspace)
    assert [r.path for r in found.repositories] == [bare.resolve()]
    assert found.skipped == []
    report = indexer.run()
    assert report.new_commits == 1
    assert indexer.hashes() == [commit]
    # the workspace may be the bare repository itself
    (only,) = discover(bare).repositories
    assert only.is_bare and only.path == bare.resolve()


def test_exclude_without_a_slash_matches_at_any_depth(make_repo, workspace: Path) -> None:
    make_repo("keep").commit({"a": "a\n"}, "keep")
    make_repo("archive/old").commit({"a": "a\n"}, "top-level archive")
    make_repo("team/archive/older").commit({"a": "a\n"}, "nested archive")
    make_repo("team/live").commit({"a": "a\n"}, "live")

    def found(patterns: list[str]) -> list[str]:
        return [r.path.relative_to(workspace.resolve()).as_posix()
                for r in discover(workspace, exclude=patterns).repositories]

    assert found(["archive"]) == ["keep", "team/live"]
    assert found(["archive/"]) == ["keep", "team/live"]
    assert found(["/archive"]) == ["keep", "team/archive/older", "team/live"]  # anchored
    assert found(["team/archive"]) == ["archive/old", "keep", "team/live"]
    assert found([]) == ["archive/old", "keep", "team/archive/older", "team/live"]


@pytest.mark.parametrize("path", ["archive", "team/archive", "a/b/archive/c"])
def test_exclusions_and_files_glob_are_one_matcher(path: str) -> None:
    """The same pattern means the same thing for ``[indexing] exclude`` (directories) and
    ``--files-glob`` (files under them)."""
    assert directory_matcher(["archive"])(path.rsplit("/c", 1)[0])
    assert compile_glob("archive")(path + "/x.txt")


def test_invalid_exclusion_syntax_is_an_error_not_a_literal() -> None:
    with pytest.raises(ValueError, match="unclosed"):
        directory_matcher(["archive/[a"])
    with pytest.raises(InvalidGlobError, match="unclosed"):
        compile_glob("archive/[a")
