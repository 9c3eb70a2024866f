"""CLI commands for agent-grade commit answers: ``show`` (one commit in full) and
``blame`` (who changed these lines, and why)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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
    NoPagerOption,
    ProjectOption,
    note,
    open_workspace,
    out,
    paged,
    print_json,
    printable,
    styled,
    warn,
)

MaxTokens = Annotated[
    int | None,
    typer.Option("--max-tokens", metavar="N", help="Fit the answer in N tokens (500-1000000).",
                 show_default=False),
]

if TYPE_CHECKING:
    from gitquarry.history.answers.answers import HistoryAnswers


def _day(ts: int) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return "?"


@contextlib.contextmanager
def _answers(project: Path | None) -> Iterator[HistoryAnswers]:
    """The workspace's ``HistoryAnswers`` (searcher included), closed on leaving."""
    from gitquarry.history.answers.answers import HistoryAnswers
    from gitquarry.history.search.searcher import HistorySearcher

    searcher = HistorySearcher(open_workspace(project, for_search=True))
    answers = HistoryAnswers(searcher)
    try:
        yield answers
    finally:
        answers.close()
        searcher.close()


def _diff_line(line: str) -> Text:
    """A diff line coloured as git colours it (added green, removed red, hunk headers cyan)
    when colour is on."""
    style = ("green" if line.startswith("+") and not line.startswith("+++")
             else "red" if line.startswith("-") and not line.startswith("---")
             else "cyan" if line.startswith("@@") else "bold" if line.startswith("diff ")
             else "")
    return styled((line, style)) if style else styled(line)


