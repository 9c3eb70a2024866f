"""``gitquarry index``: run the indexing (history, graph, embeddings) and print its summary.

The run summary is one place: the per-repository warnings and errors (each once), the
totals line, the graph/embedding lines, and what an interrupted run kept.
"""

from __future__ import annotations

import time

from gitquarry.cli.common import error, note, out, print_json, warn
from gitquarry.cli.progress import RichProgress
from gitquarry.workspace import Workspace


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _count(n: int, one: str, many: str) -> str:
    """``1 commit``, ``2,000 commits``."""
    return f"{n:,} {_plural(n, one, many)}"


def run_index(
    workspace: Workspace, *, embed: bool, quiet: bool, as_json: bool
) -> int:
    """Index ``workspace`` (history, graph, embeddings); print a summary. Returns exit code."""
    from gitquarry.errors import Fts5UnavailableError
    from gitquarry.history.indexer import IndexReport, index_workspace
    from gitquarry.indexing import index_extras

    started = time.monotonic()
    history_on = workspace.config.git_indexing.enabled
    with workspace.write_lock():
        store = workspace.open_store(create=True)
        try:
            history_error: Fts5UnavailableError | None = None
            with RichProgress(quiet=quiet or as_json) as progress:
                try:
                    report = (
                        index_workspace(workspace.root, store, workspace.config, progress=progress)
                        if history_on else IndexReport()
                    )
                except Fts5UnavailableError as exc:  # the graph corpus still works (LIKE)
                    history_error, report = exc, IndexReport()
                extras = index_extras(
                    workspace, store, progress=progress,
                    embed=embed and history_on and history_error is None,
                )
        finally:
            store.close()
    elapsed = time.monotonic() - started
    if history_error is not None:
        error(str(history_error))
    if as_json:
        print_json(
            {
                "workspace": str(workspace.root),
                "index": str(workspace.db_path),
                "repositories": [vars(r) for r in report.repositories],
                "removed_repositories": report.removed_repositories,
                "new_commits": report.new_commits,
                "pruned_commits": report.pruned_commits,
                "total_commits": report.total_commits,
                "up_to_date": report.up_to_date,
                "history_indexed": history_on,
                "seconds": round(elapsed, 3),
                **extras.to_dict(),
            }
        )
    else:
        for rep in report.failed:
            error(f"{rep.path}: {rep.error}")
        for rep in report.repositories:
            if rep.warning:
                warn(f"{rep.path}: {rep.warning}")
            if rep.shallow_commits:
                warn(f"{rep.path}: shallow clone; {rep.shallow_commits} boundary commit(s) "
                     "indexed without parents, files or diff")
            if rep.missing_object_commits:
                warn(f"{rep.path}: {rep.missing_object_commits} commit(s) indexed without "
                     "their diff (Git objects missing from the local object store)")
            if rep.decode_warnings:
                warn(f"{rep.path}: {rep.decode_warnings} commit(s) held invalid UTF-8, "
                     "decoded with U+FFFD")
        n_repos = len(report.repositories)
        repos = _count(n_repos, "repository", "repositories")
        total = _count(report.total_commits, "commit", "commits")
        if not history_on:
            out(
                "Commit history not indexed: [git_indexing] enabled = false.")
        elif report.up_to_date and not report.failed:
            nothing = " Nothing to do." if not extras.did_work else ""
            out(
                f"Commit history is up to date: {total} in {repos}.{nothing}")
        else:
            out(
                f"Indexed {_count(report.new_commits, 'new commit', 'new commits')}, "
                f"pruned {report.pruned_commits:,}, in {repos} ({report.seconds:.1f} s). "
                f"Total: {total}.")
        for line in extras.summary_lines():
            out(line)
        for message in extras.warnings:
            warn(message)
        for message in extras.errors:
            error(message)
        if not quiet:
            note(f"Done in {elapsed:.2f} s.")
        if n_repos == 0 and history_on:
            warn(f"no Git repositories found under {workspace.root}")
    return 1 if report.failed or history_error is not None or extras.errors else 0
