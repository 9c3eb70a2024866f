"""``gitquarry search`` and ``gitquarry graph reindex``: the architecture-graph commands.

Each command parses its options, makes one ``gitquarry.graph`` call and formats the result.
Text output of ``search`` is the seed's: ``  [kind] ref_id: summary`` per result, the snippet
(when there is one) on the next line indented four spaces, or ``No results found.``;
control characters in them (except tab) are printed as escapes (``cli.common.printable``).
Warnings and progress go to stderr; errors are raised and translated by ``cli.app.main``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gitquarry.cli.common import (
    JsonOption,
    ProjectOption,
    open_workspace,
    print_json,
    printable,
    stderr,
    warn,
)
from gitquarry.graph import GraphIndexReport, reindex_workspace, search_graph

graph_app = typer.Typer(
    name="graph",
    help="Architecture graph (beadloom YAML + Markdown docs) index commands.",
    no_args_is_help=True,
)


def _report_warnings(report: GraphIndexReport) -> None:
    for message in report.warnings:
        warn(message)


def _summary_line(report: GraphIndexReport) -> str:
    engine = "FTS5" if report.fts5 else "LIKE fallback (this SQLite has no FTS5)"
    return (
        f"Indexed architecture graph: {report.nodes} nodes, {report.edges} edges, "
        f"{report.docs} docs ({report.unlinked_docs} unlinked), {report.chunks} chunks; "
        f"search: {engine}; {report.duration_ms / 1000:.2f}s"
    )


def search(
    query: Annotated[str, typer.Argument(help="Words to find (all must match).")],
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            help="Only nodes of this kind (domain, feature, service, entity, adr, or any "
            "other kind the graph uses).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="Maximum results (1-100).")] = 10,
    json_output: JsonOption = False,
    project: ProjectOption = None,
) -> None:
    """Search architecture-graph nodes and their docs (FTS5, LIKE fallback).

    Rebuilds the graph index first when graph or docs files changed since the last index.
    """
    workspace = open_workspace(project, for_search=True)
    response = search_graph(workspace, query, kind=kind, limit=limit)
    if response.refreshed is not None:
        _report_warnings(response.refreshed)
        stderr.print(_summary_line(response.refreshed), markup=False, soft_wrap=True)
    if json_output:
        print_json([r.to_dict() for r in response.results])
        return
    if not response.results:
        typer.echo("No results found.")
        return
    for result in response.results:
        # graph and doc text may hold terminal escapes: shown escaped, never raw (not in JSON)
        kind, ref_id, summary = (printable(t) for t in (result.kind, result.ref_id, result.summary))
        typer.echo(f"  [{kind}] {ref_id}: {summary}")
        if result.snippet:
            typer.echo(f"    {printable(result.snippet)}")


@graph_app.command("reindex")
def reindex(json_output: JsonOption = False, project: ProjectOption = None) -> None:
    """Rebuild the architecture-graph index from the graph and docs files now."""
    workspace = open_workspace(project)
    report = reindex_workspace(workspace)
    _report_warnings(report)
    if json_output:
        print_json(report.to_dict())
    else:
        typer.echo(_summary_line(report))


def register(app: typer.Typer) -> None:
    """Add ``search`` and the ``graph`` command group to ``app``."""
    app.command("search")(search)
    app.add_typer(graph_app, name="graph")
