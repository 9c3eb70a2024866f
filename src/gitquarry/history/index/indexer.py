"""Index every commit of every repository in a workspace into the store.

New work is found by reachability, never by date: each repository's ref tips are stored after
a successful run, and the next run indexes ``git rev-list <new tips> --not <old tips>`` and
prunes ``git rev-list <old tips> --not <new tips>``. The repository is fully reconciled
instead (every reachable commit listed, anything else pruned; ``RepoReport.reconcile_reason``)
when a previous run was interrupted, an old tip is gone from the object store, a ref's history
is broken (now or last run), or the ``shallow`` file changed (``fetch --unshallow``/``--deepen``
made older history reachable and boundary commits complete). Commits are written in batches,
each batch in one transaction, and the ref tips only at the end, so a killed run resumes
without loss or duplicates: commits already stored are recognised by hash and only get their
membership.

Faults cost what they touch: a ref pointing at a missing object, or whose history misses a
commit, is reported (``RepoReport.problems``, ``repo_problems``) while every commit reachable
from the healthy refs, and what can still be read behind the broken ones, is indexed. A
repository that fails for any other reason is reported with a typed error and the run goes on
with the next one. Identities follow the repository's ``.mailmap`` (``history.identities``);
moved and vanished repositories are reconciled by ``history.locations``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from sqlite3 import Connection

from gitquarry.config import Config
from gitquarry.errors import GitError, GitquarryError, IndexBusyError, RepositoryIndexError
from gitquarry.gitio.discovery import Discovery, Repository, discover
from gitquarry.gitio.log import LogCommit, stream_batches
from gitquarry.gitio.mailmap import NO_MAILMAP, load_mailmap
from gitquarry.gitio.refs import (
    RefProblem,
    diff_keys,
    existing_objects,
    read_refs,
    ref_bytes,
    rev_list,
    rev_list_trees,
    shallow_commits,
)
from gitquarry.gitio.runner import display_path, environment_warnings
from gitquarry.gitio.walk import partition_tips, walk_readable
from gitquarry.history.index.identities import raw_or_none, remap_identities
from gitquarry.history.index.locations import (
    path_columns,
    record_skipped,
    relocate_moved,
    remove_vanished,
)
from gitquarry.history.index.patch_ids import backfill_patch_ids, missing_patch_ids
from gitquarry.history.index.prefetch import prefetch
from gitquarry.history.index.progress import NullProgress, Progress
from gitquarry.history.index.refs_contain import persist_ref_sets
from gitquarry.history.index.report import (
    IndexingInterrupted,
    IndexReport,
    RefProblemReport,
    RepoReport,
    SkippedReport,
)
from gitquarry.retrieval.tokenize import index_diff_text
from gitquarry.store import Store
from gitquarry.store.capabilities import require_commit_fts
from gitquarry.store.compression import compress_text
from gitquarry.store.schema.history import COMMIT_FTS_VALUES_SQL, fts_values

__all__ = [
    "IndexReport",
    "IndexingInterrupted",
    "RepoReport",
    "count_commits",
    "index_repository",
    "index_workspace",
]

log = logging.getLogger(__name__)

_SQL_CHUNK = 500
#: at most this many examples of clamped times are kept per repository report
_TIME_EXAMPLES = 5

_REASON_NOTES = {
    "interrupted": "resuming the interrupted run: commits stored before are kept, the rest "
                   "are added",
    "rewritten": "history was rewritten (an indexed branch tip is gone): re-checking every "
                 "reachable commit",
    "shallow_changed": "the clone's depth changed (fetch --unshallow/--deepen/--depth): "
                       "indexing the history it now reaches",
}


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def index_workspace(
    root: Path,
    store: Store,
    config: Config,
    *,
    progress: Progress | None = None,
    repositories: list[Repository] | None = None,
    found: Discovery | None = None,
) -> IndexReport:
    """Discover the repositories under ``root`` and bring the index up to date with them.

    A repository that fails is reported in its ``RepoReport.error``/``error_code`` and the
    run goes on with the others; repositories git refuses to open are listed in
    ``IndexReport.skipped``. Repositories whose workspace moved keep their rows; repositories
    gone or no longer found under ``root`` are removed with their commits (unless another
    repository also holds them).

    ``found``: the discovery of ``root`` the caller already made (``gitquarry index`` looks
    before it writes anything); discovered here when None.

    :raises IndexingInterrupted: on Ctrl-C, with what was done so far (batches are kept).
    :raises sqlite3.Error: the index cannot be written (surfaces translate it).
    """
    progress = progress or NullProgress()
    started = time.monotonic()
    require_commit_fts(store)
    report = IndexReport()
    skipped = []
    if repositories is None:
        found = found or discover(
            root,
            exclude=config.indexing.exclude,
            exclude_hidden_dirs=config.indexing.exclude_hidden_dirs,
        )
        repositories, skipped = found.repositories, found.skipped
        record_skipped(store, root, skipped, int(time.time()))
    report.skipped = [SkippedReport(display_path(s.path), s.code, s.message) for s in skipped]
    report.moved = relocate_moved(store, root, repositories)
    noun = "repository" if len(repositories) == 1 else "repositories"
    progress.note(f"{len(repositories)} {noun} under {display_path(root)}")
    for repo in repositories:
        rstart = time.monotonic()
        rep = RepoReport(path=display_path(repo.path))
        report.repositories.append(rep)
        try:
            index_repository(store, repo, config, progress=progress, report=rep,
                             workspace_root=root)
        except KeyboardInterrupt as exc:
            rep.seconds = time.monotonic() - rstart
            report.interrupted_in = rep.path
            report.total_commits = _safe_count(store)
            report.seconds = time.monotonic() - started
            raise IndexingInterrupted(report) from exc
        except sqlite3.Error:
            raise
        except GitquarryError as exc:
            _record_failure(store, repo, rep, exc)
        except Exception as exc:  # a bug: one repository's, not the run's
            if os.environ.get("GITQUARRY_DEBUG"):
                log.exception("indexing %s failed", rep.path)
            _record_failure(store, repo, rep, RepositoryIndexError(rep.path, exc))
        rep.seconds = time.monotonic() - rstart
    report.removed = remove_vanished(store, root, repositories, skipped)
    try:  # refs per hit, read by every later query (history.refs_contain)
        persist_ref_sets(store)
    except IndexBusyError:  # another writer: queries build the sets in memory meanwhile
        log.info("refs-containing sets not persisted: the index is busy")
    report.environment_warnings = environment_warnings()
    report.total_commits = count_commits(store.conn)
    report.seconds = time.monotonic() - started
    return report


def count_commits(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])


def _safe_count(store: Store) -> int:
    try:
        return count_commits(store.conn)
    except sqlite3.Error:
        return 0


def _record_failure(store: Store, repo: Repository, rep: RepoReport, exc: GitquarryError) -> None:
    """Report ``exc`` once (in ``rep``) and keep it on the repository row for ``status``.
    ``run_in_progress`` stays as it was: a failed run that wrote batches is reconciled next."""
    log.info("indexing %s failed: %s", rep.path, exc)
    rep.error = str(exc)
    rep.error_code = exc.code
    common, _ = path_columns(repo.common_dir)
    with store.atomic() as conn:
        conn.execute(
            "UPDATE repositories SET last_error = ?, last_error_code = ? WHERE common_dir = ?",
            (str(exc), exc.code, common),
        )


def _upsert_repo(store: Store, repo: Repository, workspace_root: Path | None) -> int:
    common, common_raw = path_columns(repo.common_dir)
    path, path_raw = path_columns(repo.path)
    root = path_columns(workspace_root)[0] if workspace_root is not None else None
    with store.atomic() as conn:
        conn.execute(
            "INSERT INTO repositories (common_dir, common_dir_raw, path, path_raw, is_bare, "
            "object_format, workspace_root) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(common_dir) DO UPDATE SET common_dir_raw = excluded.common_dir_raw, "
            "path = excluded.path, path_raw = excluded.path_raw, is_bare = excluded.is_bare, "
            "object_format = excluded.object_format, "
            "workspace_root = coalesce(excluded.workspace_root, workspace_root)",
            (common, common_raw, path, path_raw, int(repo.is_bare), repo.object_format, root),
        )
        row = conn.execute(
            "SELECT id FROM repositories WHERE common_dir = ?", (common,)
        ).fetchone()
    return int(row[0])


def _as_bytes(value: bytes | str) -> bytes:
    return bytes(value) if isinstance(value, bytes | bytearray | memoryview) else value.encode()


def _shallow_digest(shallow: set[str]) -> str:
    if not shallow:
        return ""
    return hashlib.sha256("\n".join(sorted(shallow)).encode("ascii")).hexdigest()


def _problem_report(problem: RefProblem) -> RefProblemReport:
    return RefProblemReport(problem.display, problem.code, problem.object_id, problem.message)


def index_repository(
    store: Store,
    repo: Repository,
    config: Config,
    *,
    progress: Progress | None = None,
    report: RepoReport | None = None,
    workspace_root: Path | None = None,
) -> RepoReport:
    """Bring one repository's commits in the index up to date with its refs.

    ``report`` (optional) is filled in place, so a caller interrupted mid-run still sees
    what was done. Broken refs are reported in ``report.problems``, not raised.
    :raises GitError: git failed in a way that is not confined to one ref or one commit.
    """
    progress = progress or NullProgress()
    report = report if report is not None else RepoReport(path=display_path(repo.path))
    conn = store.conn
    repo_id = _upsert_repo(store, repo, workspace_root)
    state = conn.execute(
        "SELECT run_in_progress, mailmap_digest, shallow_digest FROM repositories "
        "WHERE id = ?", (repo_id,),
    ).fetchone()
    had_problems = conn.execute(
        "SELECT 1 FROM repo_problems WHERE repo_id = ? LIMIT 1", (repo_id,)
    ).fetchone() is not None
    has_members = conn.execute(
        "SELECT 1 FROM repo_commits WHERE repo_id = ? LIMIT 1", (repo_id,)
    ).fetchone() is not None

    snapshot = read_refs(repo.git_dir, config.git_indexing.refs)
    report.replace_refs = snapshot.replace_refs
    problems: list[RefProblem] = list(snapshot.problems)
    if not snapshot.tips and not problems:
        report.warning = (
            "no ref matches [git_indexing] refs (" + ", ".join(config.git_indexing.refs) + "); "
            "commits reachable only from a detached HEAD or other refs are not indexed"
        )
    new_map = {t.name_bytes: t.commit for t in snapshot.tips}
    raw = {ref_bytes(ref): oid for ref, oid in snapshot.raw.items()}
    old_map = {
        _as_bytes(row["ref"]): row["tip"]
        for row in conn.execute("SELECT ref, tip FROM repo_refs WHERE repo_id = ?", (repo_id,))
    }
    mailmap = load_mailmap(repo)
    if mailmap.warning:
        report.notes.append(mailmap.warning)
    shallow = shallow_commits(repo.git_dir)
    shallow_digest = _shallow_digest(shallow)
    stored_shallow = state["shallow_digest"]
    shallow_changed = has_members and (
        stored_shallow != shallow_digest if stored_shallow is not None else bool(shallow)
    )
    stored_mailmap = state["mailmap_digest"]
    mailmap_changed = has_members and stored_mailmap != mailmap.digest and not (
        stored_mailmap is None and mailmap.digest == NO_MAILMAP
    )
    in_progress = bool(state["run_in_progress"])

    if (new_map == old_map and not in_progress and not had_problems and not problems
            and not shallow_changed):
        if mailmap_changed:
            report.mailmap_changed = True
            report.identities_remapped = _remap(store, repo_id, repo, mailmap.file, report)
        _backfill_patch_ids(store, repo, repo_id, mailmap.file, report, progress)
        report.up_to_date = report.identities_remapped == 0
        applied = not mailmap_changed or report.mailmap_changed
        _finish(store, repo_id, new_map, [], mailmap.digest if applied else None,
                shallow_digest, refs_changed=False, raw=raw)
        return report

    with store.atomic() as c:
        c.execute(
            "UPDATE repositories SET run_in_progress = 1, last_error = NULL, "
            "last_error_code = NULL WHERE id = ?",
            (repo_id,),
        )

    new_tips = sorted(set(new_map.values()))
    old_tips = sorted(set(old_map.values()))
    present_old = sorted(existing_objects(repo.git_dir, old_tips)) if old_tips else []
    reason: str | None = None
    if has_members:
        if in_progress:
            reason = "interrupted"
        elif shallow_changed:
            reason = "shallow_changed"
        elif had_problems or problems:
            reason = "broken_refs"
        elif len(present_old) != len(old_tips) or not old_tips:
            reason = "rewritten"
    gone: list[str] = []
    keys: dict[str, tuple[str, str]] = {}
    if reason is None:
        try:
            to_add, trees = rev_list_trees(repo.git_dir, new_tips, present_old)
            keys = diff_keys(trees, shallow)
            if present_old:
                gone = rev_list(repo.git_dir, present_old, new_tips) if new_tips else (
                    _all_members(conn, repo_id)
                )
        except GitError:  # a commit is missing behind a tip: find which refs are broken
            reason = "broken_refs"
    if reason is not None:
        report.full_reconcile = True
        report.reconcile_reason = reason
        if reason in _REASON_NOTES:
            progress.note(f"{report.path}: {_REASON_NOTES[reason]}")
        _, broken, to_add = partition_tips(repo.git_dir, new_tips)
        if broken:
            walked = walk_readable(repo.git_dir, broken, set(to_add), shallow)
            to_add = to_add + walked.commits
            broken_set = set(broken)
            for ref, tip in sorted(new_map.items()):
                if tip in broken_set:
                    missing = walked.missing.get(tip) or ["?"]
                    problems.append(_incomplete(ref, missing))
            new_map = {ref: tip for ref, tip in new_map.items() if tip not in broken_set}
        keys = {}
        report.pruned_commits = _prune_unreachable(store, repo_id, to_add)
    elif gone:
        report.pruned_commits = _prune_hashes(store, repo_id, gone)
    report.problems = [_problem_report(p) for p in problems]

    _read_and_store(store, repo, repo_id, config, to_add, shallow, mailmap.file, report, progress,
                    keys)
    _backfill_patch_ids(store, repo, repo_id, mailmap.file, report, progress)
    applied = True
    if mailmap_changed:
        report.mailmap_changed = True
        report.identities_remapped = _remap(store, repo_id, repo, mailmap.file, report)
        applied = report.mailmap_changed
    _finish(store, repo_id, new_map, problems, mailmap.digest if applied else None,
            shallow_digest, refs_changed=True, raw=raw)
    return report


def _backfill_patch_ids(
    store: Store, repo: Repository, repo_id: int, mailmap: Path | None, report: RepoReport,
    progress: Progress,
) -> None:
    """Patch-ids for this repository's commits stored by an older gitquarry (NULL)."""
    missing = missing_patch_ids(store, repo_id)
    if missing:
        progress.note(
            f"{report.path}: computing patch-ids (copy detection) for {len(missing)} "
            "commits indexed by an earlier version"
        )
        report.patch_ids_backfilled = backfill_patch_ids(
            store, repo, repo_id, missing, mailmap=mailmap, progress=progress
        )


