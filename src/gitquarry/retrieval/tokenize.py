"""The one tokenisation step every lexical index shares (history, graph, repository docs).

SQLite's ``unicode61`` tokenizer splits text on anything that is not a letter or digit and
folds case; ``porter`` stems English words. Three kinds of words developers write come out of
it unsearchable, and Python's ``sqlite3`` cannot register an FTS5 tokenizer to fix that. So
every corpus indexes ``index_text(text)`` instead of ``text``: the text itself, unchanged, then
``EXPANSION_SEPARATOR``, then one *expansion* per distinct word that needs one:

- **identifiers** in camelCase / PascalCase are split at their case boundaries:
  ``parseConfigFile`` → ``parse Config File``, ``HTTPServer`` → ``HTTP Server``,
  ``utf8Decode`` → ``utf8 Decode`` (snake_case and kebab-case already split on ``_``/``-``);
- **CJK** (Chinese, Japanese, Korean: Han, kana, Hangul) have no spaces between words, so
  ``unicode61`` makes a whole run one token; its characters are spaced out so each is a token
  (``修复数据库`` → ``修 复 数 据 库``) and a query run becomes a phrase of those characters;
- **versions** written with a ``v`` (``v2.0.1``) are also indexed without it (``2.0.1``).

The query side (``query_units``, used by ``gitquarry.retrieval.fts``) applies the same rules
to each query word: a word matches its own text *or* its expansion. A commit that holds the
exact identifier matches both and so ranks above one that only holds its parts.

Because the original text comes first and unchanged, token positions in it are the same as
without the expansion: FTS5 ``snippet``/``highlight`` over an external-content table that
holds the raw text stay aligned (a match only inside the expansion is not highlighted).

Shapes: ``index_text(str) -> str`` (``""`` for ``None``), deterministic and pure: the same
text always gives the same index text, which contentless/external-content FTS5 deletes rely
on. ``TOKENIZATION_VERSION`` names these rules; an index built under other rules is rebuilt.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache

from gitquarry._lazy import lazy_re

#: The FTS5 ``tokenize=`` argument every lexical table uses.
FTS5_TOKENIZE = "porter unicode61"
#: Bumped whenever ``index_text``, ``index_diff_text`` or ``FTS5_TOKENIZE`` changes what is
#: indexed. 3: diffs are indexed without their file headers (``index_diff_text``).
TOKENIZATION_VERSION = 3
#: Name of the SQL function ``register_functions`` adds: ``gq_index_text(text) -> text``.
SQL_FUNCTION = "gq_index_text"
#: ``gq_index_diff(diff) -> text``: ``index_diff_text`` in SQL.
SQL_DIFF_FUNCTION = "gq_index_diff"
#: Between the original text and its expansions.
EXPANSION_SEPARATOR = "\n"

# Han (with extension A, compatibility ideographs and the supplementary planes), Hiragana,
# Katakana (with phonetic extensions and half-width forms), Hangul syllables and jamo.
_CJK_RANGES = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
# A "token" is a run of letters and digits, as unicode61 sees it (``_`` separates).
_TOKEN_START = r"(?<![^\W_])"
#: ASCII bytes to classes: lower-case letter ``a``, upper-case ``A``, digit ``d``, other
#: (a token separator) space. Case boundaries are then found with ``bytes.find`` at C speed.
_ASCII_CLASSES = bytes(
    ord("a") if chr(i).islower() else ord("A") if chr(i).isupper()
    else ord("d") if chr(i).isdigit() else ord(" ")
    for i in range(128)
) + b" " * 128
_ASCII_BOUNDARIES = (b"aA", b"dA", b"AAa")
#: where a ``v`` version may start (literal first characters: ``re`` finds them quickly)
_VERSION_HINTS = (lazy_re(r"v\d+\.\d"), lazy_re(r"V\d+\.\d"))
_VERSION_BODY = lazy_re(r"\d+(?:\.\d+)+")
_CAMEL_SPLIT = lazy_re(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CJK_CHAR = lazy_re("([" + _CJK_RANGES + "])")
#: where ``_unicode_tokens`` looks (text that is not ASCII), in one pass: an upper-case letter
#: at a camel/Pascal case boundary (``eC`` in ``parseConfig``, ``PS`` in ``HTTPServer``: the
#: two look-arounds, as ``_CAMEL_SPLIT``), or a CJK character and the CJK run it starts. One
#: leading class, so ``re`` scans for it at C speed (a boundary pass and a CJK pass apart
#: cost 1.7x on Cyrillic text; ``[c]+`` 2.2x ``[c][c]*``). ``[^\W_]*``: a run of
#: ``str.isalnum`` characters (maybe empty)
_HITS = lazy_re(
    "[A-Z" + _CJK_RANGES + "](?:(?<=[a-z0-9][A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=["
    + _CJK_RANGES + "])[" + _CJK_RANGES + "]*)")
_ALNUM_RUN = lazy_re(r"[^\W_]*")
#: the lowest CJK character (U+1100)
_CJK_FIRST = min(_CJK_RANGES.replace("-", ""))
#: a query word's units: a ``v`` version (group 1) or a token
_QUERY_UNIT = lazy_re(_TOKEN_START + r"[vV](\d+(?:\.\d+)+)|[^\W_]+")


@lru_cache(maxsize=1 << 16)
def expand_token(token: str) -> str:
    """``token`` (letters and digits only) split into the words it is made of.

    ``parseConfigFile`` → ``parse Config File``; ``XMLHttpRequest`` → ``XML Http Request``;
    ``修复bug`` → ``修 复 bug``. A token with no case boundary and no CJK character is
    returned unchanged. Cached: a code base repeats its identifiers.
    """
    out = _CAMEL_SPLIT.sub(" ", token)
    if holds_cjk(out):
        # (``" ".join(split)`` is ``sub(r" \1 ")``: the group is the one character matched,
        # and a ``\1`` template costs a Python call per match)
        out = " ".join(" ".join(_CJK_CHAR.split(out)).split())
    return out


def holds_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character (one that ``expand_token`` spaces out). Called
    on tokens (``expand_token``, ``retrieval.highlight``): the U+1100 check walks the text."""
    # every CJK character is at or above U+1100: text below it never compiles the class
    return not text.isascii() and max(text) >= _CJK_FIRST and _CJK_CHAR.search(text) is not None


