"""CLI commands of the commit-history corpus: index, history, status, rebuild-index (also
run as seed 000's ``rebuild-commit-index``: ``cli.common.COMMAND_ALIASES``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from gitquarry.bounded import cut_text
from gitquarry.cli.common import (
    STYLE_HASH,
    STYLE_TITLE,
    Command,
    JsonOption,
    ProjectOption,
    count,
    hint,
    note,
    open_workspace,
    out,
    print_json,
    printable,
    styled,
    typed_spelling,
    warn,
)
from gitquarry.cli.history_answer import answer_history, cli_history_request
from gitquarry.cli.index_run import (
    repository_status_lines,
    run_index,
    skipped_status_lines,
)
from gitquarry.cli.pipeline_explain import pipeline_lines, summary_lines
from gitquarry.corpora_status import workspace_status
from gitquarry.percent import floor_percent
from gitquarry.retrieval.filters import READINGS, compile_glob, format_time
from gitquarry.store import safe_paths
from gitquarry.store.connection import read_only_note

if TYPE_CHECKING:
    from gitquarry.history.models import GitSearchResponse
    from gitquarry.query.history import HistoryRequest
    from gitquarry.workspace import Workspace


def _short_date(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _format_result(n: int, r: Any, glob: str | None, explain: bool) -> list[str | Text]:
    files = r.files_changed
    if glob:
        matcher = compile_glob(glob)
        files = [f for f in files if matcher(f)]
    shown = ", ".join(printable(cut_text(f, 200)[0]) for f in files[:3]) + (
        f" (+{len(files) - 3} more)" if len(files) > 3 else ""
    )
    author = cut_text(r.author.split(" <")[0], 100)[0]
    repo = printable(Path(r.repo_path).name or r.repo_path)
    lines: list[str | Text] = [
        styled(f"{n:>2}. ", (r.hash[:10], STYLE_HASH), f"  {_short_date(r.timestamp)}  ",
               f"{author}  ", (cut_text(r.title, 300)[0], STYLE_TITLE)),
        f"    {repo}  score {r.score:.3f}" + (f"  files: {shown}" if shown else ""),
    ]
    if r.copies:
        more = f" (+{r.copies_omitted} more)" if r.copies_omitted else ""
        lines.append(f"    also as: {', '.join(_copy_line(c) for c in r.copies[:5])}"
                     + (f" (+{len(r.copies) - 5 + r.copies_omitted} more)"
                        if len(r.copies) > 5 else more))
    if explain:
        bm25 = f"{r.bm25:.4g}" if r.bm25 is not None else "-"
        if r.lexical_score is not None:
            bm25 += f", lexical score {r.lexical_score:.3f}"
        sim = f"{r.similarity:.3f}" if r.similarity is not None else "-"
        lines.append(
            f"    bm25 rank {r.lexical_rank or '-'} (bm25 {bm25}), "
            f"vector rank {r.semantic_rank or '-'} (cosine {sim})"
        )
        lines.extend(f"    {line}" for line in pipeline_lines(r.pipeline))
    return lines


def _copy_line(copy: dict[str, Any]) -> str:
    refs = copy.get("refs")
    where = printable(", ".join(refs[:3])) if refs else "no ref"
    return f"{copy['hash'][:10]} ({copy['via']}; {where})"


def _print_page(data: dict[str, Any]) -> None:
    """Human output of a cursor page (``--cursor`` without ``--json``)."""
    for w in data.get("warnings", []):
        warn(w)
    for r in data.get("results", []):
        date = (r.get("date") or _short_date(r["timestamp"]) if "timestamp" in r
                else r.get("date", ""))[:10]
        out(styled((str(r.get("hash", ""))[:10], STYLE_HASH), f"  {date}  ",
                   (cut_text(str(r.get("title", "")), 300)[0], STYLE_TITLE)))
    if data.get("next_cursor"):
        note(f"more: --cursor {data['next_cursor']}")


NoEmbedOption = Annotated[
    bool, typer.Option("--no-embed", help="Skip computing embedding vectors.")
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]


def index_cmd(
    path: Annotated[
        Path | None,
        typer.Argument(help="Workspace directory to index (default: current directory).",
                       metavar="PATH", file_okay=False, show_default=False),
    ] = None,
    no_embed: NoEmbedOption = False,
    quiet: QuietOption = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="Then keep PATH indexed: register it with the "
                           "daemon (started if none runs).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Index every commit of every repository under PATH (incremental after the first run)."""
    workspace = open_workspace(path, label="PATH")
    code = run_index(workspace, embed=not no_embed, quiet=quiet, as_json=as_json)
    if no_embed and code == 0 and not (as_json or quiet or watch):
        hint(f"keyword search works now; compute the vectors later with `gitquarry "
             f"index {printable(str(path or '.'))}` (resumable), or let the daemon: "
             "`gitquarry daemon watch DIR`")
    if watch:
        from gitquarry.cli.daemon import watch_workspace

        result = watch_workspace(workspace.root)
        if not as_json:
            note(f"Watching {result['name']} ({result['workspace_ref']}): the "
                 "daemon keeps it indexed.")
            hint("`gitquarry daemon status` shows what it indexed and what is pending")
    raise typer.Exit(code)