def _incomplete(ref: bytes, missing: list[str]) -> RefProblem:
    from gitquarry.gitio.refs import display_ref, ref_from_bytes

    name = ref_from_bytes(ref)
    return RefProblem(
        name, "ref_history_incomplete", missing[0],
        f"the history of {display_ref(name)} is incomplete: commit {missing[0]} is missing "
        "from the object store; the commits before it on that ref are indexed, older ones "
        "are not",
    )


def _remap(
    store: Store, repo_id: int, repo: Repository, mailmap: Path | None, report: RepoReport
) -> int:
    try:
        return remap_identities(store, repo_id, repo.git_dir, mailmap)
    except GitError as exc:
        report.notes.append(f"the .mailmap change was not applied to stored commits: {exc}")
        report.mailmap_changed = False
        return 0


def _finish(
    store: Store,
    repo_id: int,
    new_map: dict[bytes, str],
    problems: list[RefProblem],
    mailmap_digest: str | None,
    shallow_digest: str,
    *,
    refs_changed: bool,
    raw: dict[bytes, str] | None = None,
) -> None:
    """Record the run's outcome: ref tips (only refs whose history was read in full), the
    object each of them names before peeling (``raw``: ``repo_refs.raw``, which the
    per-query freshness view compares with ``for-each-ref``), problems, digests; clear
    ``run_in_progress``."""
    now = int(time.time())
    with store.atomic() as c:
        if refs_changed:
            c.execute("DELETE FROM repo_refs WHERE repo_id = ?", (repo_id,))
            c.executemany(
                "INSERT INTO repo_refs (repo_id, ref, tip) VALUES (?, ?, ?)",
                [(repo_id, ref, tip) for ref, tip in sorted(new_map.items())],
            )
        if raw is not None:
            c.executemany(
                "UPDATE repo_refs SET raw = ? WHERE repo_id = ? AND ref = ? "
                "AND raw IS NOT ?",
                [(raw.get(ref), repo_id, ref, raw.get(ref)) for ref in sorted(new_map)],
            )
        c.execute("DELETE FROM repo_problems WHERE repo_id = ?", (repo_id,))
        c.executemany(
            "INSERT INTO repo_problems (repo_id, code, ref, object, message) "
            "VALUES (?, ?, ?, ?, ?)",
            [(repo_id, p.code, ref_bytes(p.ref), p.object_id, p.message) for p in problems],
        )
        c.execute(
            "UPDATE repositories SET run_in_progress = 0, last_indexed_at = ?, "
            "last_error = NULL, last_error_code = NULL, shallow_digest = ?, "
            "mailmap_digest = coalesce(?, mailmap_digest) WHERE id = ?",
            (now, shallow_digest, mailmap_digest, repo_id),
        )


