"""The one glob engine: ``wcmatch``, with one syntax check, for every pattern gitquarry reads.

Used by ``[indexing] exclude`` (``gitio.discovery``), ``--files-glob`` / ``files_glob`` and
``[git_indexing] refs`` (``retrieval.filters.compile_glob``: gitignore rules, below) and the
repository docs policy's ``include``/``exclude`` (``repo_docs.policy``: the same engine and
syntax check, anchored at the repository root and case-sensitive, as seed 002 asks).

Gitignore rules (:func:`gitignore_matcher`): ``**`` spans directories; ``*`` and ``?`` stay
within one segment; ``{a,b}`` expands; dotfiles match; a pattern with no ``/`` except a
trailing one matches at any depth (``archive`` is ``**/archive``); a leading or inner ``/``
anchors it at the root; a pattern naming a directory matches everything under it; a trailing
``/`` matches directories only. Names are compared in NFC.

Syntax (:func:`syntax_problem`): an unclosed ``[`` (``docs/[a``), and with braces an unclosed
``{`` or unmatched ``}``, are errors everywhere: wcmatch would read them as literal characters,
so the same text would be an error in one place and a silent literal in another.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable

PathMatcher = Callable[[str], bool]

#: ``wcmatch.glob.GLOBSTAR | DOTGLOB | BRACE`` (written out so that importing this module does
#: not import wcmatch, ~20 ms CPU of a cold query that compiles no glob: issue 21 §1;
#: ``tests/test_lazy_imports.py`` checks the value against wcmatch's)
GITIGNORE_FLAGS = 832
MAX_GLOB_CHARS = 4096


def syntax_problem(pattern: str, *, braces: bool = True) -> str | None:
    """What is wrong with ``pattern``'s brackets (None: nothing): an unclosed ``[`` and, with
    ``braces``, an unclosed ``{`` or an unmatched ``}``. ``\\`` escapes the next character."""
    depth_brace = 0
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            close = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if close == -1:
                return f"unclosed '[' at position {i}"
            i = close + 1
            continue
        if braces and ch == "{":
            depth_brace += 1
        elif braces and ch == "}":
            depth_brace -= 1
            if depth_brace < 0:
                return f"unmatched '}}' at position {i}"
        i += 1
    if depth_brace:
        return "unclosed '{'"
    return None


def nfc(text: str) -> str:
    """``text`` in Unicode NFC (ASCII unchanged)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def gitignore_matcher(pattern: str) -> PathMatcher:
    """``pattern`` as a predicate over repository- or workspace-relative POSIX paths, with the
    gitignore rules of the module docstring.

    :raises ValueError: empty pattern, NUL, longer than ``MAX_GLOB_CHARS``, a leading ``!``
        (negation is not supported), a syntax problem, a ``..`` segment (it matches no
        repository path), or a pattern wcmatch rejects; the
        message says which.
    """
    pattern = nfc(pattern.strip())
    while pattern.startswith("./"):
        pattern = pattern[2:]  # paths are relative: ./src/a.py is src/a.py
    if len(pattern) > MAX_GLOB_CHARS:
        raise ValueError(f"longer than {MAX_GLOB_CHARS} characters")
    if "\x00" in pattern:
        raise ValueError("NUL character in pattern")
    if pattern.startswith("!"):
        raise ValueError("negated patterns are not supported")
    anchored = pattern.startswith("/")
    directory_only = pattern.endswith("/")
    base = pattern.strip("/")
    if not base:
        raise ValueError("the pattern is empty")
    problem = syntax_problem(base)
    if problem is not None:
        raise ValueError(problem)
    if ".." in base.split("/"):  # as --path: a pattern that can match nothing is refused
        raise ValueError("a '..' segment, which no repository path holds: write the pattern "
                         "from the repository root, such as src/**/*.py")
    if not anchored and "/" not in base:
        base = "**/" + base  # no slash but a trailing one: at any depth
    variants = [base + "/**"] if directory_only else [base, base + "/**"]
    from wcmatch import glob as wcglob

    try:
        regexes = [rx for v in variants for rx in wcglob.translate(v, flags=GITIGNORE_FLAGS)[0]]
        compiled = re.compile("|".join(f"(?:{rx})" for rx in regexes))
    except Exception as exc:  # wcmatch: ValueError, PatternLimitException (too many braces)
        raise ValueError(str(exc) or type(exc).__name__) from exc

    def match(path: str) -> bool:
        return compiled.fullmatch(nfc(path)) is not None

    return match


def directory_matcher(patterns: list[str]) -> PathMatcher:
    """Whether a directory (relative POSIX path, no trailing ``/``) matches any of
    ``patterns`` under gitignore rules: the directory itself, or as ``dir/`` (so ``build/``
    and ``**/build/**`` exclude the directory ``build`` and everything in it).

    Patterns that all name one plain directory at any depth (``**/NAME/**``, ``NAME`` of
    ASCII letters, digits, ``.``, ``_``, ``-``: every default ``[indexing] exclude``) are
    matched by comparing path segments, without wcmatch or a regex (compiling the defaults
    cost ~60 ms of every ``gitquarry index``); the answer is the same
    (``tests/test_globs_plain_dirs.py`` checks it against the wcmatch matcher).

    :raises ValueError: a pattern is invalid (:func:`gitignore_matcher`)."""
    names = _plain_directory_names(patterns)
    if names is not None:

        def match_segment(rel: str) -> bool:
            return bool(rel) and not names.isdisjoint(nfc(rel).split("/"))

        return match_segment
    return wcmatch_directory_matcher(patterns)


def wcmatch_directory_matcher(patterns: list[str]) -> PathMatcher:
    """``directory_matcher`` through wcmatch for any patterns (its general path; the
    reference its plain-directory path is tested against).

    :raises ValueError: a pattern is invalid (:func:`gitignore_matcher`)."""
    matchers = [gitignore_matcher(p) for p in patterns]

    def match(rel: str) -> bool:
        return bool(rel) and any(m(rel) or m(rel + "/") for m in matchers)

    return match


_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")
#: wcmatch's own test (``wcmatch.util.CASE_FS``): globs are case-sensitive where the file
#: system's ``normcase`` keeps case (everywhere but Windows)
_CASE_SENSITIVE = os.path.normcase("A") != os.path.normcase("a")


def _plain_directory_names(patterns: list[str]) -> frozenset[str] | None:
    """The ``NAME``s when every pattern is ``**/NAME/**`` with a plain ``NAME`` (not ``.``
    or ``..``), where globs are case-sensitive; else None (the general matcher is needed)."""
    if not _CASE_SENSITIVE:
        return None
    names = set()
    for pattern in patterns:
        text = pattern.strip()
        while text.startswith("./"):
            text = text[2:]
        if not (text.startswith("**/") and text.endswith("/**")):
            return None
        name = text[3:-3]
        if name in (".", "..") or _PLAIN_NAME.fullmatch(name) is None:
            return None
        names.add(name)
    return frozenset(names)
