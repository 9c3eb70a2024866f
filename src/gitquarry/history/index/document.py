"""The text of a commit as the embedding model sees it, and its format's name.

The document's layout and its token budget are one :class:`DocumentFormat`; its ``name``
(e.g. ``"commit-v3-t128"``) is the ``text_format`` of the embedding namespace, so vectors
built from another layout or budget are never compared with these (an index built before a
change re-embeds).

Layouts:

* ``v1`` (the seed's document): title, message, ``Author:``/``Committer:`` lines, ``Files
  changed:`` and the stored diff, in that order.
* ``v2``: content chosen for meaning, most telling first: title, message, the
  changed paths, the hunk headers' context (the function or class each hunk is in), the
  identifiers on changed lines, then the changed lines themselves (no diff headers, no
  context lines). Author and committer are left to keyword search: names carry no meaning
  for the model and cost ~35 tokens.
* ``v3`` (default): v2's order, written in words the model knows: the message without its
  noise (trailers such as ``Signed-off-by:``, URLs, ``#123`` and ``fixes #12`` references),
  a merge's branch name as words (``Merge branch 'fix-foo-bar'`` adds ``fix foo bar``), and
  the paths, hunk contexts and identifiers split into words (``src/click/termui.py`` →
  ``click termui``, ``get_terminal_size`` and ``getTerminalSize`` → ``get terminal size``),
  each word once and only if the title and message do not hold it already. The changed
  lines are kept as written. This is only the embedding's text: keyword search
  indexes the commit as it is.

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

LAYOUTS: Final = ("v1", "v2", "v3")


@dataclass(frozen=True)
class DocumentFormat:
    """A commit document layout and the tokens of it the model reads."""

    layout: str = "v3"
    max_tokens: int = 128

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown commit document layout {self.layout!r}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")

    @property
    def name(self) -> str:
        """The namespace's ``text_format``, e.g. ``"commit-v3-t128"``."""
        return f"commit-{self.layout}-t{self.max_tokens}"

    def max_chars(self, model_tokens: int) -> int:
        """Characters kept before tokenising, for a model reading ``model_tokens`` at most."""
        return char_budget(min(self.max_tokens, model_tokens))

    def build(self, row: Mapping[str, Any], model_tokens: int) -> str:
        """The document of ``row`` (the ``git_commits`` columns)."""
        max_chars = self.max_chars(model_tokens)
        if self.layout == "v1":
            return _document_v1(row, max_chars)
        if self.layout == "v2":
            return _document_v2(row, max_chars)
        return _document_v3(row, max_chars)


#: The format used to embed commits (measured on the relevance sets: docs/performance.md).
DEFAULT_FORMAT = DocumentFormat("v3", 128)


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


