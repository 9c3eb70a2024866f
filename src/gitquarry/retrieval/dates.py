"""Relative dates with the meaning of git's ``approxidate`` (``git log --since``), for the
common forms agents and people type.

Accepted (case-insensitive; words separated by spaces, dots, commas or underscores):

- ``<n> <unit> [ago]``, repeated: ``2.weeks.ago``, ``3 months ago``, ``1 year 2 months``,
  where ``<n>`` is digits, ``one`` … ``ten`` or ``last`` (= 1) and ``<unit>`` is
  ``second(s)``, ``minute(s)``, ``hour(s)``, ``day(s)``, ``week(s)``, ``month(s)``,
  ``year(s)``;
- ``yesterday`` (24 hours before now), ``now``, ``noon``, ``midnight``, ``tea`` (the most
  recent 12:00, 00:00 or 17:00 at or before the moment reached so far);
- a weekday name (or three letters of one), optionally after ``<n>``/``last``: ``friday``,
  ``last friday``, ``2 fri ago``.

Meaning, as git's ``date.c`` computes it: start from now in the local time zone; seconds to
weeks subtract a fixed number of seconds; months and years change the calendar fields and the
result is normalised as ``mktime`` does (31 May minus 3 months is 2 or 3 March); ``ago`` is
ignored (``2 weeks`` means the same). Quirks kept for equality with git: a unit with no number
(``week ago``) means now, and ``noon`` before noon means yesterday's noon. Anything else
(``today``, month names, ``next``, times of day such as ``3pm``) is refused rather than
guessed: git reads unknown words as nothing, which would silently mean "now".
``tests/surfaces/test_relative_dates.py`` compares every form with git on a fixed clock
(``GIT_TEST_DATE_NOW``).
"""

from __future__ import annotations

import re
import time

_TOKEN = re.compile(r"[A-Za-z]+|\d+")
_SEPARATORS = re.compile(r"[\s.,_]+")
_NUMBER_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                 "nine", "ten")
_TYPELEN = (("seconds", 1), ("minutes", 60), ("hours", 3600), ("days", 86400),
            ("weeks", 7 * 86400))
_WEEKDAYS = ("sundays", "mondays", "tuesdays", "wednesdays", "thursdays", "fridays",
             "saturdays")
_SPECIAL_HOURS = {"noon": 12, "midnight": 0, "tea": 17}
#: ignored words (git ignores every unknown word; we accept only these)
_NOISE = {"ago", "and"}


class NotRelative(ValueError):
    """The text is not one of the accepted relative forms; ``word`` is the first word that
    is not understood (None: the form as a whole, e.g. a number without a unit)."""

    def __init__(self, word: str | None) -> None:
        super().__init__(word or "")
        self.word = word


def _match(word: str, name: str) -> int:
    """git's ``match_string``: the length of the common prefix, or 0 when ``word`` differs
    from ``name`` at a letter (``word`` is all letters here)."""
    i = 0
    for a, b in zip(word.lower(), name, strict=False):
        if a != b:
            return 0
        i += 1
    return i if len(word) <= len(name) else 0


class _Tm:
    """A broken-down local time, as ``struct tm`` (month 0-based)."""

    def __init__(self, seconds: float) -> None:
        self.set(seconds)

    def set(self, seconds: float) -> None:
        t = time.localtime(seconds)
        self.year, self.mon, self.mday = t.tm_year, t.tm_mon - 1, t.tm_mday
        self.hour, self.min, self.sec, self.wday = t.tm_hour, t.tm_min, t.tm_sec, (
            t.tm_wday + 1) % 7

    def mktime(self) -> int:
        return int(time.mktime((self.year, self.mon + 1, self.mday, self.hour, self.min,
                                self.sec, 0, 0, -1)))

    def update(self, sec: int) -> int:
        """git's ``update_tm``: normalise, subtract ``sec`` seconds, re-split."""
        n = self.mktime() - sec
        self.set(n)
        return n


def approxidate(text: str, now: float) -> int:
    """Unix seconds ``text`` means at ``now`` (see the module docstring).

    :raises NotRelative: ``text`` is not an accepted relative form.
    """
    rest = _SEPARATORS.sub(" ", text).strip()
    if not rest:
        raise NotRelative(None)
    words = _TOKEN.findall(rest)
    if "".join(words) != rest.replace(" ", ""):
        bad = re.sub(r"[A-Za-z0-9 ]", " ", rest).split()
        raise NotRelative(bad[0] if bad else None)
    tm = _Tm(now)
    num = 0
    touched = False
    for word in words:
        if word.isdigit():
            if num:
                raise NotRelative(word)  # two numbers in a row: a date, not a relative form
            num = int(word[:9])
            touched = True
            continue
        lower = word.lower()
        if lower in _NOISE:
            continue
        if lower == "yesterday":
            num = 0
            tm.update(86400)
        elif lower == "now":
            num = 0
            tm.set(now)
        elif lower in _SPECIAL_HOURS:
            hour = _SPECIAL_HOURS[lower]
            if num:
                raise NotRelative(None)  # "3 noon": git reads a day of the month; refused
            if tm.hour < hour:
                tm.update(86400)
            tm.hour, tm.min, tm.sec = hour, 0, 0
        elif not num:
            if lower in _NUMBER_NAMES[1:]:
                num = _NUMBER_NAMES.index(lower)
            elif lower == "last":
                num = 1
            elif _unit(lower) is None:
                raise NotRelative(word)
            # a unit with no number: git does nothing
        else:
            unit = _unit(lower)
            if unit is None:
                raise NotRelative(word)
            kind, value = unit
            if kind == "seconds":
                tm.update(value * num)
            elif kind == "weekday":
                n = num - 1
                diff = tm.wday - value
                if diff <= 0:
                    n += 1
                diff += 7 * n
                tm.update(diff * 86400)
            elif kind == "months":
                tm.update(0)
                m = tm.mon - num
                while m < 0:
                    m += 12
                    tm.year -= 1
                tm.mon = m
            else:  # years
                tm.update(0)
                tm.year -= num
            num = 0
        touched = True
    if num or not touched:
        raise NotRelative(None)  # a number with no unit
    return tm.update(0)


def _unit(word: str) -> tuple[str, int] | None:
    for name, seconds in _TYPELEN:
        if _match(word, name) >= len(name) - 1:
            return "seconds", seconds
    for i, name in enumerate(_WEEKDAYS):
        if _match(word, name) >= 3:
            return "weekday", i
    if _match(word, "months") >= 5:
        return "months", 0
    if _match(word, "years") >= 4:
        return "years", 0
    return None