def _read_and_store(
    store: Store,
    repo: Repository,
    repo_id: int,
    config: Config,
    to_add: list[str],
    shallow: set[str],
    mailmap: Path | None,
    report: RepoReport,
    progress: Progress,
    keys: dict[str, tuple[str, str]] | None = None,
) -> None:
    """Read ``to_add`` from git (a prefetch thread one batch ahead) and store each batch in
    one transaction: new commits inserted, incomplete stored copies completed, membership.
    ``keys``: ``stream_batches``'s ``diff_keys`` (commits git need not diff twice)."""
    conn = store.conn
    progress.phase(f"commits {display_path(repo.path.name)}", len(to_add))
    path_ids: dict[str, int] = {}
    batch_size = config.git_indexing.batch_size
    max_lines = config.git_indexing.delta_max_lines

    def read_batches() -> Iterator[tuple[dict[str, int], list[LogCommit]]]:
        # Runs on the prefetch thread: git only, no SQLite (the known ids come with the plan).
        # One git log process for every batch (stream_batches), not one per batch.
        batches = stream_batches(
            repo.git_dir, [to_read for _, to_read in plan], delta_max_lines=max_lines,
            mailmap=mailmap, patch_ids=True, diff_keys=keys,
        )
        try:
            for (batch_known, _), commits in zip(plan, batches, strict=True):
                for commit in commits:
                    if commit.hash in shallow:
                        commit.mark_shallow()
                yield batch_known, commits
        finally:
            batches.close()

    # Per batch: the ids already stored, and the hashes to read from this repository (new
    # ones, plus stored copies that are incomplete and may be complete here).
    plan: list[tuple[dict[str, int], list[str]]] = []
    for batch in _chunks(to_add, batch_size):
        known, incomplete = _known_ids(conn, batch)
        plan.append((known, [h for h in batch if h not in known or h in incomplete]))

    for known, read in prefetch(read_batches()):
        upgrades = [c for c in read if c.hash in known]
        commits = [c for c in read if c.hash not in known]
        with store.atomic() as c:
            ids = list(known.values()) + _insert_commits(c, commits, int(time.time()), path_ids)
            for commit in upgrades:
                if commit.complete:
                    _replace_commit(c, known[commit.hash], commit, path_ids)
                    report.completed_commits += 1
            for commit in commits:
                _count_warnings(commit, report)
            c.executemany(
                "INSERT OR IGNORE INTO repo_commits (repo_id, commit_id) VALUES (?, ?)",
                [(repo_id, i) for i in ids],
            )
        report.new_commits += len(commits)
        report.reused_commits += len(known)
        progress.advance(len(known) + len(commits))


