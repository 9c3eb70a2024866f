"""``retrieval.tokenize.strip_diff_headers`` (``str.find``; what ``fts_values``, the SQL
function ``gq_index_diff`` and the FTS5 rebuild use) equals the regex it replaced on edge
cases, real diff shapes and random texts built from the pieces the two treat specially."""

from __future__ import annotations

import random
import re

import pytest

from gitquarry.retrieval.tokenize import strip_diff_headers

#: the definition the index was built with (index format 3), verbatim
_DIFF_FILE_HEADER = re.compile(r"^diff --git .*\n?(?:(?!@@|diff --git ).*\n?)*", re.M)


def regex_strip(diff: str) -> str:
    return _DIFF_FILE_HEADER.sub("", diff) if "diff --git " in diff else diff

_DIFF = (
    "diff --git a/x.py b/x.py\nindex 1111111..2222222 100644\n--- a/x.py\n+++ b/x.py\n"
    "@@ -1,2 +1,2 @@ def f():\n-old\n+new\n context diff --git inside\n"
    "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..3333333\n"
    "Binary files /dev/null and b/img.png differ\n"
    "diff --git a/old.txt b/new.txt\nsimilarity index 100%\nrename from old.txt\n"
    "rename to new.txt\n"
    "diff --git a/m b/m\nold mode 100644\nnew mode 100755\n"
    "diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+diff --git a/z b/z\n"
)


@pytest.mark.parametrize("text", [
    "", "no diff here", "\n", "diff --git ", "diff --git", "diff --git \n", "xdiff --git a b\n",
    "diff --git a b", "diff --git a b\n", "diff --git a b\n@@", "diff --git a b\n@@ -1 +1 @@\n",
    "diff --git a b\ndiff --git c d\n@@ x\n", "diff --git a b\n\n\n@@\n", "@@\ndiff --git a\n",
    "line\ndiff --git a b\nindex 1..2\n", "line\ndiff --git a b\nindex 1..2",
    "diff --git a b\r\n@@ -1 +1 @@\r\n+x\r\n", "diff --git a b\n @@ not a hunk\n@\n@@ yes\n",
    "diff --git é b\nindex\n@@ 修复\n+é\n", "a\u2028diff --git x\n@@\n",
    "\ndiff --git a b\nBinary files a and b differ\n\n... (12 lines omitted)",
    "diff --git a b\n+diff --git c d\n", "diff --git a b\n diff --git c d\n@@\n",
    _DIFF, _DIFF * 3, _DIFF[:-1], _DIFF + "\n\n... (diff cut at 262144 bytes; 5 lines omitted)",
])
def test_equal_to_the_regex_on_edge_cases(text: str) -> None:
    assert strip_diff_headers(text) == regex_strip(text)


def test_strips_what_it_should_on_a_real_shape() -> None:
    out = strip_diff_headers(_DIFF)
    assert "index 1111111" not in out and "rename from" not in out and "old mode" not in out
    assert out.startswith("@@ -1,2 +1,2 @@ def f():\n-old\n+new\n context diff --git inside\n")
    assert out.endswith("@@ -1 +1 @@\n-a\n+diff --git a/z b/z\n")


def test_equal_to_the_regex_on_random_texts() -> None:
    pieces = ["diff --git ", "diff --git a/f b/f", "@@", "@", "\n", "\n", "\n", "a", " ",
              "+", "-", "index 12..34", "diff --gi", "\r", "é", "修", "\u2028", "--- a/f"]
    rng = random.Random(21)
    differing = 0
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        want = regex_strip(text)
        assert strip_diff_headers(text) == want, repr(text)
        differing += want != text
    assert differing > 1000  # headers really were stripped in many of them
