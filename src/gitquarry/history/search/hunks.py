"""A commit's diff as files and hunks, and the parts of it that best match a query.

Used to make answers smaller without losing what matters: ``compact`` results carry a
±``context``-line excerpt around the best-matching changed line, and a token budget cuts a
full diff down to its best-matching hunks before it drops any result.

Matching is deliberately simple and deterministic: the query's words (lower-cased, letters
and digits, identifiers also split at case boundaries as the keyword index does) are counted
in each hunk's lines; a changed line (``+``/``-``) counts twice as much as a context line.
Ties go to the earlier hunk, so a diff with no matching word keeps its first hunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gitquarry._lazy import lazy_re
from gitquarry.retrieval.tokenize import expand_token

_WORD = lazy_re(r"[^\W_]+")
#: the trailer gitio.log appends to a diff cut at ``delta_max_lines``
_TRAILER = lazy_re(r"\n\n\.\.\. \((?:diff cut at \d+ bytes; )?\d+ lines omitted\)\Z")


@dataclass
class Hunk:
    """One ``@@`` hunk: its header line and body lines (without the header)."""

    header: str
    lines: list[str] = field(default_factory=list)


@dataclass
class FileDiff:
    """One file of a diff: the lines before its first hunk (``diff --git``, ``index``,
    ``---``/``+++``, rename and mode lines, ``Binary files … differ``) and its hunks."""

    head: list[str] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)


def parse_diff(text: str) -> tuple[list[FileDiff], str]:
    """``text`` (``git show --format=`` output) as files and hunks, and any trailer note
    (``... (N lines omitted)``) that ended it. Lines before the first ``diff --git`` go into
    a file with an empty head."""
    trailer = ""
    found = _TRAILER.search(text)
    if found:
        trailer = found.group().strip("\n")
        text = text[: found.start()]
    files: list[FileDiff] = []
    current: FileDiff | None = None
    for line in text.split("\n"):
        if line.startswith("diff --git ") or current is None:
            current = FileDiff()
            files.append(current)
        if line.startswith("@@") and not line.startswith("@@@"):
            current.hunks.append(Hunk(header=line))
        elif current.hunks:
            current.hunks[-1].lines.append(line)
        else:
            current.head.append(line)
    return files, trailer


def query_terms(query: str) -> set[str]:
    """The lower-cased words of ``query`` and of their identifier expansions."""
    terms: set[str] = set()
    for word in _WORD.findall(query):
        terms.add(word.lower())
        for part in expand_token(word).split():
            terms.add(part.lower())
    return {t for t in terms if len(t) > 1 or not t.isascii()}


def line_score(line: str, terms: set[str]) -> float:
    """How well one diff line matches: query words found in it, doubled on a changed line.

    The words are the line's words and the parts ``expand_token`` splits them into
    (``parseConfig`` → ``parse``, ``config``), lower-cased (``_word_set``, kept per word: a
    code base repeats its words). Every such word is a substring of the lower-cased line, so
    an ASCII line holding no query term as a substring scores 0 without being split."""
    if not terms or not line:
        return 0.0
    if line.isascii():
        low = line.lower()
        if not any(t in low for t in terms):
            return 0.0
    matched: set[str] = set()
    for w in set(_WORD.findall(line)):
        expanded = _WORD_SETS.get(w)
        if expanded is None:
            expanded = _word_set(w)
        if not expanded.isdisjoint(terms):
            matched |= expanded & terms
    return len(matched) * (2.0 if line[0] in "+-" else 1.0)


#: word (as written) → it and the parts of ``expand_token(word)``, lower-cased
_WORD_SETS: dict[str, frozenset[str]] = {}
_WORD_SETS_MAX = 2048  # ~0.6 MB at most (the MCP server's memory target)


def _word_set(word: str) -> frozenset[str]:
    expanded = frozenset((word.lower(), *(p.lower() for p in expand_token(word).split())))
    if len(_WORD_SETS) >= _WORD_SETS_MAX:
        _WORD_SETS.clear()
    _WORD_SETS[word] = expanded
    return expanded


def _hunk_score(hunk: Hunk, terms: set[str]) -> float:
    return sum(line_score(line, terms) for line in hunk.lines)


def best_hunks_diff(text: str, query: str, max_chars: int) -> tuple[str, int]:
    """``text`` cut to its best-matching hunks within ``max_chars`` characters (file head
    lines kept for every file that keeps a hunk), in diff order, followed by a note saying how
    many hunks were left out. Returns (diff, hunks left out); the text unchanged and 0 when it
    already fits."""
    if len(text) <= max_chars:
        return text, 0
    files, trailer = parse_diff(text)
    terms = query_terms(query)
    ranked = [
        (-_hunk_score(h, terms), fi, hi)
        for fi, f in enumerate(files) for hi, h in enumerate(f.hunks)
    ]
    ranked.sort()
    keep: set[tuple[int, int]] = set()
    used = 0
    heads_used: set[int] = set()
    for _, fi, hi in ranked:
        hunk = files[fi].hunks[hi]
        cost = len(hunk.header) + 1 + sum(len(x) + 1 for x in hunk.lines)
        if fi not in heads_used:
            cost += sum(len(x) + 1 for x in files[fi].head)
        if used + cost > max_chars:
            continue
        keep.add((fi, hi))
        heads_used.add(fi)
        used += cost
    total = len(ranked)
    out: list[str] = []
    for fi, f in enumerate(files):
        if fi not in heads_used:
            continue
        out.extend(f.head)
        for hi, h in enumerate(f.hunks):
            if (fi, hi) in keep:
                out.append(h.header)
                out.extend(h.lines)
    left_out = total - len(keep)
    note = f"... ({left_out} of {total} hunks left out to fit the token budget)"
    if trailer:
        note += f"; {trailer[4:-1] if trailer.startswith('... (') else trailer}"
    body = "\n".join(out).rstrip("\n")
    return (body + "\n\n" + note if body else note), left_out


def excerpt(text: str, query: str, context: int = 3, max_line_chars: int = 200) -> str:
    """The best-matching changed line of ``text`` with ``context`` lines either side, under
    one ``path:LINE`` line (LINE: the new file's line number of the first line shown, as
    ``grep -n`` prints it; the hunk header instead when the path is unknown). Without a
    matching word: the start of the first hunk. '' for a diff with no hunk (binary,
    mode-only, missing)."""
    files, _ = parse_diff(text)
    terms = query_terms(query)
    best: tuple[float, int, int, int] | None = None
    for fi, f in enumerate(files):
        for hi, h in enumerate(f.hunks):
            for li, line in enumerate(h.lines):
                score = line_score(line, terms) if line[:1] in ("+", "-") else 0.0
                key = (score, -fi, -hi, -li)
                if best is None or key > best:
                    best = key
    if best is None:
        return ""
    fi, hi, li = -best[1], -best[2], -best[3]
    if best[0] == 0:  # nothing matched: the first changed line of the first hunk
        lines = files[fi].hunks[hi].lines
        li = next((i for i, x in enumerate(lines) if x[:1] in ("+", "-")), 0)
    hunk = files[fi].hunks[hi]
    lo, hi_line = max(0, li - context), min(len(hunk.lines), li + context + 1)
    path = _path_of(files[fi])
    shown = [x if len(x) <= max_line_chars else x[:max_line_chars] + "…"
             for x in hunk.lines[lo:hi_line]]
    start = _HUNK_NEW_START.match(hunk.header)
    if not path or start is None:
        return "\n".join([x for x in (path, hunk.header) if x] + shown)
    # lines before the first shown one that exist in the new file: context and additions
    line_no = int(start.group(1)) + sum(1 for x in hunk.lines[:lo] if x[:1] in (" ", "+", ""))
    return "\n".join([f"{path}:{line_no}", *shown])


#: the new file's first line in a hunk header: ``@@ -a,b +c,d @@``
_HUNK_NEW_START = lazy_re(r"^@@ -\d+(?:,\d+)? \+(\d+)")


def _path_of(f: FileDiff) -> str:
    for line in f.head:
        if line.startswith("+++ b/"):
            return line[6:]
    for line in f.head:
        if line.startswith("--- a/"):
            return line[6:]
    for line in f.head:
        if line.startswith("diff --git "):
            parts = line.split(" b/", 1)
            return parts[1] if len(parts) == 2 else line[11:]
    return ""