def _count_warnings(commit: LogCommit, report: RepoReport) -> None:
    if commit.delta_missing:
        report.missing_object_commits += 1
    if commit.shallow:
        report.shallow_commits += 1
    if commit.decode_errors:
        report.decode_warnings += 1
        log.warning(
            "commit %s in %s: invalid UTF-8 in %s, decoded with U+FFFD",
            commit.hash, report.path, ", ".join(commit.decode_errors),
        )
    if commit.files_cut:
        report.files_cut_commits += 1
        if len(report.files_cut_examples) < _TIME_EXAMPLES:
            report.files_cut_examples.append(
                f"{commit.hash[:12]} ({len(commit.files)} of {commit.files_total})")
    if commit.invalid_times:
        report.invalid_time_commits += 1
        if len(report.invalid_time_examples) < _TIME_EXAMPLES:
            detail = ", ".join(f"{k} {v or '(unreadable)'}" for k, v in
                               sorted(commit.invalid_times.items()))
            report.invalid_time_examples.append(f"{commit.hash[:12]} ({detail})")


def _known_ids(conn: Connection, hashes: Sequence[str]) -> tuple[dict[str, int], set[str]]:
    """Stored ids of ``hashes``, and which of them are incomplete copies (``complete = 0``)."""
    known: dict[str, int] = {}
    incomplete: set[str] = set()
    for part in _chunks(hashes, _SQL_CHUNK):
        marks = ",".join("?" * len(part))
        for row in conn.execute(
            f"SELECT hash, id, complete FROM git_commits WHERE hash IN ({marks})", list(part)
        ):
            known[row[0]] = int(row[1])
            if not row[2]:
                incomplete.add(row[0])
    return known, incomplete


