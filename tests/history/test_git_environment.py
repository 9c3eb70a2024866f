"""Issue 7 §1: the user's, the repository's and the harness's git configuration and
environment never change what is indexed or whether a repository is found.

Each test indexes the same repositories once cleanly (the reference) and once with one
hostile setting, then compares every stored column of every commit.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitquarry.config import load_config
from gitquarry.history.index.indexer import index_workspace
from gitquarry.store import open_store

from .conftest import BASE_TIME, GitRepo

_COLUMNS = (
    "hash, timestamp, author, committer, title, message, files_changed, "
    "gq_inflate(delta_truncated), "
    "author_time, parents, is_merge, complete"
)


def _rows(db: Path) -> list[tuple[object, ...]]:
    store = open_store(db)
    try:
        return [tuple(r) for r in store.conn.execute(
            f"SELECT {_COLUMNS} FROM git_commits ORDER BY hash")]
    finally:
        store.close()


def _repos(db: Path) -> list[str]:
    store = open_store(db)
    try:
        return [r[0] for r in store.conn.execute("SELECT path FROM repositories ORDER BY path")]
    finally:
        store.close()


def _index(root: Path, db: Path) -> None:
    store = open_store(db)
    try:
        report = index_workspace(root, store, load_config(root))
    finally:
        store.close()
    assert not report.failed, [r.error for r in report.failed]


def _build(ws: Path) -> GitRepo:
    """Renames, far-apart hunks, a function header, a gitlink, a big file, non-ASCII text."""
    repo = GitRepo(ws / "app")
    body = "".join(f"line {n}\n" for n in range(60))
    repo.commit({"src/a.py": "def handler():\n" + body, "z.txt": "z\n", "b.txt": "b\n"},
                "Résumé parser für naïve users", BASE_TIME)
    changed = body.replace("line 3\n", "line three\n").replace("line 50\n", "line fifty\n")
    repo.commit({"src/a.py": "def handler():\n" + changed, "z.txt": "zz\n", "b.txt": "bb\n"},
                "Two far-apart hunks", BASE_TIME + 60)
    repo.git("mv", "src/a.py", "src/renamed.py")
    repo.commit({"big.bin": bytes(range(256)) * 64}, "Rename and a binary file",
                BASE_TIME + 120)
    sub = repo.commit(None, "empty", BASE_TIME + 150)
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/sub")
    repo.git("commit", "-q", "-m", "Add a submodule gitlink", env=repo.env(BASE_TIME + 180))
    repo.write({".gitattributes": "*.py -diff\n*.txt diff=python\n"})  # uncommitted
    other = GitRepo(ws / "lib")
    other.commit({"lib.c": "int x;\n"}, "Vendor library import", BASE_TIME + 240)
    return repo


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[tuple[object, ...]], list[str]]:
    """The workspace (never modified by a test: copy it first) and its clean index."""
    base = tmp_path_factory.mktemp("reference")
    ws = base / "ws"
    _build(ws)
    db = base / "ref" / "index.db"
    _index(ws, db)
    return ws, _rows(db), _repos(db)


def _hostile_files(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "hostile"
    d.mkdir(exist_ok=True)
    (d / "order").write_text("z.txt\nb.txt\n")
    (d / "attributes").write_text("* -diff\n")
    (d / "mailmap").write_text("Zed Hostile <zed@example.com> <ada@example.com>\n")
    return {"order": d / "order", "attributes": d / "attributes", "mailmap": d / "mailmap"}


def _hostile_config(files: dict[str, Path]) -> list[tuple[str, str]]:
    """Every key below changes `git log -p` output when honoured."""
    return [
        ("i18n.logOutputEncoding", "ISO-8859-1"),
        ("i18n.commitEncoding", "ISO-8859-1"),
        ("diff.algorithm", "patience"),
        ("diff.context", "9"),
        ("diff.interHunkContext", "40"),
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("diff.relative", "true"),
        ("diff.orderFile", str(files["order"])),
        ("diff.renames", "false"),
        ("diff.renameLimit", "1"),
        ("diff.ignoreSubmodules", "all"),
        ("diff.submodule", "log"),
        ("diff.suppressBlankEmpty", "true"),
        ("diff.indentHeuristic", "false"),
        ("diff.external", "false"),
        ("core.abbrev", "40"),
        ("core.bigFileThreshold", "1"),
        ("core.attributesFile", str(files["attributes"])),
        ("core.quotepath", "true"),
        ("color.ui", "always"),
        ("color.diff", "always"),
        ("log.showSignature", "true"),
        ("log.mailmap", "true"),
        ("mailmap.file", str(files["mailmap"])),
        ("core.useReplaceRefs", "true"),
    ]


@pytest.fixture
def env_restore() -> Iterator[None]:
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_hostile_config_in_repository_global_and_environment_changes_nothing(
    reference, tmp_path: Path, env_restore: None
) -> None:
    source, rows, repos = reference
    ws = tmp_path / "ws"
    shutil.copytree(source, ws, symlinks=True)
    repos = [str(ws / Path(p).name) for p in repos]
    settings = _hostile_config(_hostile_files(tmp_path))
    app = GitRepo(ws / "app", init=False)
    for key, value in settings:
        app.git("config", key, value)  # repository config
    global_cfg = tmp_path / "hostile-global"
    global_cfg.write_text(
        Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text()
        + "".join(f"[{k.rsplit('.', 1)[0]}]\n\t{k.rsplit('.', 1)[1]} = {v}\n" for k, v in settings)
    )
    os.environ["GIT_CONFIG_GLOBAL"] = str(global_cfg)
    os.environ["GIT_CONFIG_COUNT"] = str(len(settings))
    for n, (key, value) in enumerate(settings):
        os.environ[f"GIT_CONFIG_KEY_{n}"] = key
        os.environ[f"GIT_CONFIG_VALUE_{n}"] = value
    db = tmp_path / "hostile-index" / "index.db"
    _index(ws, db)
    assert _repos(db) == repos
    assert _rows(db) == rows


def test_reference_rows_hold_the_text_as_committed(reference) -> None:
    _ws, rows, _ = reference
    titles = {r[4] for r in rows}
    assert "Résumé parser für naïve users" in titles
    by_title = {r[4]: r for r in rows}
    delta = str(by_title["Two far-apart hunks"][7])
    assert delta.count("@@ -") == 4  # two hunks in src/a.py, one each in z.txt, b.txt
    assert "diff --git a/src/a.py b/src/a.py" in delta
    assert "diff --git a/b.txt b/b.txt\n" in delta.split("diff --git a/src/a.py")[0]
    assert "@@ def handler():" in delta  # git's default function header, no driver
    renamed = by_title["Rename and a binary file"]
    assert json.loads(str(renamed[6])) == ["big.bin", "src/a.py", "src/renamed.py"]
    assert "Binary files /dev/null and b/big.bin differ" in str(renamed[7])
    assert "Subproject commit" in str(by_title["Add a submodule gitlink"][7])


def _hostile_envs(tmp_path: Path, ws: Path) -> dict[str, dict[str, str]]:
    decoy = GitRepo(tmp_path / "decoy")
    decoy.commit({"decoy.txt": "decoy\n"}, "Decoy commit that must never be indexed")
    decoy.commit({"decoy.txt": "decoy 2\n"}, "Second decoy commit")
    decoy.git("replace", "--graft", decoy.head())
    shallow = tmp_path / "shallow-file"
    app = GitRepo(ws / "app", init=False)
    shallow.write_text(app.head("HEAD~1") + "\n")
    graft = tmp_path / "graft-file"
    graft.write_text(app.head("HEAD~1") + "\n")
    objects = str(decoy.path / ".git" / "objects")
    return {
        "GIT_DIR": {"GIT_DIR": str(decoy.path / ".git")},
        "GIT_WORK_TREE": {"GIT_WORK_TREE": str(decoy.path)},
        "GIT_INDEX_FILE": {"GIT_INDEX_FILE": str(tmp_path / "missing" / "index")},
        "GIT_OBJECT_DIRECTORY": {"GIT_OBJECT_DIRECTORY": objects},
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": {"GIT_ALTERNATE_OBJECT_DIRECTORIES": objects},
        "GIT_COMMON_DIR": {"GIT_COMMON_DIR": str(decoy.path / ".git")},
        "GIT_CEILING_DIRECTORIES": {"GIT_CEILING_DIRECTORIES": str(ws)},
        "GIT_DISCOVERY_ACROSS_FILESYSTEM": {"GIT_DISCOVERY_ACROSS_FILESYSTEM": "0"},
        "GIT_NAMESPACE": {"GIT_NAMESPACE": "elsewhere"},
        "GIT_REPLACE_REF_BASE": {"GIT_REPLACE_REF_BASE": "refs/heads/"},
        "GIT_NO_REPLACE_OBJECTS": {"GIT_NO_REPLACE_OBJECTS": ""},
        "GIT_SHALLOW_FILE": {"GIT_SHALLOW_FILE": str(shallow)},
        "GIT_GRAFT_FILE": {"GIT_GRAFT_FILE": str(graft)},
        "GIT_DIFF_OPTS": {"GIT_DIFF_OPTS": "--unified=9"},
        "GIT_EXTERNAL_DIFF": {"GIT_EXTERNAL_DIFF": "false"},
        "GIT_CONFIG_PARAMETERS": {"GIT_CONFIG_PARAMETERS": "'diff.context'='9'"},
        "GIT_CONFIG_COUNT malformed": {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "x.y"},
        "GIT_CONFIG_COUNT not a number": {"GIT_CONFIG_COUNT": "many"},
        "GIT_ICASE_PATHSPECS": {"GIT_ICASE_PATHSPECS": "1"},
        "LANGUAGE/LC_ALL": {"LANGUAGE": "de", "LC_ALL": "de_DE.ISO-8859-1"},
    }


_ENV_NAMES = [
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_NAMESPACE", "GIT_REPLACE_REF_BASE",
    "GIT_NO_REPLACE_OBJECTS", "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE", "GIT_DIFF_OPTS",
    "GIT_EXTERNAL_DIFF", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT malformed",
    "GIT_CONFIG_COUNT not a number", "GIT_ICASE_PATHSPECS", "LANGUAGE/LC_ALL",
]


@pytest.mark.parametrize("name", _ENV_NAMES)
def test_hostile_environment_changes_neither_discovery_nor_rows(
    name: str, reference, tmp_path: Path, env_restore: None
) -> None:
    ws, rows, repos = reference
    env = _hostile_envs(tmp_path, ws)[name]
    os.environ.update(env)
    db = tmp_path / "hostile-index" / "index.db"
    _index(ws, db)
    assert _repos(db) == repos
    assert _rows(db) == rows


@pytest.mark.parametrize("name", ["GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES"])
def test_workspace_inside_a_repository_is_found_under_hostile_environment(
    name: str, tmp_path: Path, env_restore: None
) -> None:
    """`gitquarry index repo/src`: the repository above the workspace is still found."""
    repo = GitRepo(tmp_path / "outer")
    repo.commit({"src/x.py": "x = 1\n"}, "Outer commit")
    decoy = GitRepo(tmp_path / "decoy")
    decoy.commit({"d": "d\n"}, "Decoy")
    root = repo.path / "src"
    os.environ.update({
        "GIT_DIR": {"GIT_DIR": str(decoy.path / ".git")},
        "GIT_WORK_TREE": {"GIT_WORK_TREE": str(decoy.path)},
        "GIT_CEILING_DIRECTORIES": {"GIT_CEILING_DIRECTORIES": str(repo.path)},
    }[name])
    db = tmp_path / "idx" / "index.db"
    _index(root, db)
    assert _repos(db) == [str(repo.path)]
    assert [r[4] for r in _rows(db)] == ["Outer commit"]


def _latin1_commit(repo: GitRepo) -> str:
    """A commit whose message is ISO-8859-1 bytes with an ``encoding`` header."""
    msg = "Café crème: Latin-1 message".encode("latin-1")
    env = repo.env(BASE_TIME + 999)
    repo.git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "--allow-empty",
             "-F", "-", input_bytes=msg, env=env)
    return repo.head()


@pytest.mark.parametrize("key", ["i18n.logOutputEncoding", "i18n.commitEncoding"])
def test_encoding_config_keeps_the_title_as_committed_and_searchable(
    key: str, make_repo: Callable[..., GitRepo], workspace: Path, cli
) -> None:
    repo = make_repo()
    head = repo.commit({"r.py": "x\n"}, "Résumé parser für naïve users")
    latin = _latin1_commit(repo)
    repo.git("config", key, "ISO-8859-1")
    code, _, err = cli("index", str(workspace), "--no-embed", "-q")
    assert code == 0, err
    code, out, _ = cli("history", "Résumé", "--project", str(workspace), "--mode", "lexical",
                       "--json")
    assert code == 0
    results = json.loads(out)["results"]
    assert [r["hash"] for r in results] == [head]
    assert results[0]["title"] == "Résumé parser für naïve users"
    code, out, _ = cli("history", "crème", "--project", str(workspace), "--mode", "lexical",
                       "--json")
    assert [(r["hash"], r["title"]) for r in json.loads(out)["results"]] == [
        (latin, "Café crème: Latin-1 message")
    ]


def test_malformed_harness_config_is_worked_around_and_said(
    make_repo: Callable[..., GitRepo], workspace: Path, cli, env_restore: None
) -> None:
    repo = make_repo()
    commit = repo.commit({"a.txt": "a\n"}, "indexed anyway")
    os.environ.update(GIT_CONFIG_COUNT="2", GIT_CONFIG_KEY_0="diff.context")
    code, out, err = cli("index", str(workspace), "--no-embed")
    assert code == 0, err
    assert "ignoring GIT_CONFIG_COUNT" in err and "Total: 1 commit" in out
    code, out, _ = cli("history", "indexed", "--project", str(workspace), "--mode", "lexical",
                       "--json")
    assert [r["hash"] for r in json.loads(out)["results"]] == [commit]
