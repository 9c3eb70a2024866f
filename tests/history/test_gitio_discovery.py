"""Repository discovery, refs snapshots and the info/exclude helper, on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gitquarry.config import DEFAULT_EXCLUDES
from gitquarry.gitio.discovery import discover_repositories, inspect_repository
from gitquarry.gitio.exclude import ensure_info_exclude
from gitquarry.gitio.refs import existing_objects, rev_list, snapshot_refs

from .conftest import GitRepo


def discover(root: Path, **kwargs):
    kwargs.setdefault("exclude", list(DEFAULT_EXCLUDES))
    return discover_repositories(root, **kwargs)


def paths(repos, root: Path) -> list[str]:
    return [r.path.relative_to(root.resolve()).as_posix() for r in repos]


def test_nested_repositories_are_all_found(make_repo, workspace):
    outer = make_repo("outer")
    outer.commit({"a.txt": "a\n"}, "outer")
    inner = make_repo("outer/vendor/inner")
    inner.commit({"b.txt": "b\n"}, "inner")
    deep = make_repo("group/deep/repo")
    deep.commit({"c.txt": "c\n"}, "deep")
    assert paths(discover(workspace), workspace) == [
        "group/deep/repo", "outer", "outer/vendor/inner",
    ]


def test_excluded_directories_are_not_descended(make_repo, workspace):
    make_repo("app").commit({"a": "a\n"}, "app")
    for hidden_away in ("node_modules/pkg", "app/node_modules/dep", ".venv/src/lib",
                        "build/checkout", "tools/build/x"):
        make_repo(hidden_away).commit({"x": "x\n"}, "excluded")
    assert paths(discover(workspace), workspace) == ["app"]


def test_custom_exclude_patterns(make_repo, workspace):
    make_repo("keep").commit({"a": "a\n"}, "keep")
    make_repo("third_party/lib").commit({"a": "a\n"}, "lib")
    assert paths(discover(workspace, exclude=["third_party/**"]), workspace) == ["keep"]
    assert paths(discover(workspace, exclude=[]), workspace) == ["keep", "third_party/lib"]


def test_hidden_directories_are_skipped_unless_asked(make_repo, workspace):
    make_repo("visible").commit({"a": "a\n"}, "v")
    make_repo(".hidden/repo").commit({"a": "a\n"}, "h")
    assert paths(discover(workspace), workspace) == ["visible"]
    assert paths(discover(workspace, exclude_hidden_dirs=False), workspace) == [
        ".hidden/repo", "visible",
    ]


def test_workspace_inside_a_repository(make_repo, workspace):
    repo = make_repo("mono")
    repo.commit({"src/pkg/a.py": "a = 1\n"}, "a")
    (found,) = discover(repo.path / "src")
    assert found.path == repo.path.resolve()
    assert found.common_dir == (repo.path / ".git").resolve()
    # the workspace being the repository itself
    (same,) = discover(repo.path)
    assert same == found


def test_plain_directory_has_no_repositories(tmp_path):
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    assert discover(tmp_path / "empty") == []


def test_linked_worktree_and_main_checkout_are_one_repository(make_repo, workspace):
    main = make_repo("main")
    main.commit({"a": "a\n"}, "first")
    main.git("worktree", "add", "-q", "-b", "wt", str(workspace / "wt"))
    assert (workspace / "wt" / ".git").is_file()
    (repo,) = discover(workspace)
    assert repo.path == main.path.resolve()
    assert repo.common_dir == (main.path / ".git").resolve()
    # reached only through the linked worktree
    (via_wt,) = discover(workspace / "wt")
    assert via_wt.common_dir == repo.common_dir


def test_submodule_is_its_own_repository(make_repo, tmp_path, workspace):
    upstream = GitRepo(tmp_path / "upstream")
    upstream.commit({"lib.txt": "lib\n"}, "lib")
    sup = make_repo("super")
    sup.commit({"a": "a\n"}, "super")
    sup.git("-c", "protocol.file.allow=always", "submodule", "add", "-q",
            str(upstream.path), "sub")
    sup.commit(None, "add submodule")
    assert (sup.path / "sub" / ".git").is_file()
    repos = discover(workspace)
    assert paths(repos, workspace) == ["super", "super/sub"]
    sub = repos[1]
    assert sub.common_dir == (sup.path / ".git" / "modules" / "sub").resolve()
    assert not sub.is_bare


def test_bare_repository(make_repo, tmp_path, workspace):
    src = GitRepo(tmp_path / "src")
    src.commit({"a": "a\n"}, "a")
    subprocess.run(["git", "clone", "-q", "--bare", str(src.path), str(workspace / "bare.git")],
                   check=True, capture_output=True)
    (repo,) = discover(workspace)
    assert repo.is_bare
    assert repo.path == (workspace / "bare.git").resolve()
    assert inspect_repository(workspace / "bare.git").common_dir == repo.common_dir


def test_sha256_object_format(make_repo, workspace):
    make_repo("s", object_format="sha256").commit({"a": "a\n"}, "a")
    (repo,) = discover(workspace)
    assert repo.object_format == "sha256"


def test_snapshot_refs_selects_globs_and_peels_tags(make_repo):
    repo = make_repo()
    first = repo.commit({"a": "a\n"}, "first")
    second = repo.commit({"a": "b\n"}, "second")
    repo.git("tag", "-a", "v1", "-m", "annotated", first)
    repo.git("tag", "light", second)
    repo.git("notes", "add", "-m", "a note", first)
    repo.write({"a": "dirty\n"})
    repo.git("stash", "-q")
    tips = snapshot_refs(repo.path / ".git", ["refs/heads/**", "refs/remotes/**", "refs/tags/**"])
    assert [(t.ref, t.commit) for t in tips] == [
        ("refs/heads/main", second),
        ("refs/tags/light", second),
        ("refs/tags/v1", first),
    ]


def test_rev_list_and_existing_objects(make_repo):
    repo = make_repo()
    a = repo.commit({"a": "a\n"}, "a")
    b = repo.commit({"a": "b\n"}, "b")
    git_dir = repo.path / ".git"
    assert rev_list(git_dir, [b], [a]) == [b]
    assert rev_list(git_dir, [], [a]) == []
    missing = "0" * 40
    assert existing_objects(git_dir, [a, missing]) == {a}


def test_info_exclude_added_once(make_repo, workspace):
    repo = make_repo("r")
    repo.commit({"a": "a\n"}, "a")
    index_dir = repo.path / ".gitquarry"
    index_dir.mkdir()
    (index_dir / "index.db").write_bytes(b"x")
    exclude = ensure_info_exclude(index_dir)
    assert exclude == (repo.path / ".git" / "info" / "exclude").resolve()
    assert ensure_info_exclude(index_dir) == exclude
    assert exclude.read_text().splitlines().count("/.gitquarry/") == 1
    assert repo.git("status", "--porcelain") == ""
    assert ensure_info_exclude(workspace / "elsewhere" / ".gitquarry") is None


def test_workspace_that_is_a_bare_repository(tmp_path, workspace):
    src = GitRepo(tmp_path / "src")
    src.commit({"a": "a\n"}, "a")
    bare = workspace / "only.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src.path), str(bare)],
                   check=True, capture_output=True)
    (repo,) = discover(bare)
    assert repo.is_bare and repo.path == bare.resolve()
