"""Candidate filters applied before ranking: changed-file globs and time ranges.

Globs have gitignore-style semantics via ``wcmatch``: ``**`` spans directories
(``src/**/*.py`` matches ``src/a.py`` and ``src/x/y/a.py``, not ``lib/src/a.py``), ``*`` and
``?`` stay within one path segment, ``{a,b}`` expands, dotfiles match. A pattern without ``/``
matches the file name at any depth (``*.md`` is ``**/*.md``), as in ``.gitignore``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

from wcmatch import glob as wcglob

from gitquarry.errors import InvalidGlobError, InvalidTimeError

_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE

PathMatcher = Callable[[str], bool]

MAX_GLOB_CHARS = 4096
#: Unix-second bounds SQLite can store (signed 64-bit).
MIN_TIME = -(2**63)
MAX_TIME = 2**63 - 1


def _check_brackets(pattern: str) -> None:
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
                raise InvalidGlobError(pattern, f"unclosed '[' at position {i}")
            i = close + 1
            continue
        if ch == "{":
            depth_brace += 1
        elif ch == "}":
            depth_brace -= 1
            if depth_brace < 0:
                raise InvalidGlobError(pattern, f"unmatched '}}' at position {i}")
        i += 1
    if depth_brace:
        raise InvalidGlobError(pattern, "unclosed '{'")


def compile_glob(pattern: str) -> PathMatcher:
    """Compile ``pattern`` into a predicate over repository-relative POSIX paths.

    :raises InvalidGlobError: empty pattern, NUL byte, unclosed ``[`` or ``{``, unmatched
        ``}``, a leading ``/`` or ``!`` (negation is not supported), or a pattern wcmatch
        rejects.
    """
    original = pattern
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]  # paths are repository-relative: ./src/a.py is src/a.py
    if not pattern:
        raise InvalidGlobError(original, "the pattern is empty")
    if len(pattern) > MAX_GLOB_CHARS:
        raise InvalidGlobError(original[:80] + "...", f"longer than {MAX_GLOB_CHARS} characters")
    if "\x00" in pattern:
        raise InvalidGlobError(pattern, "NUL character in pattern")
    if pattern.startswith("!"):
        raise InvalidGlobError(pattern, "negated patterns are not supported")
    _check_brackets(pattern)
    effective = pattern.lstrip("/") if pattern.startswith("/") else pattern
    if "/" not in pattern:
        effective = "**/" + pattern
    if effective.endswith("/"):
        effective += "**"
    try:
        regexes = wcglob.translate(effective, flags=_FLAGS)[0]
        compiled = [re.compile(r) for r in regexes]
    except Exception as exc:  # wcmatch: ValueError, PatternLimitException (too many braces)
        raise InvalidGlobError(original, str(exc) or type(exc).__name__) from exc

    def match(path: str) -> bool:
        return any(rx.fullmatch(path) for rx in compiled)

    return match


def parse_time(value: str | int | None, *, end_of_day: bool = False) -> int | None:
    """Parse a time bound into Unix seconds (UTC).

    Accepts an int, a string of digits (Unix seconds, optionally negative), or ISO-8601
    (``2024-05-01``, ``2024-05-01T12:00``, ``2024-05-01T12:00:00+02:00``, ``...Z``). A date or
    time without an offset is taken as UTC. A bare date is its first second, or with
    ``end_of_day`` its last (so ``--before 2024-05-01`` includes that whole day).
    :raises InvalidTimeError: anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidTimeError(str(value))
    if isinstance(value, int):
        if not MIN_TIME <= value <= MAX_TIME:
            raise InvalidTimeError(str(value))
        return value
    text = value.strip()
    if re.fullmatch(r"-?\d+", text):
        number = int(text)
        if not MIN_TIME <= number <= MAX_TIME:
            raise InvalidTimeError(value)
        return number
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise InvalidTimeError(value) from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    seconds = int(dt.timestamp())
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        seconds += 86_399
    return seconds