def rebuild_cmd(
    path: Annotated[
        Path | None,
        typer.Argument(help="Workspace directory (default: current directory).",
                       metavar="PATH", file_okay=False, show_default=False),
    ] = None,
    no_embed: NoEmbedOption = False,
    quiet: QuietOption = False,
    as_json: JsonOption = False,
) -> None:
    """Delete the index and build it again from Git (also the cure for a corrupt index).
    Also runs as `gitquarry rebuild-commit-index` (its earlier name)."""
    workspace = open_workspace(path, label="PATH")
    with workspace.write_lock():
        for suffix in safe_paths.SQLITE_SUFFIXES:  # the lease checked the directory
            safe_paths.unlink_regular(Path(str(workspace.db_path) + suffix))
    if not as_json:
        note(f"Removed {workspace.db_path}; rebuilding.")
    code = run_index(workspace, embed=not no_embed, quiet=quiet, as_json=as_json)
    raise typer.Exit(code)


GlobOption = Annotated[
    str | None,
    typer.Option("--files-glob", "-g", metavar="GLOB",
                 help="Only commits changing a matching path, gitignore-style: "
                 "'src/**/*.py', '*.md', or a directory such as 'docs' or 'src/lib'."),
]
AfterOption = Annotated[
    str | None,
    typer.Option("--after", "--since", metavar="TIME",
                 help="Committed at or after TIME: an ISO-8601 date or time "
                 "(2024-05-01, 20240501, 2024-05-01T12:00Z), Unix seconds, or a "
                 "relative date as git reads it (2.weeks.ago, yesterday, "
                 "'3 months ago')."),
]
BeforeOption = Annotated[
    str | None,
    typer.Option("--before", "--until", metavar="TIME",
                 help="Committed at or before TIME (a date includes that whole day)."),
]
AuthorOption = Annotated[
    str | None,
    typer.Option("--author", metavar="TEXT",
                 help="Author name or email contains TEXT (case-insensitive; "
                 ".mailmap-aware)."),
]
CommitterOption = Annotated[
    str | None,
    typer.Option("--committer", metavar="TEXT", help="Committer name or email "
                 "contains TEXT."),
]
PathOption = Annotated[
    str | None,
    typer.Option("--path", metavar="PREFIX", help="Only commits changing a path "
                 "under PREFIX (a directory such as src/auth, or one file)."),
]
PickaxeOption = Annotated[
    str | None,
    typer.Option("--pickaxe", "-S", metavar="STRING", help="Only commits whose diff "
                 "adds or removes STRING (as git log -S; case-sensitive)."),
]
TopNOption = Annotated[
    int | None,
    typer.Option("--top-n", "-n", metavar="N",
                 help="Results to return (1-100; default 5, set by \\[search] top_n).",
                 show_default=False),
]
ModeOption = Annotated[
    str | None,
    typer.Option("--mode", "-m", metavar="MODE",
                 help="hybrid (default), semantic or lexical."),
]
DetailOption = Annotated[
    str,
    typer.Option("--detail", metavar="LEVEL", help="With --json: full (every field), "
                 "compact (hash, date, author, title, files, score, 3-line diff "
                 "excerpt) or ids."),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option("--max-tokens", metavar="N", help="With --json: fit the whole "
                 "response in N tokens (500-1000000): diffs cut to their best hunks, "
                 "then the lowest results dropped (next_cursor continues).",
                 show_default=False),
]
CursorOption = Annotated[
    str | None,
    typer.Option("--cursor", metavar="CURSOR", help="Continue a ranking: next_cursor "
                 "of a previous --json answer (same query and filters)."),
]
MergesOption = Annotated[
    bool | None,
    typer.Option("--merges/--no-merges",
                 help="Only merge commits / no merge commits (default: both; a merge "
                 "repeating a commit already shown ranks below the others).",
                 show_default=False),
]
SortOption = Annotated[
    str,
    typer.Option("--sort", metavar="ORDER",
                 help="relevance (default), newest or oldest: the most relevant "
                 "matches ordered by commit time."),
]
ExplainOption = Annotated[
    bool, typer.Option("--explain", help="Show each ranker's rank and raw score "
                       "(BM25 and lexical score, cosine) and what the result pipeline "
                       "moved or removed.")
]
NoCollapseOption = Annotated[
    bool, typer.Option("--no-collapse", help="Show each copy of a change "
                       "(cherry-picks, backports, merges of shown commits) as its own "
                       "result instead of listing copies under one.")
]
DiverseOption = Annotated[
    bool, typer.Option("--diverse", help="Diversify the results (MMR; "
                       "\\[search] mmr_lambda sets relevance against novelty).")
]
MinScoreOption = Annotated[
    float | None,
    typer.Option("--min-score", metavar="SCORE", show_default=False,
                 help="Leave out results scoring below SCORE (0-1)."),
]


