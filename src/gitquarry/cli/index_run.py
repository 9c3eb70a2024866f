"""``gitquarry index``: run the indexing (history, graph, embeddings) and print its summary.

The run summary is printed in one place, each fact once: per repository its error (with
its code in ``--json``), broken refs, skipped and removed repositories, clamped times, the
``.mailmap`` re-mapping, then the totals line and the graph/embedding lines. Ctrl-C prints
what was kept and that the next run resumes (exit 130).
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gitquarry.cli.console import error, note, out, warn
from gitquarry.cli.plain import print_json
from gitquarry.cli.progress import RichProgress
from gitquarry.gitio.runner import display_path
from gitquarry.history.index.report import IndexingInterrupted, IndexReport, RepoReport
from gitquarry.workspace import Workspace

if TYPE_CHECKING:
    from gitquarry.errors import Fts5UnavailableError
    from gitquarry.gitio.discovery import Discovery
    from gitquarry.indexing import ExtrasReport

#: exit status after Ctrl-C (128 + SIGINT), as shells report it
EXIT_INTERRUPTED = 130

_REMOVED_REASONS = {
    "gone": "its git directory no longer exists",
    "not_found": "no longer found under the workspace (excluded, moved or deleted)",
}


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _count(n: int, one: str, many: str) -> str:
    """``1 commit``, ``2,000 commits``."""
    return f"{n:,} {_plural(n, one, many)}"


def _say(message: str) -> None:
    out(message)


def _date(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def run_index(
    workspace: Workspace, *, embed: bool, quiet: bool, as_json: bool
) -> int:
    """Index ``workspace`` (history, graph, embeddings); print a summary. Returns exit code."""
    from gitquarry.errors import Fts5UnavailableError
    from gitquarry.indexing import ExtrasReport, index_extras, index_history, writing

    started = time.monotonic()
    history_on = workspace.config.git_indexing.enabled
    report = IndexReport()
    phase = "history"
    found = _discover_first(workspace) if history_on else None
    if found is not None and _nothing_to_index(workspace, found):
        # no index yet, no repository, no graph file: say so (as a run would) and write
        # nothing, not even the index directory (``.gitquarry/``)
        with RichProgress(quiet=quiet or as_json) as progress:
            progress.note(f"0 repositories under {display_path(workspace.root)}")
        history_error: Fts5UnavailableError | None = None
        extras = ExtrasReport()
        return _summary(workspace, report, extras, history_error, history_on=history_on,
                        quiet=quiet, as_json=as_json, elapsed=time.monotonic() - started)

    def waiting(holder: Any) -> None:
        if not (quiet or as_json):
            who = holder.describe() if holder is not None else "another process"
            note(f"Waiting for the index's writer lease, held by {who}…")

    try:
        lease = workspace.write_lock(
            wait_s=workspace.config.daemon.cli_lease_wait_s, holder="cli index",
            on_wait=waiting,
        )
        with writing(workspace, lease, on_notice=warn) as store:
            history_error = None
            with RichProgress(quiet=quiet or as_json) as progress:
                try:
                    if history_on:
                        report = index_history(workspace, store, progress=progress,
                                               found=found)
                except Fts5UnavailableError as exc:  # the graph corpus still works (LIKE)
                    history_error = exc
                phase = "extras"
                extras = index_extras(
                    workspace, store, progress=progress,
                    embed=embed and history_on and history_error is None,
                )
    except KeyboardInterrupt as exc:
        partial = exc.report if isinstance(exc, IndexingInterrupted) else report
        _interrupted(partial, phase, as_json=as_json)
        return EXIT_INTERRUPTED
    return _summary(workspace, report, extras, history_error, history_on=history_on,
                    quiet=quiet, as_json=as_json, elapsed=time.monotonic() - started)


def _discover_first(workspace: Workspace) -> Discovery | None:
    """The workspace's repositories, looked for before anything is written, when there is no
    index yet (a first run: a later one must record what vanished, whatever it finds); the
    run then uses this discovery, so it is made once. None when an index exists."""
    if os.path.lexists(workspace.db_path):
        return None
    from gitquarry.gitio.discovery import discover

    indexing = workspace.config.indexing
    return discover(workspace.root, exclude=indexing.exclude,
                    exclude_hidden_dirs=indexing.exclude_hidden_dirs)


def _nothing_to_index(workspace: Workspace, found: Discovery) -> bool:
    """No repository (nor one git refused, reported as skipped) and no graph file or docs
    directory under the workspace: a run would write an empty index and nothing else."""
    from gitquarry.graph.indexer import has_sources

    return not (found.repositories or found.skipped
                or has_sources(workspace.root, workspace.config.graph))


def _summary(workspace: Workspace, report: IndexReport, extras: ExtrasReport,
             history_error: Fts5UnavailableError | None, *, history_on: bool, quiet: bool,
             as_json: bool, elapsed: float) -> int:
    """Print the run's summary (text or ``--json``) → the exit code."""
    if history_error is not None:
        error(str(history_error))
    if as_json:
        print_json(
            {
                "workspace": str(workspace.root),
                "index": str(workspace.db_path),
                **report.to_dict(),
                "history_indexed": history_on,
                "seconds": round(elapsed, 3),
                **extras.to_dict(),
            }
        )
    else:
        _print_history(report, workspace, history_on=history_on, extras_did_work=extras.did_work)
        for line in extras.summary_lines():
            _say(line)
        for message in extras.warnings:
            warn(message)
        for message in extras.errors:
            error(message)
        if not quiet:
            note(f"Done in {elapsed:.2f} s.")
    return 1 if report.failed or history_error is not None or extras.errors else 0


