"""CLI commands of the commit-history corpus: index, history, status, rebuild-index."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from gitquarry.bounded import bound_history_response, cut_text
from gitquarry.cli.common import (
    JsonOption,
    ProjectOption,
    open_workspace,
    print_json,
    printable,
    stderr,
    stdout,
    warn,
)
from gitquarry.cli.index_run import run_index
from gitquarry.errors import IndexAccessError
from gitquarry.history.status import workspace_status
from gitquarry.retrieval.filters import compile_glob, parse_time


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _count(n: int, one: str, many: str) -> str:
    """``1 commit``, ``2,000 commits``."""
    return f"{n:,} {_plural(n, one, many)}"


def _short_date(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _format_result(n: int, r: Any, glob: str | None, explain: bool) -> list[str]:
    files = r.files_changed
    if glob:
        matcher = compile_glob(glob)
        files = [f for f in files if matcher(f)]
    shown = ", ".join(printable(cut_text(f, 200)[0]) for f in files[:3]) + (
        f" (+{len(files) - 3} more)" if len(files) > 3 else ""
    )
    author = printable(cut_text(r.author.split(" <")[0], 100)[0])
    repo = printable(Path(r.repo_path).name or r.repo_path)
    lines = [
        f"{n:>2}. {r.hash[:10]}  {_short_date(r.timestamp)}  {author}  "
        f"{printable(cut_text(r.title, 300)[0])}",
        f"    {repo}  score {r.score:.3f}" + (f"  files: {shown}" if shown else ""),
    ]
    if explain:
        bm25 = f"{r.bm25:.4g}" if r.bm25 is not None else "-"
        sim = f"{r.similarity:.3f}" if r.similarity is not None else "-"
        lines.append(
            f"    bm25 rank {r.lexical_rank or '-'} (bm25 {bm25}), "
            f"vector rank {r.semantic_rank or '-'} (cosine {sim})"
        )
    return lines


def register(app: typer.Typer) -> None:
    """Add index, history, status and rebuild-index to ``app``."""

    @app.command("index")
    def index_cmd(
        path: Annotated[
            Path | None,
            typer.Argument(help="Workspace directory to index (default: current directory).",
                           file_okay=False, show_default=False),
        ] = None,
        no_embed: Annotated[
            bool, typer.Option("--no-embed", help="Skip computing embedding vectors.")
        ] = False,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Index every commit of every repository under PATH (incremental after the first run)."""
        workspace = open_workspace(path, label="PATH")
        code = run_index(workspace, embed=not no_embed, quiet=quiet, as_json=as_json)
        raise typer.Exit(code)

    @app.command("rebuild-index")
    def rebuild_cmd(
        path: Annotated[
            Path | None,
            typer.Argument(help="Workspace directory (default: current directory).",
                           file_okay=False, show_default=False),
        ] = None,
        no_embed: Annotated[
            bool, typer.Option("--no-embed", help="Skip computing embedding vectors.")
        ] = False,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
        as_json: JsonOption = False,
    ) -> None:
        """Delete the index and build it again from Git (also the cure for a corrupt index)."""
        workspace = open_workspace(path, label="PATH")
        with workspace.write_lock():
            for suffix in ("", "-wal", "-shm"):
                target = Path(str(workspace.db_path) + suffix)
                if target.exists() and not target.is_file():
                    raise IndexAccessError(target, "it is not a regular file; remove it first")
                try:
                    target.unlink(missing_ok=True)
                except OSError as exc:
                    raise IndexAccessError(target, exc.strerror or str(exc)) from exc
        if not as_json:
            stderr.print(f"Removed {workspace.db_path}; rebuilding.", highlight=False)
        code = run_index(workspace, embed=not no_embed, quiet=quiet, as_json=as_json)
        raise typer.Exit(code)

    @app.command("history")
    def history_cmd(
        query: Annotated[
            str,
            typer.Argument(help="What to look for: words or a description.", metavar="QUERY"),
        ],
        files_glob: Annotated[
            str | None,
            typer.Option("--files-glob", "-g",
                         help="Only commits changing a matching path, e.g. 'src/**/*.py'."),
        ] = None,
        after: Annotated[
            str | None,
            typer.Option("--after", help="Committed at or after: Unix seconds or ISO-8601 date."),
        ] = None,
        before: Annotated[
            str | None,
            typer.Option("--before", help="Committed at or before: Unix seconds or ISO-8601."),
        ] = None,
        top_n: Annotated[
            int | None, typer.Option("--top-n", "-n", help="Results to return (1-100).")
        ] = None,
        mode: Annotated[
            str | None,
            typer.Option("--mode", "-m", help="hybrid (default), semantic or lexical."),
        ] = None,
        explain: Annotated[
            bool, typer.Option("--explain", help="Show BM25 rank, vector rank and similarity.")
        ] = False,
        as_json: JsonOption = False,
        project: ProjectOption = None,
    ) -> None:
        """Search commit history: hashes, titles, messages, authors, changed files, diffs."""
        from gitquarry.history.service import HistorySearcher

        workspace = open_workspace(project, for_search=True)
        searcher = HistorySearcher(workspace)
        try:
            response = searcher.search(
                query,
                top_n=top_n if top_n is not None else workspace.config.search.top_n,
                files_glob=files_glob,
                after=parse_time(after),
                before=parse_time(before, end_of_day=True),
                mode=mode,
            )
        finally:
            searcher.close()
        if as_json:
            print_json(bound_history_response(response.to_dict(explain=explain)))
            return
        for w in response.warnings:
            warn(w.message)
        if not response.results:
            stdout.print(f"No commits found ({response.total_commits_indexed:,} indexed).")
            return
        for n, r in enumerate(response.results, start=1):
            for line in _format_result(n, r, files_glob, explain):
                stdout.print(line, markup=False, highlight=False)
        stderr.print(
            f"{len(response.results)} of {response.total_commits_indexed:,} commits · "
            f"mode {response.effective_mode}"
            + (f" (requested {response.requested_mode})"
               if response.requested_mode != response.effective_mode else ""),
            highlight=False,
        )

    @app.command("status")
    def status_cmd(as_json: JsonOption = False, project: ProjectOption = None) -> None:
        """Show what is indexed: repositories, commits, embeddings, graph, last update, size."""
        workspace = open_workspace(project, for_search=True)
        store = workspace.open_store()
        try:
            status = workspace_status(workspace, store)
        finally:
            store.close()
        if as_json:
            print_json(status)
            return
        stdout.print(f"Workspace: {status['workspace']}", highlight=False)
        stdout.print(
            f"Index:     {status['index']} ({_human_bytes(status['index_bytes'])})",
            highlight=False,
        )
        stdout.print(f"Commits:   {status['total_commits']:,}")
        emb = status.get("embeddings") or {}
        if emb:
            stdout.print(
                f"Embedded:  {emb.get('embedded', 0):,} of {status['total_commits']:,} "
                f"({emb.get('fraction', 0.0):.0%}) with {emb.get('namespace', '-')}",
                highlight=False,
            )
        else:
            stdout.print(
                f"Embedded:  0 of {status['total_commits']:,} (run `gitquarry index` to "
                "compute vectors)",
                highlight=False,
            )
        stdout.print(f"Repositories: {len(status['repositories'])}")
        for repo in status["repositories"]:
            when = (
                datetime.fromtimestamp(repo["last_indexed_at"], UTC).strftime("%Y-%m-%d %H:%M UTC")
                if repo["last_indexed_at"] else "never"
            )
            flag = " (interrupted run; next index resumes)" if repo["run_in_progress"] else ""
            stdout.print(
                f"  {repo['path']}  {_count(repo['commits'], 'commit', 'commits')}, "
                f"{_count(repo['refs'], 'ref', 'refs')}, updated {when}{flag}",
                highlight=False,
            )
        graph = status.get("graph")
        if graph:
            stdout.print(
                f"Graph:     {graph.get('nodes', 0)} nodes, {graph.get('edges', 0)} edges, "
                f"{graph.get('docs', 0)} docs, {graph.get('chunks', 0)} chunks",
                highlight=False,
            )
            unlinked = graph.get("unlinked_docs") or []
            if unlinked:
                stdout.print(f"  unlinked docs ({len(unlinked)}): {', '.join(unlinked[:10])}",
                             highlight=False)