def _versions(text: str, found: dict[str, None]) -> None:
    if "." not in text:
        return
    for hint in _VERSION_HINTS:
        for match in hint.finditer(text):
            at = match.start()
            if at == 0 or not text[at - 1].isalnum():
                body = _VERSION_BODY.match(text, at + 1)
                if body is not None:
                    found[body.group()] = None


def _ascii_tokens(text: str) -> set[str]:
    """The tokens of ASCII ``text`` that hold a case boundary."""
    mapped = text.encode("ascii").translate(_ASCII_CLASSES)
    tokens: set[str] = set()
    for needle in _ASCII_BOUNDARIES:
        at = mapped.find(needle)
        while at != -1:
            start = mapped.rfind(b" ", 0, at) + 1
            end = mapped.find(b" ", at)
            if end == -1:
                end = len(mapped)
            tokens.add(text[start:end])
            at = mapped.find(needle, end)
    return tokens


def _unicode_tokens(text: str) -> set[str]:
    """The tokens of ``text`` that hold a case boundary or a CJK character."""
    hits: list[int] = []
    for m in _HITS.finditer(text):  # (in text order)
        if m.group().isalnum():  # a boundary's letter, or a run of CJK letters in one token
            hits.append(m.start())
        else:  # a CJK character that is no letter (``・``) splits the run: every one a hit
            hits.extend(range(m.start(), m.end()))
    tokens: set[str] = set()
    end = -1
    for at in hits:
        if at < end:
            continue  # another hit inside the token just taken
        start = at
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        run = _ALNUM_RUN.match(text, at)  # (always matches: it may be empty)
        end = run.end() if run is not None else at
        tokens.add(text[start:end])
    return tokens


