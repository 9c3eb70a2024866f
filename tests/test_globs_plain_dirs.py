"""``globs.directory_matcher``'s plain-directory path (``**/NAME/**`` patterns, compared by
path segment) answers exactly as the wcmatch matcher does, on every combination of the
segments that could tell them apart (case, dots, prefixes/suffixes of a name, NFC)."""

from __future__ import annotations

import itertools

import pytest

from gitquarry.config import DEFAULT_EXCLUDES
from gitquarry.globs import _plain_directory_names, directory_matcher, wcmatch_directory_matcher

_SEGMENTS = ["build", "Build", "BUILD", "builds", "xbuild", "build.x", ".venv", "venv", "dist",
             "node_modules", "__pycache__", ".tox", "a", ".hidden", "K", "\u212a", "...",
             "cafe\u0301", "caf\u00e9", "src"]


@pytest.mark.parametrize("patterns", [
    list(DEFAULT_EXCLUDES),
    ["**/build/**"],
    [" ./**/build/** ", "**/K/**"],
    ["**/.../**", "**/caf\u00e9/**"],  # the second is not plain: the general path
    [],
])
def test_plain_directory_path_equals_wcmatch(patterns: list[str]) -> None:
    fast = directory_matcher(patterns)
    slow = wcmatch_directory_matcher(patterns)
    paths = [""]
    for depth in (1, 2, 3):
        paths += ["/".join(p) for p in itertools.product(_SEGMENTS, repeat=depth)]
    matched = 0
    for path in paths:
        assert fast(path) == slow(path), (patterns, path)
        matched += slow(path)
    assert not patterns or matched > 100


def test_which_patterns_take_the_plain_path() -> None:
    assert _plain_directory_names(list(DEFAULT_EXCLUDES)) == {
        p[3:-3] for p in DEFAULT_EXCLUDES}
    for pattern in ("build", "**/build", "build/**", "/build/", "**/b*ld/**", "**/a/b/**",
                    "**/./**", "**/../**", "**/{a,b}/**", "**/caf\u00e9/**", "!**/x/**"):
        assert _plain_directory_names([pattern]) is None, pattern
    with pytest.raises(ValueError):
        directory_matcher(["**/x/**", "!neg"])