def _interrupted(report: IndexReport, phase: str, *, as_json: bool) -> None:
    """What an interrupted run kept, and that re-running resumes."""
    kept = _count(report.new_commits, "new commit", "new commits")
    total = _count(report.total_commits, "commit", "commits")
    if phase == "extras":
        message = (
            "Interrupted while indexing the graph or computing embeddings. The commit history "
            f"is up to date ({kept} added); embeddings computed so far are kept. Run "
            "`gitquarry index` again to continue."
        )
    else:
        where = f" while indexing {report.interrupted_in}" if report.interrupted_in else ""
        message = (
            f"Interrupted{where}. Kept: {kept} from this run ({total} in the index), every "
            "finished batch is saved. Run `gitquarry index` again to resume; it continues "
            "where this run stopped."
        )
    if as_json:
        print_json({"interrupted": True, "phase": phase, "message": message,
                    **report.to_dict()})
    note(message)


def _repo_messages(rep: RepoReport) -> None:
    prefix = f"{rep.path}: "
    if rep.error:
        error(rep.error if rep.error.startswith(prefix) else prefix + rep.error)
    for problem in rep.problems:
        warn(f"{prefix}{problem.message} [{problem.code}]")
    if rep.warning:
        warn(prefix + rep.warning)
    for remark in rep.notes:
        warn(prefix + remark)
    if rep.shallow_commits:
        boundary = _count(rep.shallow_commits, "boundary commit", "boundary commits")
        warn(f"{prefix}shallow clone; {boundary} "
             "indexed without parents, files or diff (`git fetch --unshallow`, then "
             "`gitquarry index`, completes them)")
    if rep.missing_object_commits:
        warn(f"{prefix}{_count(rep.missing_object_commits, 'commit', 'commits')} indexed "
             "without their diff (Git objects missing from the local object store)")
    if rep.decode_warnings:
        warn(f"{prefix}{_count(rep.decode_warnings, 'commit', 'commits')} held invalid UTF-8, "
             "decoded with U+FFFD")
    if rep.files_cut_commits:
        from gitquarry.gitio.log import FILES_MAX

        warn(
            f"{prefix}{_count(rep.files_cut_commits, 'commit changes', 'commits change')} "
            f"more than {FILES_MAX} files; the first {FILES_MAX} paths of each are indexed "
            "(the rest are counted): " + ", ".join(rep.files_cut_examples)
            + (" …" if rep.files_cut_commits > len(rep.files_cut_examples) else "")
        )
    if rep.invalid_time_commits:
        warn(
            f"{prefix}{_count(rep.invalid_time_commits, 'commit has', 'commits have')} an "
            "author or committer time Git cannot represent; stored clamped to "
            f"{_date(0)}..{_date(253_402_300_799)}: " + ", ".join(rep.invalid_time_examples)
            + (" …" if rep.invalid_time_commits > len(rep.invalid_time_examples) else "")
        )
    if rep.replace_refs and not rep.up_to_date:
        warn(f"{prefix}{_count(rep.replace_refs, 'replace ref', 'replace refs')} (git replace) "
             "ignored: commits are indexed as stored (`git --no-replace-objects log` shows "
             "the same)")