def _insert_commits(
    conn: Connection, commits: list[LogCommit], now: int, path_ids: dict[str, int]
) -> list[int]:
    """Insert ``commits`` (in the caller's transaction), their paths and their FTS5 rows.

    Returns their new row ids, in order. ``INTEGER PRIMARY KEY`` assigns ``max(id) + 1`` to
    each insert, so one batch gets consecutive ids starting at ``first``. The FTS5 rows are
    computed here from the texts in memory (``fts_values``: what ``COMMIT_FTS_INSERT_SQL``
    computes from the stored row, without decompressing each diff again or calling back into
    Python from SQLite per column; the same index, tested against that statement).
    """
    if not commits:
        return []
    first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM git_commits").fetchone()[0])
    files_json = [json.dumps(commit.files, ensure_ascii=False) for commit in commits]
    texts = [commit.title_and_message() for commit in commits]  # one split per commit
    # A diff copied from another commit of the batch (stream_batches' diff_keys) is the
    # same str object: compressed and tokenised once. Keyed by id() only while ``commits``
    # holds every one of those objects (this call).
    diffs: dict[int, tuple[bytes | str, str]] = {}
    for commit in commits:
        if id(commit.delta) not in diffs:
            diffs[id(commit.delta)] = (compress_text(commit.delta),
                                       index_diff_text(commit.delta))
    conn.executemany(
        "INSERT INTO git_commits (id, hash, timestamp, author, committer, title, message, "
        "files_changed, delta_truncated, indexed_at, author_time, parents, is_merge, complete, "
        "author_raw, committer_raw, patch_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                first + n,
                commit.hash,
                commit.committer_time,
                commit.author,
                commit.committer,
                texts[n][0],
                texts[n][1],
                files_json[n],
                diffs[id(commit.delta)][0],
                now,
                commit.author_time,
                " ".join(commit.parents),
                int(len(commit.parents) > 1),
                int(commit.complete),
                raw_or_none(commit.author, commit.author_raw or commit.author),
                raw_or_none(commit.committer, commit.committer_raw or commit.committer),
                commit.patch_id,
            )
            for n, commit in enumerate(commits)
        ],
    )
    conn.executemany(
        COMMIT_FTS_VALUES_SQL,
        [
            (first + n, *fts_values(texts[n][0], texts[n][1], commit.author,
                                    commit.committer, files_json[n], commit.delta,
                                    diff_text=diffs[id(commit.delta)][1]))
            for n, commit in enumerate(commits)
        ],
    )
    rows = [
        (_path_id(conn, path, path_ids), first + n)
        for n, commit in enumerate(commits)
        for path in commit.files
    ]
    if rows:
        conn.executemany(
            "INSERT OR IGNORE INTO commit_paths (path_id, commit_id) VALUES (?, ?)", rows
        )
    return [first + n for n in range(len(commits))]