def history_cmd(
    query: Annotated[
        str,
        typer.Argument(help="What to look for: words or a description.", metavar="QUERY"),
    ],
    files_glob: GlobOption = None,
    after: AfterOption = None,
    before: BeforeOption = None,
    author: AuthorOption = None,
    committer: CommitterOption = None,
    path: PathOption = None,
    pickaxe: PickaxeOption = None,
    top_n: TopNOption = None,
    mode: ModeOption = None,
    detail: DetailOption = "full",
    max_tokens: MaxTokensOption = None,
    cursor: CursorOption = None,
    merges: MergesOption = None,
    sort: SortOption = "relevance",
    explain: ExplainOption = False,
    no_collapse: NoCollapseOption = False,
    diverse: DiverseOption = False,
    min_score: MinScoreOption = None,
    as_json: JsonOption = False,
    project: ProjectOption = None,
) -> None:
    """Search commit history: hashes, titles, messages, authors, changed files, diffs."""
    workspace = open_workspace(project, for_search=True)
    request = cli_history_request(
        query, files_glob=files_glob, after=after, before=before, author=author,
        committer=committer, path=path, pickaxe=pickaxe, top_n=top_n, mode=mode,
        detail=detail, max_tokens=max_tokens, cursor=cursor, merges=merges, sort=sort,
        explain=explain, no_collapse=no_collapse, diverse=diverse, min_score=min_score)
    if as_json or cursor is not None:
        data, read_only = answer_history(workspace, request)
        if read_only and as_json:  # a text page prints its warnings
            warn(read_only_note(workspace.db_path))
        if as_json:
            print_json(data)
        else:
            _print_page(data)
        return
    if detail != "full" or max_tokens is not None:  # the text output has one shape
        given = [name for name, used in (("--detail", detail != "full"),
                                         ("--max-tokens", max_tokens is not None)) if used]
        both = len(given) == 2
        warn(f"{' and '.join(given)} {'shape' if both else 'shapes'} only the --json answer; "
             f"the text output ignores {'them' if both else 'it'} (add --json)")
    _print_response(request, *search_history(workspace, request))


def search_history(workspace: Workspace, request: HistoryRequest
                   ) -> tuple[GitSearchResponse, list[dict[str, Any]]]:
    """The ranked response of ``request`` (``HistorySearcher.run``) and each result's
    refs (``{hash, refs, refs_total}``); warns when the index is read-only."""
    from gitquarry.history.answers.answers import HistoryAnswers
    from gitquarry.history.search.searcher import HistorySearcher

    searcher = HistorySearcher(workspace)
    answers = HistoryAnswers(searcher)
    try:
        response = searcher.run(request)
        refs: list[dict[str, Any]] = [{"hash": r.hash} for r in response.results]
        answers.annotate_refs(refs)
        read_only = searcher.store.read_only
    finally:
        answers.close()
        searcher.close()
    if read_only:
        warn(read_only_note(workspace.db_path))
    return response, refs


