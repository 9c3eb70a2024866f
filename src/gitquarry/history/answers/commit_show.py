"""``get_commit`` / ``gitquarry show``: one commit in full — message, files with line counts,
and the whole diff read from git (not the index's 200-line cut), paged by diff line.

The commit is named by its full hash or a unique prefix of at least ``MIN_PREFIX``
characters, among indexed commits, or by a revision (``HEAD``, ``main``, ``v1.2``,
``HEAD~3``) that ``git rev-parse`` resolves to the same indexed commit in every repository
that has it. Its diff is ``git show`` against the first parent (as
indexed), streamed: a page reads only the lines it returns plus a count of the rest (up to
``COUNT_LIMIT`` lines). Paging: ``diff_offset`` (0-based line) and ``next_diff_offset`` in
the answer; a commit's diff never changes, so pages are stable. With ``max_tokens`` the whole
answer fits it (the diff page is what gives way, then the message); without it a page holds
at most ``PAGE_MAX_LINES`` lines. When git cannot produce the diff (the repository is gone,
objects are missing) the index's stored diff is returned and ``diff_source`` says so.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from gitquarry.bounded import cut_text
from gitquarry.errors import CommitNotFoundError, GitquarryError, InvalidArgumentError
from gitquarry.gitio.show import diff_lines, numstat
from gitquarry.store.compression import inflate_text
from gitquarry.token_budget import estimate_tokens, json_tokens

MIN_PREFIX = 4
PAGE_MAX_LINES = 5000
COUNT_LIMIT = 200_000
MAX_FILES = 1000
MAX_MESSAGE_CHARS = 20_000
_HEX = re.compile(r"[0-9a-fA-F]{4,64}")


#: the most repositories a revision name (``HEAD``, ``main``) is looked up in, one
#: ``git rev-parse`` each; a larger workspace needs a hash
MAX_REVISION_REPOSITORIES = 20
_REVISION = re.compile(r"[^\s\x00-\x1f\x7f-]\S{0,254}")


def _by_hash(conn: sqlite3.Connection, text: str) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT * FROM git_commits WHERE hash >= ? AND hash < ? ORDER BY hash LIMIT 6",
        (text, text + "g"),
    ).fetchall()


def _by_revision(conn: sqlite3.Connection, text: str) -> sqlite3.Row | None:
    """The indexed commit the revision ``text`` (``HEAD``, ``main``, ``v1.2``, ``HEAD~3``)
    names in the workspace's repositories, as ``git rev-parse`` resolves it in each (after
    ``--end-of-options``; never an option); None when it names no commit in any of them.

    :raises CommitNotFoundError: it names different commits in different repositories, or
        the workspace has more than ``MAX_REVISION_REPOSITORIES`` repositories (give a hash),
        or the commit it names is not indexed yet (``missing``).
    """
    from gitquarry.gitio.refs import head_commit

    dirs = [Path(r[0]) for r in conn.execute(
        "SELECT common_dir FROM repositories ORDER BY path LIMIT ?",
        (MAX_REVISION_REPOSITORIES + 1,))]
    if len(dirs) > MAX_REVISION_REPOSITORIES:
        raise CommitNotFoundError(
            text[:80], f"a revision name is looked up in at most {MAX_REVISION_REPOSITORIES} "
            "repositories and this workspace has more: give a commit hash")
    found: set[str] = set()
    for git_dir in dirs:
        if not git_dir.is_dir():
            continue
        with contextlib.suppress(GitquarryError):
            commit = head_commit(git_dir, text)
            if commit is not None:
                found.add(commit)
    if not found:
        return None
    if len(found) > 1:
        shown = ", ".join(sorted(h[:12] for h in found)[:5])
        raise CommitNotFoundError(
            text[:80], f"the revision names different commits in different repositories "
            f"({shown}): give a commit hash")
    commit = found.pop()
    rows = _by_hash(conn, commit)
    if not rows or rows[0]["hash"] != commit:
        raise CommitNotFoundError(
            text[:80], f"it is commit {commit[:12]}, which is not indexed yet (run "
            "`gitquarry index`)", missing=True)
    return rows[0]


def find_commit(conn: sqlite3.Connection, commit: str) -> sqlite3.Row:
    """The ``git_commits`` row ``commit`` names: a hash or unique prefix (4+ hexadecimal
    characters) of an indexed commit, else a revision (``HEAD``, a branch or tag,
    ``HEAD~3``) of the workspace's repositories (:func:`_by_revision`).

    :raises CommitNotFoundError: malformed, too short, unknown or ambiguous.
    """
    text = commit.strip() if isinstance(commit, str) else ""
    if not _HEX.fullmatch(text):
        looked_up = _REVISION.fullmatch(text) is not None
        row = _by_revision(conn, text) if looked_up else None
        if row is not None:
            return row
        nowhere = ("no indexed repository has a commit by this name (git rev-parse): "
                   if looked_up else "")
        raise CommitNotFoundError(
            str(commit)[:80], f"{nowhere}give a commit hash or a prefix of at least "
            f"{MIN_PREFIX} hexadecimal characters, or a revision (HEAD, a branch or tag) of "
            "an indexed repository")
    rows = _by_hash(conn, text.lower())
    if not rows:
        # a branch or tag spelled in hexadecimal (``cafe``, ``deadbeef``) is still a revision
        row = _by_revision(conn, text)
        if row is not None:
            return row
        raise CommitNotFoundError(text.lower(), "no indexed commit has this hash (run "
                                  "`gitquarry index` if it is new)", missing=True)
    text = text.lower()
    if len(rows) > 1 and rows[0]["hash"] != text:
        shown = ", ".join(r["hash"][:12] for r in rows[:5])
        raise CommitNotFoundError(text, f"the prefix is ambiguous ({shown}…): give more "
                                  "characters")
    return rows[0]


def _repositories(conn: sqlite3.Connection, commit_id: int) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT r.path, r.common_dir FROM repo_commits rc JOIN repositories r "
        "ON r.id = rc.repo_id WHERE rc.commit_id = ? ORDER BY r.path", (commit_id,))]


def _page(git_dir: Path, commit: str, paths: list[str] | None, offset: int,
          max_lines: int, token_room: int | None) -> tuple[list[str], int, bool]:
    """(lines from ``offset`` that fit, total lines counted, whether counting stopped)."""
    lines: list[str] = []
    used = 0
    total = 0
    full = False
    for line in diff_lines(git_dir, commit, paths):
        if total >= offset and not full:
            cost = estimate_tokens(json.dumps(line, ensure_ascii=False)) + 1
            if len(lines) >= max_lines or (token_room is not None and used + cost > token_room):
                if not lines and token_room is not None:  # one huge line: send a cut of it
                    lines.append(cut_text(line, max(20, token_room))[0])
                    used = token_room
                    offset = total + 1
                full = True
            else:
                lines.append(line)
                used += cost
        total += 1
        if total >= COUNT_LIMIT:
            return lines, total, True
    return lines, total, False


def _only_paths(diff: str, paths: list[str] | None) -> str:
    """The sections of a stored ``git show`` diff whose ``diff --git`` header names one of
    ``paths`` (as ``a/PATH`` or ``b/PATH``); all of it when ``paths`` is empty."""
    if not paths:
        return diff
    wanted = {f"{side}/{p}" for p in paths for side in ("a", "b")}
    kept: list[str] = []
    keep = False
    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            keep = any(part.strip('"') in wanted for part in line[11:].split(" "))
        if keep:
            kept.append(line)
    return "\n".join(kept)


def _paths_not_changed(paths: list[str] | None, changed: list[str]) -> list[str]:
    """The asked ``paths`` (each a file or a directory) that no path in ``changed`` is or
    lies under, in the order asked."""
    out: list[str] = []
    for p in paths or []:
        base = p.strip("/")
        if not any(c == base or c.startswith(base + "/") for c in changed):
            out.append(p)
    return out


def get_commit(answers: Any, commit: str, *, paths: list[str] | None = None,
               diff_offset: int = 0, max_tokens: int | None = None) -> dict[str, Any]:
    """The ``get_commit`` answer (see the module docstring): ``hash``, ``title``,
    ``message``, ``author``, ``committer`` (after ``.mailmap``), ``author_raw``,
    ``committer_raw`` (as committed), ``author_time``, ``timestamp``, ``parents``,
    ``is_merge``, ``repo_path``, ``repositories``, ``files`` (``path``, ``added``,
    ``deleted``; null counts for binary files, and for every file when the diff comes from
    the index), ``files_total``, ``refs``, ``refs_total``, ``diff`` (this page; ``paths``
    apply to the stored diff too), ``diff_source`` (``git``, or ``index (why)`` when git
    could not read the commit: repository gone, objects missing), ``diff_offset``,
    ``diff_lines_returned``, ``diff_lines_total`` (``diff_lines_total_at_least`` when
    counting stopped), ``next_diff_offset`` (null on the last page), ``truncated``
    (``message_cut``, ``diff_page_cut``), ``index_state``; ``warnings`` (a list of
    messages, present only when there is one): a path of ``paths`` the commit changes no
    file at or under.

    :raises CommitNotFoundError: see :func:`find_commit`.
    :raises InvalidArgumentError: negative ``diff_offset``, ``max_tokens`` out of range.
    """
    from gitquarry.token_budget import check_max_tokens

    if isinstance(diff_offset, bool) or not isinstance(diff_offset, int) or diff_offset < 0:
        raise InvalidArgumentError("diff_offset", f"must be a line number >= 0, got "
                                   f"{diff_offset!r}")
    check_max_tokens(max_tokens)
    conn = answers.searcher.store.conn
    row = find_commit(conn, commit)
    repos = _repositories(conn, int(row["id"]))
    data: dict[str, Any] = {
        "hash": row["hash"],
        "title": cut_text(row["title"], 1000)[0],
        "message": row["message"],
        "author": row["author"],
        "committer": row["committer"],
        "author_raw": row["author_raw"] or row["author"],
        "committer_raw": row["committer_raw"] or row["committer"],
        "author_time": int(row["author_time"]),
        "timestamp": int(row["timestamp"]),
        "parents": row["parents"].split(),
        "is_merge": bool(row["is_merge"]),
        "repo_path": repos[0][0] if repos else "",
        "repositories": [p for p, _ in repos][:20],
    }
    truncated = {"message_cut": 0, "diff_page_cut": False}
    message, cut = cut_text(data["message"], MAX_MESSAGE_CHARS)
    data["message"] = message
    truncated["message_cut"] = cut
    refs = [{"hash": row["hash"]}]
    answers.annotate_refs(refs)
    data["refs"], data["refs_total"] = refs[0]["refs"], refs[0]["refs_total"]
    git_dir = next((Path(d) for _, d in repos if Path(d).exists()), None)
    files: list[dict[str, Any]] = []
    source = "git"
    if git_dir is None:
        source = "index (the repository is not on disk)"
    else:
        try:
            files = [{"path": f.path, "added": f.added, "deleted": f.deleted}
                     for f in numstat(git_dir, row["hash"])]
        except GitquarryError as exc:
            source = f"index (git could not read the commit: {str(exc)[:200]})"
            git_dir = None
    if git_dir is None:
        files = [{"path": p, "added": None, "deleted": None}
                 for p in json.loads(row["files_changed"])]
    data["files_total"] = len(files)
    data["files"] = files[:MAX_FILES]
    missing = _paths_not_changed(paths, [f["path"] for f in files])
    if missing:  # an empty diff must not read as "this change has no diff"
        shown = ", ".join(repr(p) for p in missing[:5]) + (
            f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
        data["warnings"] = [f"the commit changes no file {shown} (paths are repository-"
                            "relative, as listed under files)"]
    data["index_state"] = answers.index_state()
    data["truncated"] = truncated
    room: int | None = None
    if max_tokens is not None:
        skeleton = json_tokens({**data, "diff": "", "diff_source": source, "diff_offset": 0,
                                "diff_lines_returned": 0, "diff_lines_total": 0,
                                "next_diff_offset": 0}) + 40
        if skeleton > max_tokens // 2:  # a huge message: cut it to leave the diff half
            keep = max(200, len(message) * (max_tokens // 4) // max(1, skeleton))
            data["message"], n = cut_text(row["message"], keep)
            truncated["message_cut"] = n
            skeleton = json_tokens({**data, "diff": ""}) + 120
        while skeleton > max_tokens and data["files"]:
            data["files"] = data["files"][: len(data["files"]) // 2]
            skeleton = json_tokens({**data, "diff": ""}) + 120
        room = max(0, max_tokens - skeleton)
    lines: list[str] = []
    total = 0
    stopped = False
    if git_dir is not None:
        try:
            lines, total, stopped = _page(git_dir, row["hash"], paths, diff_offset,
                                          PAGE_MAX_LINES, room)
        except GitquarryError as exc:
            source = f"index (git could not show the diff: {str(exc)[:200]})"
            git_dir = None
    if git_dir is None:
        stored = _only_paths(inflate_text(row["delta_truncated"]), paths).split("\n")
        total = len(stored)
        for line in stored[diff_offset:diff_offset + PAGE_MAX_LINES]:
            cost = estimate_tokens(json.dumps(line, ensure_ascii=False)) + 1
            if room is not None:
                if cost > room:
                    break
                room -= cost
            lines.append(line)
    end = diff_offset + len(lines)
    more = end < total
    truncated["diff_page_cut"] = more
    data.update({
        "diff": "\n".join(lines),
        "diff_source": source,
        "diff_offset": diff_offset,
        "diff_lines_returned": len(lines),
        "diff_lines_total": total,
        "next_diff_offset": end if more else None,
    })
    if stopped:
        data["diff_lines_total_at_least"] = True
    return data