def expansions(text: str) -> list[str]:
    """The distinct expansions ``index_text`` appends for ``text``: versions without their
    ``v``, then ``expand_token`` of each distinct token holding a case boundary or a CJK
    character (sorted, so the result does not depend on where they occur)."""
    found: dict[str, None] = {}
    _versions(text, found)
    if text.isascii():
        # ASCII text without an upper-case letter has no case boundary
        tokens = set() if text.islower() else _ascii_tokens(text)
    else:
        tokens = _unicode_tokens(text)
    for token in sorted(tokens):
        expanded = expand_token(token)
        if expanded != token:
            found[expanded] = None
    return list(found)


def index_text(text: str | None) -> str:
    """The text to hand FTS5 for ``text``: ``text`` itself, then (only when there are any)
    ``EXPANSION_SEPARATOR`` and its expansions separated by spaces. ``None`` gives ``""``.

    Deterministic; never raises for a ``str``. Cost is one regex pass over ``text``.
    """
    if not text:
        return ""
    extra = expansions(text)
    if not extra:
        return text
    return text + EXPANSION_SEPARATOR + " ".join(extra)


def query_units(word: str) -> list[str] | None:
    """The expanded form of one query ``word`` as a list of phrases that must all match, or
    None when ``word`` needs no expansion (its own text is then its only form).

    Units are the word's tokens (each through ``expand_token``) and its ``v`` versions
    (without the ``v``): ``HttpAdapter.py`` → ``["Http Adapter", "py"]``, ``v2.0.1`` →
    ``["2.0.1"]``, ``数据库`` → ``["数 据 库"]``, ``config`` → None.
    """
    units: list[str] = []
    changed = False
    for match in _QUERY_UNIT.finditer(word):
        if match.group(1) is not None:
            units.append(match.group(1))
            changed = True
            continue
        unit = expand_token(match.group())
        changed = changed or unit != match.group()
        units.append(unit)
    return units if changed else None


_DIFF_HEADER = "diff --git "


def strip_diff_headers(diff: str) -> str:
    """``diff`` without its per-file header blocks (hunk headers and lines kept). The paths
    they repeat are indexed once, in ``files_changed``; their blob ids are unique tokens
    nobody searches for (two thirds of git.git's keyword vocabulary).

    A header block is a ``diff --git `` line at a line start and every line after it up to
    the first that starts with ``@@`` or ``diff --git `` (or the end): mode, ``index
    <blob>..<blob>``, ``---``/``+++``, rename and ``Binary files`` lines. Found with
    ``str.find`` (equal to the regex ``^diff --git .*\\n?(?:(?!@@|diff --git ).*\\n?)*``
    under ``re.M`` on any ``str``: ``tests/history/test_diff_headers_fast.py``)."""
    at = diff.find(_DIFF_HEADER)
    if at == -1:
        return diff
    kept: list[str] = []
    pos = 0
    while at != -1:
        if at and diff[at - 1] != "\n":
            at = diff.find(_DIFF_HEADER, at + 1)  # inside a line: not a header
            continue
        kept.append(diff[pos:at])
        end = diff.find("\n", at)
        while end != -1:
            line = end + 1
            if diff.startswith(("@@", _DIFF_HEADER), line):
                break
            end = diff.find("\n", line)
        if end == -1:
            return "".join(kept)
        pos = end + 1
        at = diff.find(_DIFF_HEADER, pos)
    kept.append(diff[pos:])
    return "".join(kept)


def index_diff_text(diff: str | None) -> str:
    """What FTS5 indexes for a commit's diff: ``index_text(strip_diff_headers(diff))``."""
    return index_text(strip_diff_headers(diff)) if diff else ""


def register_functions(conn: sqlite3.Connection) -> None:
    """Add ``gq_index_text(text) -> text`` (``index_text``; NULL gives ``''``) and
    ``gq_index_diff(diff) -> text`` (``index_diff_text``) to ``conn``.

    Every connection that writes a table whose FTS5 rows are computed by triggers with these
    functions must have them (``gitquarry.store.open_store`` registers them on each
    connection).
    """
    conn.create_function(SQL_FUNCTION, 1, index_text, deterministic=True)
    conn.create_function(SQL_DIFF_FUNCTION, 1, index_diff_text, deterministic=True)
