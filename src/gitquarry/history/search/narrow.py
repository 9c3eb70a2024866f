"""Filters in ``git log``'s vocabulary, applied as a candidate set before ranking:
``author`` / ``committer``, ``path`` prefix, ``pickaxe`` (``-S``) and an explicit set of
commits (a file's history, for ``blame`` with a query).

Each filter selects commit ids; their intersection (and the files glob's, when there is one)
is written to ``temp.gq_candidates``, which both rankers already filter on, so ``top_n`` is
filled whenever enough commits pass (nothing is filtered after ranking).

- ``author``/``committer``: a case-insensitive substring of ``Name <email>``, matched against
  the canonical identity (after ``.mailmap``) and the identity as committed
  (``author_raw``), so ``--author old@mail`` still finds a person's commits after a
  ``.mailmap`` maps that address to a new one.
- ``path``: a path prefix, ``src/lib`` or ``src/lib/`` (a directory and all under it) or a
  file; compared on whole path segments (``src/li`` does not match ``src/lib/a.py``;
  a prefix ending in ``/`` or naming a file matches exactly that).
- ``pickaxe``: commits whose diff changes the number of occurrences of a string in some file
  (``git log -S``: case-sensitive; merges never match). Answered from the stored diff where it
  is complete (``delta_truncated`` not cut and not missing objects, no binary file): the
  string's occurrences in removed and added lines are counted per file. Commits whose stored
  diff is cut or lacks objects are asked of git (``git log -S`` over exactly those commits,
  after the other filters); ``PickaxeReport`` says how many went which way.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from gitquarry.errors import GitquarryError
from gitquarry.gitio.pickaxe import pickaxe_commits
from gitquarry.history.search.candidates import GlobCandidates
from gitquarry.history.search.hunks import parse_diff
from gitquarry.query.narrowing import MAX_FILTER_CHARS, Narrowing, validate_narrowing
from gitquarry.store.compression import inflate_text

__all__ = ["MAX_FILTER_CHARS", "NarrowCandidates", "Narrowing", "PickaxeReport",
           "path_known", "validate_narrowing"]

log = logging.getLogger(__name__)

#: commits whose stored diff is cut that git is asked about at most (the rest: a warning)
PICKAXE_GIT_MAX = 5000


@dataclass
class PickaxeReport:
    """How the pickaxe filter was answered: ``from_index`` commits decided from their stored
    diff, ``from_git`` commits asked of ``git log -S`` (their stored diff was cut or lacks
    objects), ``unchecked`` commits that could not be asked (over ``PICKAXE_GIT_MAX`` or git
    failed), ``matched`` the commits that passed."""

    string: str
    from_index: int = 0
    from_git: int = 0
    unchecked: int = 0
    matched: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def answered_from(self) -> str:
        return "index+git" if self.from_git else "index"

    def to_dict(self) -> dict[str, object]:
        return {"string": self.string, "answered_from": self.answered_from,
                "decided_from_stored_diff": self.from_index,
                "checked_with_git_log_S": self.from_git, "unchecked": self.unchecked,
                "matched": self.matched}


def _like(text: str) -> str:
    return "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _identity_ids(conn: sqlite3.Connection, column: str, needle: str) -> set[int]:
    pattern = _like(needle)
    return {int(r[0]) for r in conn.execute(
        f"SELECT id FROM git_commits WHERE lower({column}) LIKE ? ESCAPE '\\' "
        f"OR lower(coalesce({column}_raw, '')) LIKE ? ESCAPE '\\'", (pattern, pattern))}


def _prefix_sql(prefix: str) -> tuple[str, list[str]]:
    """The ``paths`` ids under ``prefix`` (a directory and all under it, or one file) as SQL
    and its parameters."""
    base = prefix.rstrip("/")
    params: list[str] = [base + "/", base + "/\U0010ffff"]
    sql = "SELECT id FROM paths WHERE (path >= ? AND path < ?)"
    if not prefix.endswith("/"):
        sql += " OR path = ?"
        params.append(base)
    return sql, params


def _path_ids(conn: sqlite3.Connection, prefix: str) -> set[int]:
    sql, params = _prefix_sql(prefix)
    return {int(r[0]) for r in conn.execute(
        "SELECT DISTINCT commit_id FROM commit_paths WHERE path_id IN "
        f"({sql})", params)}


def path_known(conn: sqlite3.Connection, prefix: str) -> bool:
    """Whether some indexed commit changes a path under ``prefix`` (as the ``path`` filter
    reads it, normalised by ``validate_narrowing``)."""
    sql, params = _prefix_sql(prefix)
    return conn.execute(
        f"SELECT 1 FROM commit_paths WHERE path_id IN ({sql}) LIMIT 1", params
    ).fetchone() is not None


_CUT_MARKS = ("lines omitted)", "(diff unavailable: ")


def stored_diff_decides(delta: str, complete: int) -> bool:
    """Whether a stored diff holds every changed line (not cut, no missing objects, no
    binary file)."""
    if not complete:
        return False
    tail = delta[-200:]
    if tail.endswith(_CUT_MARKS[0]) or delta.startswith(_CUT_MARKS[1]):
        return False
    return "\nBinary files " not in delta and not delta.startswith("Binary files ")


def pickaxe_in_diff(delta: str, needle: str) -> bool:
    """Whether ``delta`` (a complete diff) changes the count of ``needle`` in some file."""
    files, _ = parse_diff(delta)
    for f in files:
        removed = added = 0
        for h in f.hunks:
            for line in h.lines:
                if line.startswith("-"):
                    removed += line.count(needle, 1)
                elif line.startswith("+"):
                    added += line.count(needle, 1)
        if removed != added:
            return True
    return False


def _pickaxe_ids(conn: sqlite3.Connection, needle: str, within: set[int] | None,
                 report: PickaxeReport) -> set[int]:
    matched: set[int] = set()
    ask_git: list[int] = []
    # stored diffs are compressed (store.compression): inflate each once, then test it
    for cid, stored, complete in conn.execute(
        "SELECT id, delta_truncated, complete FROM git_commits WHERE is_merge = 0"
    ):
        if within is not None and cid not in within:
            continue
        delta = inflate_text(stored)
        if not (needle in delta or not complete or delta.endswith("lines omitted)")
                or delta.startswith("(diff unavailable: ")):
            continue
        if "\n" not in needle and stored_diff_decides(delta, complete):
            report.from_index += 1
            if pickaxe_in_diff(delta, needle):
                matched.add(int(cid))
        else:
            ask_git.append(int(cid))
    if ask_git:
        if len(ask_git) > PICKAXE_GIT_MAX:
            report.unchecked += len(ask_git) - PICKAXE_GIT_MAX
            ask_git = ask_git[:PICKAXE_GIT_MAX]
        matched |= _pickaxe_git(conn, needle, ask_git, report)
    report.matched = len(matched)
    return matched


def _pickaxe_git(conn: sqlite3.Connection, needle: str, ids: list[int],
                 report: PickaxeReport) -> set[int]:
    by_repo: dict[str, list[tuple[int, str]]] = {}
    marks = ",".join("?" * len(ids))
    for cid, commit_hash, common_dir in conn.execute(
        "SELECT c.id, c.hash, (SELECT r.common_dir FROM repo_commits rc JOIN repositories r "
        "ON r.id = rc.repo_id WHERE rc.commit_id = c.id ORDER BY r.path LIMIT 1) "
        f"FROM git_commits c WHERE c.id IN ({marks})", ids,
    ):
        by_repo.setdefault(common_dir or "", []).append((int(cid), commit_hash))
    found: set[int] = set()
    for common_dir, commits in by_repo.items():
        if not common_dir or not Path(common_dir).exists():
            report.unchecked += len(commits)
            continue
        try:
            hits = pickaxe_commits(Path(common_dir), [h for _, h in commits], needle)
        except GitquarryError as exc:
            report.unchecked += len(commits)
            report.errors.append(str(exc))
            continue
        report.from_git += len(commits)
        found |= {cid for cid, h in commits if h in hits}
    return found


def candidate_ids(conn: sqlite3.Connection, n: Narrowing) -> tuple[set[int], PickaxeReport | None]:
    """The commit ids passing every filter of ``n`` (which must be ``active``)."""
    sets: list[set[int]] = []
    if n.commits is not None:
        hashes = sorted(n.commits)
        found: set[int] = set()
        for start in range(0, len(hashes), 500):
            part = hashes[start:start + 500]
            found |= {int(r[0]) for r in conn.execute(
                f"SELECT id FROM git_commits WHERE hash IN ({','.join('?' * len(part))})", part)}
        sets.append(found)
    if n.author is not None:
        sets.append(_identity_ids(conn, "author", n.author))
    if n.committer is not None:
        sets.append(_identity_ids(conn, "committer", n.committer))
    if n.path is not None:
        sets.append(_path_ids(conn, n.path))
    within = set.intersection(*sets) if sets else None
    report = None
    if n.pickaxe is not None:
        report = PickaxeReport(n.pickaxe)
        within = _pickaxe_ids(conn, n.pickaxe, within, report)
    return (within if within is not None else set()), report


class NarrowCandidates(GlobCandidates):
    """``temp.gq_candidates`` holding the commits that pass ``narrowing`` (and the files
    glob, if ``glob`` is given); quacks like a materialised ``GlobCandidates`` for the
    rankers. Create it inside the search's transaction (the temp table is rolled back)."""

    def __init__(self, conn: sqlite3.Connection, narrowing: Narrowing,  # no super(): no glob
                 glob: GlobCandidates | None = None) -> None:
        self.materialized = True
        self.broad = False
        ids, self.pickaxe = candidate_ids(conn, narrowing)
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS gq_candidates (id INTEGER PRIMARY KEY)")
        if glob is not None:
            glob.materialize()
            kept = {int(r[0]) for r in conn.execute("SELECT id FROM temp.gq_candidates")}
            ids &= kept
        conn.execute("DELETE FROM temp.gq_candidates")
        conn.executemany("INSERT INTO temp.gq_candidates (id) VALUES (?)",
                         ((i,) for i in sorted(ids)))
        self.conn = conn
        self.count = len(ids)

    def materialize(self) -> int:
        return self.count

    def keep(self, ids: list[int]) -> set[int]:
        return {int(r[0]) for r in self.conn.execute(
            f"SELECT id FROM temp.gq_candidates WHERE id IN ({','.join('?' * len(ids))})", ids)
        } if ids else set()