def register(app: typer.Typer) -> None:
    """Add ``show`` and ``blame`` to ``app``."""

    @app.command("show", cls=Command)
    def show_cmd(
        commit: Annotated[str, typer.Argument(help="Commit hash or unique prefix (4+ hex "
                                              "characters), or a revision: HEAD, a branch "
                                              "or tag, HEAD~3.", metavar="COMMIT")],
        path: Annotated[list[str] | None, typer.Option(
            "--path", metavar="PATH", help="Only this file's diff (repeatable).")] = None,
        offset: Annotated[int, typer.Option("--offset", metavar="LINE", help="Start the diff "
                                            "at this line (next_diff_offset).")] = 0,
        max_tokens: MaxTokens = None,
        as_json: JsonOption = False,
        no_pager: NoPagerOption = False,
        project: ProjectOption = None,
    ) -> None:
        """Show one indexed commit: message, files with line counts, refs, full diff. On a
        terminal the output goes through a pager (see --no-pager)."""
        from gitquarry.history.answers.commit_show import get_commit

        with _answers(project) as answers:
            data = get_commit(answers, commit, paths=path or None, diff_offset=offset,
                              max_tokens=max_tokens)
        if as_json:
            print_json(data)
            return
        with paged(not no_pager):
            _print_commit(data)
        if data["next_diff_offset"] is not None:
            note(f"diff lines {data['diff_offset']}-{data['next_diff_offset'] - 1} of "
                 f"{data['diff_lines_total']:,}; more: --offset {data['next_diff_offset']}")
        if data["diff_source"] != "git":
            warn(f"diff from the index: {data['diff_source']}")
        for message in data.get("warnings", []):
            warn(message)

    def _print_commit(data: dict[str, Any]) -> None:
        out(styled(("commit " + data["hash"], STYLE_HASH)))
        if data["refs"]:
            more = data["refs_total"] - len(data["refs"])
            out("refs:   " + ", ".join(printable(r) for r in data["refs"])
                + (f" (+{more} more)" if more else ""))
        out(f"Author: {printable(data['author'])}  {_day(data['author_time'])}")
        if data["committer"] != data["author"]:
            out(f"Commit: {printable(data['committer'])}  {_day(data['timestamp'])}")
        out(f"Repo:   {printable(data['repo_path'])}")
        out("")
        out(styled("    ", (data["title"], STYLE_TITLE)))
        if data["message"]:  # the body under a blank line, as `git show` prints it
            out("")
        for line in data["message"].split("\n") if data["message"] else []:
            out(("    " + printable(line)) if line else "")
        out("")
        for f in data["files"]:
            counts = ("" if data["diff_source"] != "git"  # counts unknown without git
                      else "binary" if f["added"] is None
                      else f"+{f['added']} -{f['deleted']}")
            out(f" {printable(cut_text(f['path'], 300)[0])}  {counts}".rstrip())
        if data["files_total"] > len(data["files"]):
            out(f" ... {data['files_total'] - len(data['files'])} more files")
        out("")
        for line in data["diff"].split("\n") if data["diff"] else []:
            out(_diff_line(line))

    @app.command("blame", cls=Command)
    def blame_cmd(
        spec: Annotated[str, typer.Argument(help="A file, optionally with :LINE or "
                                            ":FIRST-LAST (src/retry.py:40-58).",
                                            metavar="PATH[:LINE[-LINE]]")],
        query: Annotated[str | None, typer.Argument(
            help="Also rank the file's history (renames followed) by this question.",
            metavar="[QUERY]", show_default=False)] = None,
        rev: Annotated[str, typer.Option("--rev", metavar="REV", help="Blame at this "
                                         "revision.")] = "HEAD",
        repo: Annotated[str | None, typer.Option(
            "--repo", metavar="REPO", help="The repository (path or directory name) when "
            "several hold PATH.")] = None,
        top_n: Annotated[int, typer.Option("--top-n", "-n", metavar="N",
                                           help="History results with a QUERY (1-100).")] = 5,
        detail: Annotated[str, typer.Option("--detail", metavar="LEVEL", help="full, compact "
                                            "or ids (JSON).")] = "full",
        max_tokens: MaxTokens = None,
        as_json: JsonOption = False,
        no_pager: NoPagerOption = False,
        project: ProjectOption = None,
    ) -> None:
        """Who last changed these lines and why (git blame with indexed commit messages);
        with QUERY, the file's history ranked by relevance to it. On a terminal the output
        goes through a pager (see --no-pager)."""
        from gitquarry.history.answers.answers import AnswerOptions
        from gitquarry.history.answers.blame import blame_answer
        from gitquarry.history.search.engine import validate_top_n

        validate_top_n(top_n)
        with _answers(project) as answers:
            data = blame_answer(answers, spec, revision=rev, repo=repo, query=query,
                                top_n=top_n, on_disk=True,
                                options=AnswerOptions(detail=detail, max_tokens=max_tokens))
        if as_json:
            print_json(data)
            return
        for message in data.get("warnings", []):
            warn(message)
        with paged(not no_pager):
            _print_blame(data, query)

    def _print_blame(data: dict[str, Any], query: str | None) -> None:
        out(f"{printable(data['path'])} at {data['commit'][:10]} ({printable(data['revision'])})"
            + (f", lines {data['range']}" if data["range"] else ""))
        history = data.get("history")
        if history is not None:  # the ranked answer to QUERY first, the full blame after it
            out("")
            out(f"History of the file ranked for {printable(query or '')!r} "
                f"({history.get('file_history_commits', 0)} commits):")
            for r in history.get("results", []):
                mark = "  * in blame" if r.get("in_blame") else ""
                date = r.get("date", "")[:10] if "date" in r else _day(r.get("timestamp", 0))
                out(styled("  ", (str(r["hash"])[:10], STYLE_HASH), f"  {date}  ",
                           (cut_text(str(r.get("title", "")), 200)[0], STYLE_TITLE),
                           f"  score {r.get('score', 0):.3f}{mark}"))
            out("")
            out("Blame:")
        for e in data["blame"]:
            refs = (f"  [{', '.join(printable(r) for r in e['refs'][:3])}]"
                    if e.get("refs") else "")
            out(styled((e["hash"][:10], STYLE_HASH), f"  {e.get('date', '')[:10]}  ",
                       f"{cut_text(str(e.get('author', '')).split(' <')[0], 60)[0]}  ",
                       (cut_text(str(e.get("title", "")), 200)[0], STYLE_TITLE), refs))
            out(f"    lines {e['lines']}" + ("" if e["indexed"] else "  (not indexed)"))
