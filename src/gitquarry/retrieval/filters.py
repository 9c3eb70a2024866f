"""Candidate filters applied before ranking: changed-file globs and time ranges.

Globs follow ``.gitignore`` (and ``git log -- <pathspec>``) rules, matched with ``wcmatch``:

- ``**`` spans directories (``src/**/*.py`` matches ``src/a.py`` and ``src/x/y/a.py``, not
  ``lib/src/a.py``); ``*`` and ``?`` stay within one path segment; ``{a,b}`` expands;
  dotfiles match.
- A pattern with no ``/`` except a trailing one matches at any depth (``*.md`` is
  ``**/*.md``; ``docs/`` matches ``pkg/docs/``); a ``/`` at the start or in the middle anchors
  it at the repository root (``/src/lib``, ``src/lib``).
- A pattern that names a directory matches every file under it: ``docs``, ``src/lib``,
  ``/src/lib``. A trailing ``/`` matches directories only (``docs/`` does not match a file
  named ``docs``).
- Unicode-equivalent names match: both the pattern and the path are compared in NFC, so a
  name committed decomposed (NFD, as macOS writes it) matches a composed pattern. Stored paths
  are never changed.

Time bounds accept Unix seconds, ``@<seconds>``, and ISO-8601 in extended or basic format.
An all-digit value of exactly 8 digits is a basic-format date ``YYYYMMDD`` (``20240501``);
any other all-digit value is Unix seconds (write ``@12345678`` for the 8-digit seconds of
1970-05-23 to 1973-03-03). Relative dates (``2.weeks.ago``, ``yesterday``, ``"3 months
ago"``) mean what git's approxidate makes of them (``retrieval.dates``).
:func:`interpret_time` says which reading was taken.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from gitquarry.errors import InvalidArgumentError, InvalidGlobError, InvalidTimeError
from gitquarry.globs import MAX_GLOB_CHARS, PathMatcher, gitignore_matcher

#: Unix-second bounds SQLite can store (signed 64-bit).
MIN_TIME = -(2**63)
MAX_TIME = 2**63 - 1


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(argument: str, value: str | None) -> None:
    """:raises InvalidArgumentError: ``value`` is not valid Unicode text: it holds lone
    surrogates, as Python spells bytes of a command-line argument that are not UTF-8
    (``\\udcff`` for ``\\xff``) and as a JSON string may spell them (``"\\udcff"``). Such a
    value cannot be stored, hashed or bound to SQLite. None passes."""
    if value is not None and _SURROGATE.search(value):
        raise InvalidArgumentError(
            argument, "is not valid UTF-8 text (a byte or code point that is no character; "
            "names stored from non-UTF-8 bytes hold U+FFFD in their place)")


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> PathMatcher:
    """Compile ``pattern`` into a predicate over repository-relative POSIX paths, with the
    rules of the module docstring (``gitquarry.globs.gitignore_matcher``: the one engine and
    syntax check shared with ``[indexing] exclude`` and the docs policy). Kept per pattern (a
    pure function of it; errors are not kept): a long-lived process compiles a query's glob
    once, not on every query (issue 21).

    :raises InvalidGlobError: empty pattern, NUL byte, unclosed ``[`` or ``{``, unmatched
        ``}``, a leading ``!`` (negation is not supported), or a pattern wcmatch rejects.
    """
    try:
        return gitignore_matcher(pattern)
    except ValueError as exc:
        shown = pattern if len(pattern) <= MAX_GLOB_CHARS else pattern[:80] + "..."
        raise InvalidGlobError(shown, str(exc)) from exc


@dataclass(frozen=True, kw_only=True)
class TimeBound:
    """A parsed time bound: ``seconds`` (Unix, UTC) from ``given``, read as ``reading``
    (``"unix_seconds"``, ``"iso_date"``, ``"iso_basic_date"`` for ``YYYYMMDD``,
    ``"iso_datetime"``). ``end_of_day`` bounds of a date are its last second."""

    given: str
    seconds: int
    reading: str

    def to_dict(self) -> dict[str, Any]:
        """``{"given", "timestamp", "utc", "read_as"}`` for JSON output and ``--explain``."""
        return {"given": self.given, "timestamp": self.seconds, "utc": format_time(self.seconds),
                "read_as": self.reading}


READINGS = {
    "unix_seconds": "Unix seconds",
    "iso_date": "an ISO-8601 date",
    "iso_basic_date": "an ISO-8601 basic date (YYYYMMDD)",
    "iso_datetime": "an ISO-8601 date and time",
    "relative": "a relative date (as git log --since reads it)",
}


def format_time(seconds: int) -> str:
    """``seconds`` as ISO-8601 UTC (``2024-05-01T00:00:00Z``); out of the calendar's range,
    ``@<seconds>``."""
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return f"@{seconds}"


def _checked(seconds: int, value: str) -> int:
    if not MIN_TIME <= seconds <= MAX_TIME:
        raise InvalidTimeError(value)
    return seconds


def interpret_time(value: str | int, *, end_of_day: bool = False,
                   now: float | None = None) -> TimeBound:
    """Parse a time bound (see the module docstring for the accepted forms and the rule for
    all-digit values). A date or time without an offset is UTC. A bare date is its first
    second, or with ``end_of_day`` its last (``--before 2024-05-01`` includes that day).
    A relative date counts back from ``now`` (Unix seconds; default: the current time) in the
    local time zone, as git does; ``end_of_day`` does not apply to it.

    :raises InvalidTimeError: anything else, or a value outside signed 64-bit seconds.
    """
    if isinstance(value, bool):
        raise InvalidTimeError(str(value))
    if isinstance(value, int):
        return TimeBound(given=str(value), seconds=_checked(value, str(value)),
                         reading="unix_seconds")
    text = value.strip()
    if re.fullmatch(r"@-?\d+", text):
        return TimeBound(given=value, seconds=_checked(int(text[1:]), value),
                         reading="unix_seconds")
    if re.fullmatch(r"-?\d+", text) and not re.fullmatch(r"\d{8}", text):
        return TimeBound(given=value, seconds=_checked(int(text), value), reading="unix_seconds")
    try:
        day = date.fromisoformat(text)
    except ValueError:
        day = None
    if day is not None:
        start = int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())
        reading = "iso_basic_date" if re.fullmatch(r"\d{8}", text) else "iso_date"
        return TimeBound(given=value, seconds=start + (86_399 if end_of_day else 0),
                         reading=reading)
    if re.fullmatch(r"\d{8}", text):
        raise InvalidTimeError(value)  # 8 digits that are no date: say so, don't guess seconds
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        relative = _relative(value, text, now)
        if relative is None:
            raise InvalidTimeError(value) from exc
        return relative
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return TimeBound(given=value, seconds=_checked(int(dt.timestamp()), value),
                     reading="iso_datetime")


def _relative(value: str, text: str, now: float | None) -> TimeBound | None:
    """``text`` read as a relative date (``retrieval.dates``), or None when it is not one."""
    import time

    from gitquarry.retrieval.dates import NotRelative, approxidate

    try:
        seconds = approxidate(text, time.time() if now is None else now)
    except (NotRelative, OverflowError, ValueError, OSError):
        return None
    return TimeBound(given=value, seconds=_checked(seconds, value), reading="relative")


def parse_time(value: str | int | None, *, end_of_day: bool = False) -> int | None:
    """``interpret_time(value).seconds``, or None for None.

    :raises InvalidTimeError: see :func:`interpret_time`.
    """
    if value is None:
        return None
    return interpret_time(value, end_of_day=end_of_day).seconds


def check_time_range(after: int | None, before: int | None) -> None:
    """:raises InvalidArgumentError: a bound outside signed 64-bit seconds, or ``after`` later
    than ``before`` (named ``after``, ``before``, ``after/before``; times shown as dates)."""
    for name, bound in (("after", after), ("before", before)):
        if bound is not None and not MIN_TIME <= bound <= MAX_TIME:
            raise InvalidArgumentError(
                name, f"{bound} is outside the Unix-seconds range SQLite can store"
            )
    if after is not None and before is not None and after > before:
        raise InvalidArgumentError(
            "after/before",
            f"the lower bound {format_time(after)} is later than the upper bound "
            f"{format_time(before)}",
        )
