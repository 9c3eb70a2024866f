"""``index_state``: how fresh the index is, per repository, without re-indexing anything.

For each indexed repository: the refs as the last indexing run recorded them (``repo_refs``)
against the refs the repository has now (one ``git for-each-ref``; refs still naming the
object recorded at indexing, ``repo_refs.raw``, keep their indexed tip, the others are peeled
with one ``cat-file`` as indexing reads them; a listing that fails on a missing object falls
back to indexing's own ``read_refs``), the commits the current tips reach that the indexed tips do
not (``git rev-list --count``, counted up to ``NEW_COMMITS_LIMIT``), the share of the
repository's indexed commits that have a vector in the configured embedding namespace, and
when it was last indexed. The git part is cached for ``CACHE_S`` seconds per repository, so a
burst of calls costs one comparison; the SQLite part is recomputed only after the index
changed (``PRAGMA data_version``).

Shape (``to_dict``)::

    {"checked_at": 1718000000, "up_to_date": false, "repositories": [
        {"path": "/w/app", "last_indexed_at": 1717990000, "up_to_date": false,
         "commits_not_indexed": 3, "refs_changed": 1,
         "changed_refs": ["refs/heads/main"], "embedded_fraction": 0.97}],
     "repositories_total": 1}

In ``compact`` and ``ids`` answers (:func:`compact_state`) a repository entry leaves out
``commits_not_indexed``, ``refs_changed`` and ``changed_refs`` when they are 0 or empty (its
``up_to_date`` says so) and ``last_indexed_at`` is kept.

``commits_not_indexed`` is ``NEW_COMMITS_LIMIT`` when at least that many (then
``commits_not_indexed_at_least`` is true) and null when git could not tell (an indexed tip
was garbage-collected: the next ``gitquarry index`` reconciles). A repository whose directory
is gone says ``"missing": true``. At most ``MAX_REPOSITORIES`` are listed (stale ones first).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitquarry.errors import GitquarryError
from gitquarry.gitio.refs import (
    display_ref,
    listed_refs,
    peeled_commits,
    read_refs,
    ref_from_bytes,
)
from gitquarry.gitio.tips import count_new_commits

CACHE_S = 2.0
NEW_COMMITS_LIMIT = 10_000
MAX_REPOSITORIES = 20
MAX_CHANGED_REFS = 5


@dataclass
class _GitView:
    at: float
    current: dict[str, str] | None  # ref -> tip; None: the repository cannot be read
    indexed_key: tuple[tuple[str, str], ...]
    new_commits: int | None


class FreshnessChecker:
    """Computes ``index_state`` for one index; keep one per process (it holds the cache)."""

    def __init__(self, ref_globs: list[str]) -> None:
        self.ref_globs = list(ref_globs)
        self._git: dict[int, _GitView] = {}
        self._embedded: tuple[int, int | None, dict[int, float]] | None = None
        self._lock = threading.Lock()

    def _embedded_fractions(self, conn: sqlite3.Connection,
                            namespace_id: int | None) -> dict[int, float]:
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        cached = self._embedded
        if cached is not None and cached[0] == version and cached[1] == namespace_id:
            return cached[2]
        out: dict[int, float] = {}
        if namespace_id is not None:
            for row in conn.execute(
                "SELECT rc.repo_id, count(*), count(v.commit_id) FROM repo_commits rc "
                "LEFT JOIN commit_vectors v ON v.namespace_id = ? AND v.commit_id = rc.commit_id "
                "GROUP BY rc.repo_id", (namespace_id,),
            ):
                out[int(row[0])] = round(row[2] / row[1], 4) if row[1] else 0.0
        self._embedded = (version, namespace_id, out)
        return out

    def _current(self, git_dir: Path, indexed: dict[str, str],
                 raw: dict[str, str]) -> dict[str, str]:
        """``{ref: commit}`` of the selected refs now, as ``read_refs(...).tips`` says: one
        ``for-each-ref`` (which fails on a missing object) and the indexed tip of every ref
        still naming the object it named when indexed (``raw``); only moved or new refs are
        peeled. When the listing fails, ``read_refs`` itself (which leaves broken refs out).

        :raises GitquarryError: git could not list the refs at all."""
        listing = listed_refs(git_dir, self.ref_globs)
        if listing is None:
            return {t.ref: t.commit for t in read_refs(git_dir, self.ref_globs).tips}
        current: dict[str, str] = {}
        moved: list[tuple[str, str]] = []
        for ref, oid in listing:
            if ref in indexed and raw.get(ref) == oid:
                current[ref] = indexed[ref]
            else:
                moved.append((ref, oid))
        if moved:
            current.update(peeled_commits(git_dir, moved))
        return current

    def _git_view(self, repo_id: int, git_dir: Path, indexed: dict[str, str],
                  raw: dict[str, str] | None = None) -> _GitView:
        key = tuple(sorted(indexed.items()))
        now = time.monotonic()
        view = self._git.get(repo_id)
        if view is not None and now - view.at < CACHE_S and view.indexed_key == key:
            return view
        try:
            current = self._current(git_dir, indexed, raw or {})
        except (GitquarryError, OSError):
            view = _GitView(now, None, key, None)
        else:
            moved = sorted({tip for ref, tip in current.items() if indexed.get(ref) != tip})
            new = count_new_commits(git_dir, moved, sorted(set(indexed.values())),
                                    NEW_COMMITS_LIMIT) if moved else 0
            view = _GitView(now, current, key, None if new < 0 else new)
        self._git[repo_id] = view
        return view

    def state(self, conn: sqlite3.Connection, namespace_id: int | None) -> dict[str, Any]:
        """The ``index_state`` object (see the module docstring)."""
        with self._lock:
            return self._state(conn, namespace_id)

    def _state(self, conn: sqlite3.Connection, namespace_id: int | None) -> dict[str, Any]:
        fractions = self._embedded_fractions(conn, namespace_id)
        refs: dict[int, dict[str, str]] = {}
        raws: dict[int, dict[str, str]] = {}
        for row in conn.execute("SELECT repo_id, ref, tip, raw FROM repo_refs"):
            ref = row[1]
            name = ref_from_bytes(bytes(ref)) if isinstance(ref, bytes) else str(ref)
            refs.setdefault(int(row[0]), {})[name] = row[2]
            if row[3] is not None:
                raws.setdefault(int(row[0]), {})[name] = row[3]
        repos: list[dict[str, Any]] = []
        for row in conn.execute(
            "SELECT id, path, common_dir, last_indexed_at, run_in_progress FROM repositories "
            "ORDER BY path"
        ):
            repo_id = int(row[0])
            indexed = refs.get(repo_id, {})
            git_dir = Path(row[2])
            entry: dict[str, Any] = {"path": row[1], "last_indexed_at": row[3]}
            if not git_dir.exists():
                entry.update(missing=True, up_to_date=False)
                repos.append(entry)
                continue
            view = self._git_view(repo_id, git_dir, indexed, raws.get(repo_id))
            if view.current is None:
                entry.update(unreadable=True, up_to_date=False)
            else:
                changed = sorted(
                    {r for r in view.current if indexed.get(r) != view.current[r]}
                    | {r for r in indexed if r not in view.current}
                )
                entry["commits_not_indexed"] = view.new_commits
                if view.new_commits is not None and view.new_commits >= NEW_COMMITS_LIMIT:
                    entry["commits_not_indexed_at_least"] = True
                entry["refs_changed"] = len(changed)
                if changed:
                    entry["changed_refs"] = [display_ref(r) for r in changed[:MAX_CHANGED_REFS]]
                entry["up_to_date"] = not changed and not row[4]
            if row[4]:
                entry["run_in_progress"] = True
            if namespace_id is not None:
                entry["embedded_fraction"] = fractions.get(repo_id, 0.0)
            repos.append(entry)
        repos.sort(key=lambda r: (bool(r.get("up_to_date")), r["path"]))
        return {
            "checked_at": int(time.time()),
            "up_to_date": all(r.get("up_to_date") for r in repos),
            "repositories": repos[:MAX_REPOSITORIES],
            "repositories_total": len(repos),
        }


#: repository fields ``compact_state`` leaves out when 0 or empty
_QUIET_WHEN_ZERO = ("commits_not_indexed", "refs_changed", "changed_refs")


def compact_state(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` without the zero counters of up-to-date repositories (module docstring)."""
    repos = [{k: v for k, v in repo.items() if not (k in _QUIET_WHEN_ZERO and v in (0, []))}
             for repo in state.get("repositories", [])]
    return {**state, "repositories": repos} if "repositories" in state else state