def _print_response(request: HistoryRequest, response: GitSearchResponse,
                    refs: list[dict[str, Any]]) -> None:
    """Human output of a search: warnings and (``--explain``) the readings of the time
    bounds and the pipeline summary on stderr, the results on stdout, a summary note."""
    for w in response.warnings:
        warn(w.message)
    if response.pickaxe is not None:  # as the JSON answer's warnings say it
        from gitquarry.history.answers.answers import pickaxe_warnings

        for _code, message in pickaxe_warnings(response.pickaxe):
            warn(message)
    if request.explain:
        for name, bound in request.bounds().items():
            note(  # the option as typed: --since, --after, --until or --before
                f"{typed_spelling(name)} {bound.given} read as {READINGS[bound.reading]}: "
                f"{format_time(bound.seconds)} ({bound.seconds})")
        for line in summary_lines(response.pipeline):
            note(line)
    if not response.results:
        _pickaxe_note(response)
        out(f"No commits found ({response.total_commits_indexed:,} indexed).")
        return
    for i, (r, ref) in enumerate(zip(response.results, refs, strict=True), start=1):
        for result_line in _format_result(i, r, request.files_glob, request.explain):
            out(result_line)
        if ref["refs"]:
            more = int(ref["refs_total"]) - len(ref["refs"])
            out("    in " + ", ".join(printable(x) for x in ref["refs"])
                + (f" (+{more} more)" if more else ""))
    _pickaxe_note(response)
    note(
        f"{count(len(response.results), 'result', 'results')} of "
        f"{count(response.total_commits_indexed, 'commit', 'commits')} · "
        f"mode {response.effective_mode}"
        + (f" (requested {response.requested_mode})"
           if response.requested_mode != response.effective_mode else ""))


def _pickaxe_note(response: GitSearchResponse) -> None:
    """The ``--pickaxe`` line on stderr (where the answer came from), also when nothing
    matched, so an empty listing says how it was decided."""
    if response.pickaxe is not None:
        note(f"--pickaxe answered from {response.pickaxe.answered_from} "
             f"({response.pickaxe.from_index} stored diffs, "
             f"{response.pickaxe.from_git} commits asked of git log -S)")


def status_cmd(as_json: JsonOption = False, project: ProjectOption = None) -> None:
    """Show what is indexed: repositories, commits, embeddings, graph, last update, size."""
    workspace = open_workspace(project, for_search=True)
    store = workspace.open_store()
    try:
        status = workspace_status(workspace, store)
        status["read_only"] = store.read_only
    finally:
        store.close()
    if store.read_only:
        warn(read_only_note(workspace.db_path))
    if as_json:
        print_json(status)
        return
    out(f"Workspace: {status['workspace']}")
    out(
        f"Index:     {status['index']} ({_human_bytes(status['index_bytes'])})")
    out(f"Commits:   {status['total_commits']:,}")
    emb = status.get("embeddings") or {}
    if emb:
        done, total = emb.get("embedded", 0), status["total_commits"]
        out(f"Embedded:  {done:,} of {total:,} ({floor_percent(done, total)}%) with "
            f"{emb.get('namespace', '-')}")
    else:
        out(
            f"Embedded:  0 of {status['total_commits']:,} (run `gitquarry index` to "
            "compute vectors)")
    out(f"Repositories: {len(status['repositories'])}")
    for repo in status["repositories"]:
        when = (
            datetime.fromtimestamp(repo["last_indexed_at"], UTC).strftime("%Y-%m-%d %H:%M UTC")
            if repo["last_indexed_at"] else "never"
        )
        flag = " (interrupted run; next index resumes)" if repo["run_in_progress"] else ""
        out(
            f"  {repo['path']}  {count(repo['commits'], 'commit', 'commits')}, "
            f"{count(repo['refs'], 'ref', 'refs')}, updated {when}{flag}")
        for line in repository_status_lines(repo):
            out(line)
    for line in skipped_status_lines(status):
        out(line)
    graph = status.get("graph")
    if graph:
        out(
            f"Graph:     {count(graph.get('nodes', 0), 'node', 'nodes')}, "
            f"{count(graph.get('edges', 0), 'edge', 'edges')}, "
            f"{count(graph.get('docs', 0), 'doc', 'docs')}, "
            f"{count(graph.get('chunks', 0), 'chunk', 'chunks')}")
        unlinked = graph.get("unlinked_docs") or []
        if unlinked:
            out(f"  unlinked docs ({len(unlinked)}): {', '.join(unlinked[:10])}")


def register(app: typer.Typer) -> None:
    """Add index, history, status and rebuild-index to ``app``."""
    app.command("index", cls=Command)(index_cmd)
    app.command("rebuild-index", cls=Command)(rebuild_cmd)
    app.command("history", cls=Command)(history_cmd)
    app.command("status", cls=Command)(status_cmd)