def _print_history(
    report: IndexReport, workspace: Workspace, *, history_on: bool, extras_did_work: bool
) -> None:
    for message in report.environment_warnings:
        warn(message)
    for skipped in report.skipped:
        warn(f"{skipped.message} [{skipped.code}]")
    for rep in report.repositories:
        _repo_messages(rep)
    for rep in report.repositories:
        if rep.identities_remapped:
            _say(f"{rep.path}: .mailmap changed; "
                 f"{_count(rep.identities_remapped, 'commit', 'commits')} now show the "
                 "canonical author/committer.")
    for moved in report.moved:
        _say(f"Moved: {moved.old_path} is now {moved.path} (its index entries were kept).")
    for removed in report.removed:
        _say(
            f"Removed {removed.path}: {_REMOVED_REASONS.get(removed.reason, removed.reason)}; "
            f"{_count(removed.commits, 'commit', 'commits')} dropped"
            + (f" ({removed.deleted_commits:,} held by no other repository, deleted)"
               if removed.deleted_commits != removed.commits else "")
            + "."
        )
    n_repos = len(report.repositories)
    repos = _count(n_repos, "repository", "repositories")
    total = _count(report.total_commits, "commit", "commits")
    if not history_on:
        _say("Commit history not indexed: [git_indexing] enabled = false.")
    elif n_repos == 0 and not report.skipped and not report.removed:
        pass  # not "up to date: 0 commits in 0 repositories": the warning below says why
    elif report.up_to_date and not report.failed:
        nothing = " Nothing to do." if not extras_did_work else ""
        _say(f"Commit history is up to date: {total} in {repos}.{nothing}")
    else:
        from_removed = sum(r.commits for r in report.removed)
        gone = _count(len(report.removed), "removed repository", "removed repositories")
        removed_note = f" ({from_removed:,} from {gone})" if from_removed else ""
        _say(
            f"Indexed {_count(report.new_commits, 'new commit', 'new commits')}, "
            f"pruned {report.pruned_commits:,}{removed_note}, in {repos} "
            f"({report.seconds:.1f} s). Total: {total}."
        )
    if n_repos == 0 and history_on and not report.skipped:
        warn(f"no Git repositories found under {workspace.root} (give the directory that "
             "holds your repositories, or one of them)")


def summary_json(report: IndexReport) -> dict[str, Any]:
    """The history part of ``gitquarry index --json`` (also used by other surfaces)."""
    return report.to_dict()


def repository_status_lines(repo: dict[str, Any]) -> list[str]:
    """Extra ``gitquarry status`` lines for one repository of ``history_status``: a missing
    git directory, the last run's error, broken refs (each with its code)."""
    lines: list[str] = []
    if not repo.get("exists", True):
        lines.append("    its git directory no longer exists; the next `gitquarry index` "
                     "forgets it")
    if repo.get("error"):
        lines.append(f"    last run failed [{repo.get('error_code') or 'error'}]: {repo['error']}")
    for problem in repo.get("problems") or []:
        lines.append(f"    {problem['message']} [{problem['code']}]")
    return lines


def skipped_status_lines(status: dict[str, Any]) -> list[str]:
    """``gitquarry status`` lines for repositories git refused or failed to open."""
    skipped = status.get("skipped") or []
    if not skipped:
        return []
    lines = [f"Skipped: {len(skipped)} (not indexed)"]
    lines += [f"  {s['path']} [{s['code']}]: {s['message']}" for s in skipped]
    return lines
