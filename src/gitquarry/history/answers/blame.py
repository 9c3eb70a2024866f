"""``gitquarry blame`` / MCP ``blame_search``: who last changed some lines of a file, and
why — with each commit's indexed metadata — and, given a query, the file's whole history
(renames followed) ranked by relevance to it.

``PATH[:LINE[-LINE]]``: a file, optionally one line or an inclusive range (1-based). On the
command line PATH may be a path on disk inside an indexed repository's working tree; over MCP
it is repository-relative (``repo`` picks the repository when several hold the path). Lines
are blamed at ``revision`` (default ``HEAD``), never the working tree: the answer is pinned
to a commit (``commit`` in the answer).

Blame is ``git blame --porcelain`` read as a stream (``gitio.blame``); at most
``MAX_BLAME_LINES`` lines are read. The answer lists each commit that last touched the lines
(newest first) with the line ranges it owns and, when the commit is indexed, its title,
message, date and refs; ``lines`` shows up to ``MAX_SHOWN_LINES`` blamed lines. With a
``query``, ``history`` is a search response over exactly the commits of ``git log --follow``
for the file (the same ranking, detail levels, budget and cursor as ``search_git_history``);
a result that also appears in the blame has ``in_blame: true``.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitquarry.bounded import cut_text
from gitquarry.errors import (
    GitObjectMissingError,
    GitquarryError,
    InvalidArgumentError,
    PathNotFoundError,
)
from gitquarry.gitio.blame import (
    blame,
    file_history,
    line_count,
    missing_blob,
    path_exists,
    resolve,
)
from gitquarry.history.answers.answers import AnswerOptions, validate_options
from gitquarry.history.search.narrow import Narrowing
from gitquarry.token_budget import json_tokens

MAX_BLAME_LINES = 20_000
MAX_SHOWN_LINES = 200
MAX_COMMITS = 50
_SPEC = re.compile(r"(?P<path>.+?):(?P<lo>\d+)(?:-(?P<hi>\d+))?")


def parse_spec(spec: str) -> tuple[str, tuple[int, int] | None]:
    """``PATH[:LINE[-LINE]]`` as (path, (first, last) or None).

    :raises InvalidArgumentError: empty path, line 0, a range running backwards."""
    if not isinstance(spec, str) or not spec.strip() or "\x00" in spec:
        raise InvalidArgumentError("path", "give a file path, optionally :LINE or :FIRST-LAST")
    found = _SPEC.fullmatch(spec.strip())
    if found is None:
        return spec.strip(), None
    lo = int(found.group("lo"))
    hi = int(found.group("hi") or lo)
    if lo < 1 or hi < lo:
        raise InvalidArgumentError("path", f"line range {lo}-{hi} must run forwards from "
                                   "line 1")
    return found.group("path"), (lo, hi)


def _repositories(conn: Any) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT path, common_dir FROM repositories ORDER BY path")]


def locate(conn: Any, path: str, *, repo: str | None, revision: str,
           on_disk: bool) -> tuple[str, Path, str, str]:
    """(repository path, git dir, repository-relative path, commit) for ``path``.

    :raises InvalidArgumentError: ``path`` (not a file on disk, with ``on_disk``) has a
        ``..`` segment, which no repository path holds (as ``--path``/MCP ``path`` refuse).
    :raises PathNotFoundError: no indexed repository holds the file at ``revision``, or
        several do and ``repo`` does not say which.
    :raises GitObjectMissingError: the revision's tree lists the file but its object is not
        in the repository (pruned, partial clone): not "not found".
    """
    repos = _repositories(conn)
    if repo:
        chosen = [r for r in repos if r[0] == repo or Path(r[0]).name == repo
                  or os.path.realpath(repo) == r[0]]
        if not chosen:
            raise PathNotFoundError(repo, "is not an indexed repository (see `gitquarry "
                                    "status`)")
        repos = chosen
    candidates: list[tuple[str, Path, str]] = []
    if on_disk and (os.path.isabs(path) or os.path.exists(path)):
        real = os.path.realpath(path)
        for root, git_dir in repos:
            if real == root or real.startswith(root.rstrip("/") + "/"):
                candidates.append((root, Path(git_dir), os.path.relpath(real, root)))
        candidates.sort(key=lambda c: -len(c[0]))  # the innermost repository
        candidates = candidates[:1]
    if not candidates:
        if ".." in path.replace("\\", "/").split("/"):  # as --path: no repository path has one
            raise InvalidArgumentError(
                "path", f"{path!r} has a '..' segment, which no repository path holds: give "
                "the path from the repository root, such as src/auth/login.py")
        relative = path.lstrip("/") if not os.path.isabs(path) else path
        while relative.startswith("./"):
            relative = relative[2:]
        candidates = [(root, Path(gd), relative) for root, gd in repos]
    found: list[tuple[str, Path, str, str]] = []
    unreadable: list[tuple[str, str, str]] = []  # (repository, path, missing object id)
    for top, folder, rel in candidates:
        if not folder.exists():
            continue
        commit = resolve(folder, revision)
        if commit is not None and path_exists(folder, commit, rel):
            found.append((top, folder, rel, commit))
        elif commit is not None and (oid := missing_blob(folder, commit, rel)) is not None:
            unreadable.append((top, rel, oid))
    if not found and unreadable:
        top, rel, oid = unreadable[0]
        raise GitObjectMissingError(oid, Path(top), what=f"the file {rel} at {revision}")
    if not found:
        raise PathNotFoundError(path, f"no indexed repository has this file at {revision}")
    if len(found) > 1:
        names = ", ".join(f[0] for f in found[:5])
        raise PathNotFoundError(path, f"several repositories have this file ({names}); "
                                "say which with repo", missing=False)
    return found[0]


def _ranges(lines: list[int]) -> str:
    out: list[str] = []
    runs: list[list[int]] = []
    for n in sorted(lines):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    for lo, hi in runs:
        out.append(f"{lo}-{hi}" if lo != hi else str(lo))
    return ", ".join(out)


def _date(ts: int) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return ""


def blame_answer(answers: Any, spec: str, *, revision: str = "HEAD", repo: str | None = None,
                 query: str | None = None, top_n: int = 5, follow: bool = True,
                 options: AnswerOptions = AnswerOptions(), on_disk: bool = False
                 ) -> dict[str, Any]:
    """The blame answer (see the module docstring): ``path``, ``repo_path``, ``revision``,
    ``commit``, ``range``, ``blame`` (commits: ``hash``, ``lines`` ranges, ``line_count``,
    ``indexed``, ``title``, ``author``, ``date``, ``message`` (full detail), ``refs``),
    ``lines`` (``line``, ``commit``, ``text``), ``lines_total``, ``history`` (with a query),
    ``index_state``, ``truncated`` (with a budget), ``warnings``/``warning_details`` (code
    ``blame_incomplete``) when git answered but reported errors (missing objects).

    :raises InvalidArgumentError: a bad spec, detail or budget; a path with a ``..``
        segment (see :func:`locate`); (argument ``line``) a range starting past the end of
        the file (git clamps its end).
    :raises PathNotFoundError: see :func:`locate`.
    :raises GitError: git could not blame the file (a range past its end, ...).
    """
    validate_options(options)
    path, region = parse_spec(spec)
    conn = answers.searcher.store.conn
    root, git_dir, rel, commit = locate(conn, path, repo=repo, revision=revision,
                                        on_disk=on_disk)
    try:
        result = blame(git_dir, commit, rel, [region] if region else None,
                       max_lines=MAX_BLAME_LINES)
    except GitquarryError as exc:
        lines = line_count(git_dir, commit, rel) if region is not None else None
        if region is not None and lines is not None and region[0] > lines:
            # the argument that named the line: ``line`` (the tool's start_line, or the
            # :LINE of the path as the command line takes it)
            raise InvalidArgumentError(
                "line", f"line {region[0]} is past the end of {rel!r}, which has "
                f"{lines} line{'' if lines == 1 else 's'} at {revision}") from exc
        raise InvalidArgumentError("path", str(exc)[:300]) from exc  # "git blame failed: …"
    owned: dict[str, list[int]] = {}
    for line in result.lines:
        owned.setdefault(line.commit, []).append(line.line)
    hashes = list(owned)
    rows: dict[str, Any] = {}
    if hashes:
        marks = ",".join("?" * len(hashes))
        rows = {r["hash"]: r for r in conn.execute(
            f"SELECT hash, title, message, author, timestamp, author_time FROM git_commits "
            f"WHERE hash IN ({marks})", hashes)}
    entries: list[dict[str, Any]] = []
    for h in hashes:
        info = result.commits[h]
        row = rows.get(h)
        entry: dict[str, Any] = {
            "hash": h,
            "lines": _ranges(owned[h]),
            "line_count": len(owned[h]),
            "indexed": row is not None,
        }
        if row is not None:
            entry.update(title=row["title"], author=row["author"],
                         date=_date(int(row["author_time"])))
            if options.detail == "full":
                entry["message"] = cut_text(row["message"], 4000)[0]
        else:
            entry.update(title=info.summary, author=f"{info.author} <{info.author_mail}>",
                         date=_date(info.author_time))
        entry["_time"] = int(row["author_time"]) if row is not None else info.author_time
        entries.append(entry)
    entries.sort(key=lambda e: (-e["_time"], e["hash"]))
    for e in entries:
        del e["_time"]
    answers.annotate_refs(entries)
    commits_total = len(entries)
    data: dict[str, Any] = {
        "path": rel,
        "repo_path": root,
        "revision": revision,
        "commit": commit,
        "range": f"{region[0]}-{region[1]}" if region else None,
        "blame": entries[:MAX_COMMITS],
        "blame_commits_total": commits_total,
        "lines": [{"line": x.line, "commit": x.commit[:12], "text": cut_text(x.text, 300)[0]}
                  for x in result.lines[:MAX_SHOWN_LINES]] if options.detail != "ids" else [],
        "lines_total": len(result.lines),
    }
    if options.detail == "ids":
        data["blame"] = [{"hash": e["hash"], "lines": e["lines"]} for e in data["blame"]]
    if result.problems:  # git answered, but from a damaged repository: say so
        message = ("git blame reported problems, so lines may be attributed to the wrong "
                   "commit: " + "; ".join(cut_text(p, 200)[0] for p in result.problems))
        data["warnings"] = [message]
        data["warning_details"] = [{"code": "blame_incomplete", "message": message}]
    budget = options.max_tokens
    truncated = {"lines_dropped": 0, "blame_commits_dropped": 0}
    if budget is not None:
        half = budget // 2 if query else budget - 400
        while json_tokens(data) > half and data["lines"]:
            keep = len(data["lines"]) // 2
            truncated["lines_dropped"] += len(data["lines"]) - keep
            data["lines"] = data["lines"][:keep]
        while json_tokens(data) > half and len(data["blame"]) > 1:
            data["blame"] = data["blame"][:-1]
            truncated["blame_commits_dropped"] += 1
    if query:
        history = file_history(git_dir, commit, rel, follow=follow)
        sub_options = options
        if budget is not None:
            left = max(500, budget - json_tokens(data) - 200)
            sub_options = AnswerOptions(detail=options.detail, max_tokens=left,
                                        cursor=options.cursor, explain=options.explain)
        try:
            answer = answers.search(query, top_n=top_n,
                                    narrowing=Narrowing(commits=frozenset(history)),
                                    options=sub_options)
        except InvalidArgumentError as exc:
            if exc.argument != "max_tokens" or options.max_tokens is None:
                raise
            # the blame took the budget: say so rather than answer "no history matches"
            answer = {"query": query, "results": [], "warnings": [
                f"max_tokens left no room for the ranked history ({exc.detail})"],
                "warning_details": [{"code": "token_budget", "message": exc.detail}]}
        blamed = set(owned)
        for r in answer.get("results", []):
            if r.get("hash") in blamed:
                r["in_blame"] = True
        answer.pop("index_state", None)
        answer["file_history_commits"] = len(history)
        data["history"] = answer
    data["index_state"] = answers.index_state()
    if budget is not None:
        data["truncated"] = truncated
        while json_tokens(data) > budget and data["lines"]:
            data["lines"] = data["lines"][:-10]
            truncated["lines_dropped"] += 10
    return data