def _path_id(conn: Connection, path: str, cache: dict[str, int]) -> int:
    pid = cache.get(path)
    if pid is None:
        row = conn.execute("SELECT id FROM paths WHERE path = ?", (path,)).fetchone()
        if row is None:
            pid = int(conn.execute("INSERT INTO paths (path) VALUES (?)", (path,)).lastrowid or 0)
        else:
            pid = int(row[0])
        cache[path] = pid
    return pid


def _replace_commit(
    conn: Connection, commit_id: int, commit: LogCommit, path_ids: dict[str, int]
) -> None:
    """Overwrite an incomplete stored copy with ``commit`` (the update trigger keeps FTS5
    current); its vectors are dropped so the next embedding run sees the real text."""
    conn.execute(
        "UPDATE git_commits SET files_changed = ?, delta_truncated = ?, parents = ?, "
        "is_merge = ?, complete = 1, patch_id = ? WHERE id = ?",
        (
            json.dumps(commit.files, ensure_ascii=False),
            compress_text(commit.delta),
            " ".join(commit.parents),
            int(len(commit.parents) > 1),
            commit.patch_id,
            commit_id,
        ),
    )
    conn.execute("DELETE FROM commit_paths WHERE commit_id = ?", (commit_id,))
    conn.executemany(
        "INSERT OR IGNORE INTO commit_paths (path_id, commit_id) VALUES (?, ?)",
        [(_path_id(conn, path, path_ids), commit_id) for path in commit.files],
    )
    conn.execute("DELETE FROM commit_vectors WHERE commit_id = ?", (commit_id,))


