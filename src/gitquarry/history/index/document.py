"""The text of a commit as the embedding model sees it, and its format's name.

The document's layout and its token budget are one :class:`DocumentFormat`; its ``name``
(e.g. ``"commit-v2-t128"``) is the ``text_format`` of the embedding namespace, so vectors
built from another layout or budget are never compared with these (an index built before a
change re-embeds).

Layouts:

* ``v1`` (the seed's document): title, message, ``Author:``/``Committer:`` lines, ``Files
  changed:`` and the stored diff, in that order.
* ``v2`` (default): content chosen for meaning, most telling first: title, message, the
  changed paths, the hunk headers' context (the function or class each hunk is in), the
  identifiers on changed lines, then the changed lines themselves (no diff headers, no
  context lines). Author and committer are left to keyword search: names carry no meaning
  for the model and cost ~35 tokens.

The budget is in the model's tokens (the tokenizer cuts exactly); the document is first cut
to :func:`~gitquarry.embedding.char_budget` characters of it so a 50,000-file commit or a
200-line diff costs bounded work.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from gitquarry._lazy import lazy_re
from gitquarry.embedding import char_budget

LAYOUTS: Final = ("v1", "v2")


@dataclass(frozen=True)
class DocumentFormat:
    """A commit document layout and the tokens of it the model reads."""

    layout: str = "v2"
    max_tokens: int = 128

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown commit document layout {self.layout!r}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")

    @property
    def name(self) -> str:
        """The namespace's ``text_format``, e.g. ``"commit-v2-t128"``."""
        return f"commit-{self.layout}-t{self.max_tokens}"

    def max_chars(self, model_tokens: int) -> int:
        """Characters kept before tokenising, for a model reading ``model_tokens`` at most."""
        return char_budget(min(self.max_tokens, model_tokens))

    def build(self, row: Mapping[str, Any], model_tokens: int) -> str:
        """The document of ``row`` (the ``git_commits`` columns)."""
        max_chars = self.max_chars(model_tokens)
        if self.layout == "v1":
            return _document_v1(row, max_chars)
        return _document_v2(row, max_chars)


#: The format used to embed commits (measured on the relevance sets: docs/performance.md).
DEFAULT_FORMAT = DocumentFormat("v2", 128)


def default_format() -> DocumentFormat:
    """The commit document format in use (read at call time, so benchmarks can swap it)."""
    return DEFAULT_FORMAT


def text_format() -> str:
    """The ``text_format`` of commit vectors: ``default_format().name``."""
    return default_format().name


def _files(row: Mapping[str, Any]) -> list[str]:
    files = row["files_changed"]
    loaded = json.loads(files) if isinstance(files, str) else files
    return [str(f) for f in loaded]


def _fill(parts: list[str], items: Iterable[str], used: int, max_chars: int) -> int:
    for item in items:
        if used >= max_chars:
            break
        parts.append(item)
        used += len(item) + 1
    return used


def _document_v1(row: Mapping[str, Any], max_chars: int) -> str:
    """The seed's layout::

        {title}
        {message}
        Author: {author}
        Committer: {committer}
        Files changed:
        {file per line}
        {delta_truncated}
    """
    parts: list[str] = [row["title"]]
    if row["message"]:
        parts.append(row["message"])
    parts.append(f"Author: {row['author']}")
    parts.append(f"Committer: {row['committer']}")
    parts.append("Files changed:")
    used = _fill(parts, _files(row), sum(len(p) + 1 for p in parts), max_chars)
    if used < max_chars and row["delta_truncated"]:
        parts.append(row["delta_truncated"][: max_chars - used])
    return "\n".join(parts)[:max_chars]


_HUNK = lazy_re(r"^@@ [^@]*@@ ?(.*)$")
_IDENTIFIER = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
#: words too common on changed lines of code to say anything about a change.
_NOISE_TEXT: Final = (
    "and as assert async await break case catch class const continue def default del do elif "
    "else except export false finally for from function if import in is let new nil none not "
    "null or pass raise return self static switch this throw true try var void while with "
    "yield the a an to of is it be"
)
_NOISE: Final = frozenset(_NOISE_TEXT.split())


def diff_digest(delta: str, *, max_lines: int = 400) -> tuple[list[str], list[str], list[str]]:
    """``(hunk contexts, identifiers, changed lines)`` of a unified diff, each deduplicated
    in order of first appearance. Hunk contexts are the text after ``@@ … @@`` (git's
    function/class line); identifiers are names (dotted names kept whole) on ``+``/``-``
    lines, without language keywords; changed lines are the ``+``/``-`` lines without the
    sign, stripped. Reads at most ``max_lines`` lines of ``delta``."""
    hunks: dict[str, None] = {}
    names: dict[str, None] = {}
    changed: dict[str, None] = {}
    for n, line in enumerate(delta.splitlines()):
        if n >= max_lines:
            break
        if line.startswith("@@"):
            match = _HUNK.match(line)
            if match and match.group(1).strip():
                hunks.setdefault(match.group(1).strip(), None)
            continue
        if line.startswith(("+++", "---")) or not line.startswith(("+", "-")):
            continue
        body = line[1:].strip()
        if not body:
            continue
        changed.setdefault(body, None)
        for name in _IDENTIFIER.findall(body):
            if len(name) > 2 and name.lower() not in _NOISE:
                names.setdefault(name, None)
    return list(hunks), list(names), list(changed)


def _document_v2(row: Mapping[str, Any], max_chars: int) -> str:
    """Layout v2::

        {title}
        {message}
        {changed paths, space-separated}
        {hunk contexts, "; "-separated}
        {identifiers on changed lines, space-separated}
        {changed lines}
    """
    parts: list[str] = [row["title"]]
    if row["message"]:
        parts.append(row["message"])
    used = sum(len(p) + 1 for p in parts)
    if used < max_chars:
        files = " ".join(_files(row)[:200])
        if files:
            parts.append(files[: max_chars - used])
            used += len(parts[-1]) + 1
    delta = row["delta_truncated"] or ""
    if used < max_chars and delta:
        hunks, names, changed = diff_digest(delta)
        for piece in ("; ".join(hunks), " ".join(names), "\n".join(changed)):
            if used >= max_chars:
                break
            if piece:
                parts.append(piece[: max_chars - used])
                used += len(parts[-1]) + 1
    return "\n".join(parts)[:max_chars]


def commit_document(row: Mapping[str, Any], max_chars: int) -> str:
    """The seed's (v1) commit document cut to ``max_chars`` characters (kept for callers of
    the first API; the pipeline uses :meth:`DocumentFormat.build`)."""
    return _document_v1(row, max_chars)
