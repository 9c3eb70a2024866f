"""Issue 15 §4 (dates, directory globs) and issue 7 §7 (Unicode-equivalent paths).

Globs are checked against git itself: ``git ls-files -c -i --exclude=PATTERN`` applies
gitignore rules (directory patterns, leading and trailing ``/``) to the same tree.
"""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path

import pytest

from gitquarry.errors import InvalidTimeError
from gitquarry.retrieval.filters import compile_glob, interpret_time

from .conftest import CLI, Repo, user_config

TREE = [
    "docs/a.md", "docs/guide/b.md", "pkg/docs/c.md", "pkg/docs2", "other/docs",
    "docs.txt", "README.md", "src/lib/d.py", "src/lib2/e.py", "a/src/lib/f.py",
    "src/main.py", "lib", "x/lib/g.c", "notes/readme.MD", "deep/a/b/c/docs/h.txt",
    ".hidden/i.md", "src/.env",
]

PATTERNS = [
    "docs", "docs/", "/docs", "/docs/", "src/lib", "/src/lib", "src/lib/", "lib", "lib/",
    "**/lib", "src/**/*.py", "*.md", "*.py", "src/*", "docs/*.md", "docs/**", "pkg/docs/",
    "README.md", "/README.md", "?ocs", "[ap]*/docs", "a/**/f.py", "deep/**/docs", "*",
    ".hidden", "*.MD", "docs/guide",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("globs")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for path in TREE:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(path, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


def git_ignored(root: Path, pattern: str) -> set[str]:
    proc = subprocess.run(["git", "ls-files", "-c", "-i", f"--exclude={pattern}"], cwd=root,
                          capture_output=True, text=True, check=True)
    return set(proc.stdout.splitlines())


@pytest.mark.parametrize("pattern", PATTERNS)
def test_glob_matches_what_gitignore_rules_match(tree: Path, pattern: str) -> None:
    match = compile_glob(pattern)
    ours = {p for p in TREE if match(p)}
    assert ours == git_ignored(tree, pattern)


@pytest.fixture
def dir_repo(tmp_path: Path, cli: CLI) -> tuple[Path, dict[str, str]]:
    """One commit per path, so each glob's commits are known."""
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "r")
    hashes = {path: repo.commit(f"change {n}", {path: path}) for n, path in enumerate(TREE)}
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    return ws, hashes


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
@pytest.mark.parametrize("pattern", ["docs", "src/lib", "/src/lib", "docs/", "lib"])
def test_history_directory_glob_end_to_end(dir_repo: tuple[Path, dict[str, str]], cli: CLI,
                                           pattern: str) -> None:
    ws, hashes = dir_repo
    code, out, err = cli("history", "change", "--project", str(ws), "--json", "-n", "100",
                         "-g", pattern, "--mode", "lexical")
    assert code == 0, err
    match = compile_glob(pattern)
    expected = {hashes[p] for p in TREE if match(p)}
    assert expected and {r["hash"] for r in json.loads(out)["results"]} == expected


# -- Unicode-equivalent paths (issue 7 §7) ---------------------------------------------------

NFC = unicodedata.normalize("NFC", "résumé.md")
NFD = unicodedata.normalize("NFD", "résumé.md")


def test_nfc_and_nfd_names_match_each_other() -> None:
    assert NFC != NFD
    for pattern in (NFC, NFD, f"docs/{NFC}", "r*sum*.md", "docs/r\u00e9*"):
        match = compile_glob(pattern)
        assert match(f"docs/{NFD}") and match(f"docs/{NFC}"), pattern


@pytest.mark.parametrize(("stored", "typed"), [(NFD, NFC), (NFC, NFD)])
def test_history_glob_finds_an_equivalent_name_and_keeps_the_stored_one(
    tmp_path: Path, cli: CLI, stored: str, typed: str
) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "r")
    repo.commit("Add CV", {stored: "cv\n", "other.md": "x\n"})
    target = repo.commit("update the CV", {stored: "cv v2\n"})
    repo.commit("update other", {"other.md": "y\n"})
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    code, out, err = cli("history", "update", "--files-glob", typed, "--project", str(ws),
                         "--json", "--mode", "lexical")
    assert code == 0, err
    results = json.loads(out)["results"]
    assert [r["hash"] for r in results] == [target]
    assert results[0]["files_changed"] == [stored]  # the exact stored bytes, not normalised
    code, out, err = cli("history", "update", "-g", typed, "--project", str(ws),
                         "--mode", "lexical")
    assert code == 0 and "update the CV" in out


# -- ISO-8601 basic dates (issue 15 §4) ------------------------------------------------------

MAY_1 = 1_714_521_600  # 2024-05-01T00:00:00Z


@pytest.mark.parametrize(
    ("given", "end_of_day", "seconds", "reading"),
    [
        ("20240501", False, MAY_1, "iso_basic_date"),
        ("20240501", True, MAY_1 + 86_399, "iso_basic_date"),
        ("2024-05-01", False, MAY_1, "iso_date"),
        ("20240501T120000Z", False, MAY_1 + 43_200, "iso_datetime"),
        ("20240501T1200+0200", False, MAY_1 + 36_000, "iso_datetime"),
        ("2024-05-01T12:00:00Z", True, MAY_1 + 43_200, "iso_datetime"),
        ("1714521600", False, MAY_1, "unix_seconds"),
        ("@20240501", False, 20_240_501, "unix_seconds"),
        ("-86400", False, -86_400, "unix_seconds"),
        ("123456789", False, 123_456_789, "unix_seconds"),
    ],
)
def test_time_readings(given: str, end_of_day: bool, seconds: int, reading: str) -> None:
    bound = interpret_time(given, end_of_day=end_of_day)
    assert (bound.seconds, bound.reading) == (seconds, reading)


@pytest.mark.parametrize("given", ["20241399", "12345678", "2024-13-01", "today", "@x"])
def test_invalid_times(given: str) -> None:
    with pytest.raises(InvalidTimeError):
        interpret_time(given)


def test_after_basic_date_filters_and_is_echoed(tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "r")
    repo.commit("release april", {"a": "1"}, when=MAY_1 - 3600)
    may = repo.commit("release may", {"a": "2"}, when=MAY_1 + 86_400 + 3600)
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    code, out, err = cli("history", "release", "--after", "20240501", "--project", str(ws),
                         "--json", "--mode", "lexical")
    assert code == 0, err
    data = json.loads(out)
    assert [r["hash"] for r in data["results"]] == [may]
    assert data["filters"]["after"] == {"given": "20240501", "timestamp": MAY_1,
                                        "utc": "2024-05-01T00:00:00Z",
                                        "read_as": "iso_basic_date"}
    code, out, err = cli("history", "release", "--before", "20240501", "--explain",
                         "--project", str(ws), "--mode", "lexical")
    assert code == 0, err
    assert "release april" in out and "release may" not in out
    assert ("--before 20240501 read as an ISO-8601 basic date (YYYYMMDD): "
            "2024-05-01T23:59:59Z (1714607999)") in err