#: ``Signed-off-by:``-style trailer lines (and git's cherry-pick note), dropped whole.
_TRAILER = lazy_re(
    r"(?mi)^\s*(?:[A-Z][A-Za-z]*(?:-[A-Za-z]+)*-by|Co-authored-by|Cc|Change-Id):\s.*$"
    r"|^\s*\(cherry picked from commit [0-9a-f]+\)\s*$",
)
_URL = lazy_re(r"(?i)<?\b(?:https?|ftp)://[^\s>)\]]+>?")
#: what a Markdown link ``[text](url)`` is once its URL is gone: ``text``.
_EMPTY_LINK = lazy_re(r"\[([^\]\n]*)\]\(\s*\)|\(\s*\)")
#: ``fixes #12``, ``closes: GH-3``, ``see pallets/click#9``: the whole reference.
_ISSUE_REF = lazy_re(
    r"(?i)\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|refs?|see|ref|related to|part of)\b:?\s*"
    r"(?:[\w.-]+/[\w.-]+)?(?:#|\bgh-)\d+\b",
)
#: a bare ``#123``, ``(#123)``, ``GH-123`` or ``owner/repo#123``.
_BARE_REF = lazy_re(r"(?i)\(?(?:\b[\w.-]+/[\w.-]+)?(?:#|\bgh-)\d+\b\)?")
_MERGE_BRANCH = lazy_re(r"^Merge (?:remote-tracking )?branch '([^']+)'")
_MERGE_PR = lazy_re(r"^Merge pull request #\d+ from (\S+)")
_ALNUM = lazy_re(r"[A-Za-z0-9]")
_NON_ALNUM = lazy_re(r"[^A-Za-z0-9]+")
_BLANKS = lazy_re(r"[ \t]+")
#: a blank before punctuation, and a run of commas, left where a reference was.
_LOOSE_STOP = lazy_re(r"\s*,?\s*([,.;:!?])(?=\s|$)")
_CAMEL = lazy_re(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
#: path words that say nothing about a change: source roots and file extensions.
_PATH_NOISE_TEXT: Final = (
    "src lib py pyi js ts rst md txt cfg toml ini json yaml yml html css init main")
_PATH_NOISE: Final = frozenset(_PATH_NOISE_TEXT.split())


def clean_message(text: str) -> str:
    """``text`` without trailer lines, URLs and issue/PR references (``#123``, ``fixes
    #12``, ``GH-4``, ``owner/repo#5``), runs of blanks collapsed, blanks before a stop
    dropped, and lines left without a letter or digit dropped."""
    text = _TRAILER.sub("", text)
    text = _EMPTY_LINK.sub(r"\1", _URL.sub("", text))
    text = _ISSUE_REF.sub("", text)
    text = _BARE_REF.sub("", text)
    lines = (_LOOSE_STOP.sub(r"\1", _BLANKS.sub(" ", line)).strip()
             for line in text.splitlines())
    return "\n".join(line for line in lines if _ALNUM.search(line))


def name_words(name: str) -> list[str]:
    """The words of an identifier or path, lowercased, in order: ``snake_case``,
    ``camelCase``, ``HTTPServer``, dotted and path separators all split (``"getTerminalSize"``
    → ``["get", "terminal", "size"]``). Digits are words of their own."""
    words: list[str] = []
    for part in _NON_ALNUM.split(name):
        words.extend(w.lower() for w in _CAMEL.findall(part))
    return words


def merge_branch_words(title: str) -> list[str]:
    """The words of the branch a merge's title names (``Merge branch 'fix-foo-bar'`` →
    ``["fix", "foo", "bar"]``; ``Merge pull request #1 from user/fix-foo`` → ``["fix",
    "foo"]``: the owner is left out); ``[]`` for any other title."""
    match = _MERGE_BRANCH.match(title)
    if match:
        branch = match.group(1)
        branch = branch.split("/", 1)[1] if branch.startswith("origin/") else branch
        return name_words(branch)
    match = _MERGE_PR.match(title)
    if match:
        return name_words(match.group(1).split("/", 1)[-1])
    return []


def _word_line(names: Iterable[str], seen: set[str], noise: frozenset[str],
               max_chars: int) -> str:
    """The words of ``names`` not yet in ``seen`` (added to it), space-separated, at most
    ``max_chars`` characters (whole words)."""
    out: list[str] = []
    used = 0
    for name in names:
        for word in name_words(name):
            if len(word) < 2 or word in seen or word in noise or word.isdigit():
                continue
            if used + len(word) + 1 > max_chars:
                return " ".join(out)
            seen.add(word)
            out.append(word)
            used += len(word) + 1
    return " ".join(out)


def _document_v3(row: Mapping[str, Any], max_chars: int) -> str:
    """Layout v3::

        {title, references and URLs removed}
        {message without trailers, URLs and references}
        {a merge's branch name as words}
        {words of the changed paths}
        {words of the hunk contexts}
        {words of the identifiers on changed lines}
        {changed lines}

    The words lines hold only words not written above them (in the title, the message or an
    earlier words line), each once; a line with nothing left is left out.
    """
    title = clean_message(row["title"][:max_chars]) or row["title"][:max_chars]
    parts: list[str] = [title]
    # cleaning reads a bounded prefix: noise removed rarely exceeds 3x what is kept
    message = clean_message((row["message"] or "")[: 4 * max_chars])
    if message:
        parts.append(message)
    used = sum(len(p) + 1 for p in parts)
    seen: set[str] = set()
    branch = _word_line([" ".join(merge_branch_words(row["title"]))], seen, frozenset(),
                        max(0, max_chars - used))
    if branch:
        parts.append(branch)
        used += len(branch) + 1
    for part in parts:
        seen.update(name_words(part))
    if used < max_chars:
        paths = _word_line(_files(row)[:200], seen, _PATH_NOISE, max_chars - used)
        if paths:
            parts.append(paths)
            used += len(paths) + 1
    delta = row["delta_truncated"] or ""
    if used < max_chars and delta:
        hunks, names, changed = diff_digest(delta)
        for words in (hunks, names):
            if used >= max_chars:
                break
            line = _word_line(words, seen, _NOISE, max_chars - used)
            if line:
                parts.append(line)
                used += len(line) + 1
        if used < max_chars and changed:
            parts.append("\n".join(changed)[: max_chars - used])
    return "\n".join(parts)[:max_chars]


def commit_document(row: Mapping[str, Any], max_chars: int) -> str:
    """The seed's (v1) commit document cut to ``max_chars`` characters (kept for callers of
    the first API; the pipeline uses :meth:`DocumentFormat.build`)."""
    return _document_v1(row, max_chars)