def _all_members(conn: Connection, repo_id: int) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT c.hash FROM repo_commits rc JOIN git_commits c ON c.id = rc.commit_id "
            "WHERE rc.repo_id = ?",
            (repo_id,),
        )
    ]


def _prune_hashes(store: Store, repo_id: int, hashes: Sequence[str]) -> int:
    """Drop ``hashes`` from the repository; delete commits no repository holds any more."""
    if not hashes:
        return 0
    pruned = 0
    with store.atomic() as conn:
        for part in _chunks(hashes, _SQL_CHUNK):
            marks = ",".join("?" * len(part))
            ids = [
                int(r[0])
                for r in conn.execute(
                    f"SELECT id FROM git_commits WHERE hash IN ({marks})", list(part)
                )
            ]
            pruned += _drop_members(conn, repo_id, ids)
    return pruned


def _drop_members(conn: Connection, repo_id: int, ids: list[int]) -> int:
    if not ids:
        return 0
    dropped = 0
    for start in range(0, len(ids), _SQL_CHUNK):
        part = ids[start : start + _SQL_CHUNK]
        marks = ",".join("?" * len(part))
        dropped += conn.execute(
            f"DELETE FROM repo_commits WHERE repo_id = ? AND commit_id IN ({marks})",
            [repo_id, *part],
        ).rowcount
        conn.execute(
            f"DELETE FROM git_commits WHERE id IN ({marks}) AND NOT EXISTS "
            "(SELECT 1 FROM repo_commits rc WHERE rc.commit_id = git_commits.id)",
            part,
        )
    return dropped


def _prune_unreachable(store: Store, repo_id: int, reachable: Sequence[str]) -> int:
    """Full reconciliation: drop every member of the repository not in ``reachable``."""
    with store.atomic() as conn:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS gq_reachable (hash TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM gq_reachable")
        conn.executemany(
            "INSERT OR IGNORE INTO gq_reachable (hash) VALUES (?)", ((h,) for h in reachable)
        )
        ids = [
            int(r[0])
            for r in conn.execute(
                "SELECT rc.commit_id FROM repo_commits rc JOIN git_commits c "
                "ON c.id = rc.commit_id WHERE rc.repo_id = ? "
                "AND c.hash NOT IN (SELECT hash FROM gq_reachable)",
                (repo_id,),
            )
        ]
        pruned = _drop_members(conn, repo_id, ids)
        conn.execute("DELETE FROM gq_reachable")
    return pruned
