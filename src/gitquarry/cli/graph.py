"""``gitquarry search`` and ``gitquarry graph reindex``: the architecture-graph commands.

Each command parses its options, makes one ``gitquarry.graph`` call and formats the result.
Text output of ``search`` is the seed's: ``  [kind] ref_id: summary`` per result, the snippet
(when there is one) on the next line indented four spaces, or ``No results found.``;
control characters in them (except tab) are printed as escapes (``cli.common.printable``),
and the snippet's ``<b>`` marks are shown bold on a terminal (kept as ``<b>`` in ``--json``
and MCP).
Warnings and progress go to stderr; errors are raised and translated by ``cli.app.main``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from gitquarry.cli.common import (
    Command,
    Group,
    JsonOption,
    ProjectOption,
    count,
    note,
    open_workspace,
    out,
    print_json,
    printable,
    warn,
)
from gitquarry.cli.pipeline_explain import pipeline_lines, summary_lines
from gitquarry.graph.models import GraphIndexReport

if TYPE_CHECKING:
    from gitquarry.query.graph import GraphRequest

graph_app = typer.Typer(
    name="graph",
    cls=Group,
    help="Architecture graph (beadloom YAML + Markdown docs) index commands.",
    no_args_is_help=True,
)


def _report_warnings(report: GraphIndexReport) -> None:
    for message in report.warnings:
        warn(message)


def _summary_line(report: GraphIndexReport) -> str:
    engine = "FTS5" if report.fts5 else "LIKE fallback (this SQLite has no FTS5)"
    return (
        f"Indexed architecture graph: {count(report.nodes, 'node')}, "
        f"{count(report.edges, 'edge')}, {count(report.docs, 'doc')} "
        f"({report.unlinked_docs} unlinked), {count(report.chunks, 'chunk')}; "
        f"search: {engine}; {report.duration_ms / 1000:.2f}s"
    )


def cli_graph_request(query: str, *, kind: str | None = None, limit: int = 10,
                      diverse: bool = False, min_score: float | None = None) -> GraphRequest:
    """The ``GraphRequest`` of ``gitquarry search``'s options (``--diverse`` a switch).

    :raises InvalidArgumentError: see ``gitquarry.query.graph.graph_request``."""
    from gitquarry.query.graph import graph_request

    return graph_request(query, kind=kind, limit=limit, diverse=True if diverse else None,
                         min_score=min_score)


def search(
    query: Annotated[
        str, typer.Argument(help="Words to find (all must match).", metavar="QUERY")
    ],
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            metavar="KIND",
            help="Only nodes of this kind (domain, feature, service, entity, adr, or any "
            "other kind the graph uses).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", help="Maximum results (1-100).")
    ] = 10,
    diverse: Annotated[
        bool, typer.Option("--diverse", help="Diversify the results (MMR).")
    ] = False,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", metavar="SCORE", show_default=False,
                     help="Leave out results scoring below SCORE (0-1; 1 = the best match)."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show what the result pipeline moved or removed.")
    ] = False,
    json_output: JsonOption = False,
    project: ProjectOption = None,
) -> None:
    """Search architecture-graph nodes and their docs (FTS5, LIKE fallback).

    Rebuilds the graph index first when graph or docs files changed since the last index.
    """
    # the graph code only when it runs
    from gitquarry.query.graph import search_graph_request

    workspace = open_workspace(project, for_search=True)
    request = cli_graph_request(query, kind=kind, limit=limit, diverse=diverse,
                                min_score=min_score)
    response = search_graph_request(workspace, request)
    if response.refreshed is not None:
        _report_warnings(response.refreshed)
        note(_summary_line(response.refreshed))
    per_result = (response.pipeline or {}).get("results", {})
    if json_output:
        rows = [r.to_dict() for r in response.results]
        if explain:
            for row in rows:
                row["pipeline"] = per_result.get(row["ref_id"])
        print_json(rows)
        return
    for _code, message in response.warnings:
        warn(message)
    if explain:
        for line in summary_lines(response.pipeline):
            note(line)
    if not response.results:
        out("No results found.")
        return
    for result in response.results:
        out(f"  [{result.kind}] {result.ref_id}: {result.summary}")
        if result.snippet:
            out(Text.assemble("    ", highlighted(result.snippet)))
        if explain:
            for line in pipeline_lines(per_result.get(result.ref_id)):
                out(f"    {line}")


def highlighted(snippet: str) -> Text:
    """A search snippet with its ``<b>…</b>`` marks as bold text (shown bold on a terminal,
    plain when piped); the text between them escaped with ``printable``."""
    text = Text()
    bold = False
    for part in re.split(r"(</?b>)", snippet):
        if part in ("<b>", "</b>"):
            bold = part == "<b>"
        elif part:
            text.append(printable(part), style="bold" if bold else None)
    return text


@graph_app.command("reindex", cls=Command)
def reindex(json_output: JsonOption = False, project: ProjectOption = None) -> None:
    """Rebuild the architecture-graph index from the graph and docs files now."""
    from gitquarry.graph.api import reindex_workspace

    workspace = open_workspace(project, for_search=True)
    report = reindex_workspace(workspace)
    _report_warnings(report)
    if json_output:
        print_json(report.to_dict())
    else:
        out(_summary_line(report))


def register(app: typer.Typer) -> None:
    """Add ``search`` and the ``graph`` command group to ``app``."""
    app.command("search", cls=Command)(search)
    app.add_typer(graph_app, name="graph")
