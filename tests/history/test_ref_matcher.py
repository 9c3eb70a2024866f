"""``gitio.refs.RefMatcher`` answers exactly as wcmatch's own matcher (``globmatch`` with the
same flags) for every ref name: its shortcut (the compiled patterns tested directly) may
change the cost, never the answer. Real ref names from a real repository with branches,
remotes and tags, plus seeded-random names (dots, braces, unicode, surrogate-escaped bytes,
deep paths) against the default globs and against globs with negations, braces and ``*``."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from wcmatch import glob as wcglob

from gitquarry.config import DEFAULT_REF_GLOBS
from gitquarry.gitio.refs import _GLOB_FLAGS, RefMatcher, ref_from_bytes

GLOB_SETS = [
    list(DEFAULT_REF_GLOBS),
    ["refs/heads/**"],
    ["refs/heads/release/*", "refs/tags/v*"],
    ["refs/**", "!refs/remotes/**"],
    ["refs/{heads,tags}/**", "!refs/tags/*-rc*"],
    ["refs/heads/.hidden/**", "refs/notes/*"],
]
PARTS = ["main", "feature", ".hidden", "release", "v1.0", "v2.0-rc1", "a b", "ü", "x{y}",
         "[x]", "*", "HEAD", "origin", "..", "-", "\udcff", "deep"]


def _random_refs(rng: random.Random, n: int) -> list[str]:
    tops = ["refs/heads", "refs/tags", "refs/remotes/origin", "refs/notes", "refs/replace",
            "refs", "refs/heads/.hidden"]
    return [rng.choice(tops) + "/" + "/".join(rng.choice(PARTS)
                                              for _ in range(rng.randint(1, 4)))
            for _ in range(n)]


def _repo_refs(tmp_path: Path) -> list[str]:
    repo = tmp_path / "r"
    repo.mkdir()

    def git(*args: str) -> bytes:
        return subprocess.run(["git", "-c", "user.name=A", "-c", "user.email=a@x", *args],
                              cwd=repo, check=True, capture_output=True).stdout

    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "one")
    for name in ("feature/a", "release/1.x", "ü-branch"):
        git("branch", name)
    for tag in ("v1.0", "v2.0-rc1", "nightly"):
        git("tag", tag)
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    git("update-ref", "refs/notes/commits", "HEAD")
    out = git("for-each-ref", "--format=%(refname)")
    return [ref_from_bytes(line) for line in out.split(b"\n") if line]


def test_ref_matcher_equals_wcmatch(tmp_path: Path) -> None:
    refs = _repo_refs(tmp_path) + _random_refs(random.Random(5), 3000)
    assert len(refs) > 3000
    for globs in GLOB_SETS:
        matcher = RefMatcher(globs)
        assert matcher._include is not None  # the shortcut is what is being tested
        got = [matcher(ref) for ref in refs]
        expected = [bool(wcglob.globmatch(ref, globs, flags=_GLOB_FLAGS)) for ref in refs]
        assert got == expected, globs
        assert (any(got) and not all(got)) or globs == ["refs/heads/.hidden/**",
                                                      "refs/notes/*"]
