"""The MCP tools ``get_commit`` and ``blame_search`` (issue 12), on the shared server.

``get_commit``: one indexed commit (by hash, prefix or revision such as ``HEAD~1``) in full
(message, files with line counts, the full diff from git, paged by ``diff_offset`` within
``max_tokens``; ``history.commit_show``).
``blame_search``: the commits that last touched a file region, with their indexed metadata,
and with a ``query`` the file's history (renames followed) ranked by relevance
(``history.blame``). Both carry ``refs`` and ``index_state`` like ``search_git_history``, and
share its lock, caches and cursors. Errors come back as tool errors with the error's code
(``mcp.errors.as_tool_error``, storage failures included).
"""

# No ``from __future__ import annotations``: the SDK evaluates the tools' annotations.
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from gitquarry.errors import GitquarryError, InvalidArgumentError
from gitquarry.history.answers.answers import MCP_DEFAULT_MAX_TOKENS, AnswerOptions, HistoryAnswers
from gitquarry.history.answers.blame import blame_answer
from gitquarry.history.answers.commit_show import get_commit as show_commit
from gitquarry.mcp.annotations import json_text
from gitquarry.mcp.errors import as_tool_error

Budget = Annotated[int, Field(strict=True, ge=500, le=1_000_000, description=(
    "Token budget for the whole response (estimated conservatively)."))]


def _text(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text",
                                               text=json_text(data))])


def register(server: MCPServer, answers: HistoryAnswers) -> None:
    """Add ``get_commit`` and ``blame_search`` to ``server``."""
    lock = answers.lock  # type: ignore[attr-defined]

    def get_commit(
        commit: Annotated[str, Field(strict=True, description="Full hash or a unique prefix "
                                     "(at least 4 hex characters) of an indexed commit, or a "
                                     "revision as git show takes it: HEAD, main, a tag, "
                                     "HEAD~1.")],
        paths: Annotated[list[str] | None, Field(strict=True, description="Only these files' "
                                                 "diffs.")] = None,
        diff_offset: Annotated[int, Field(strict=True, ge=0, description="First diff line "
                                          "(next_diff_offset of the previous page).")] = 0,
        max_tokens: Budget = MCP_DEFAULT_MAX_TOKENS,
    ) -> CallToolResult:
        try:
            with lock:
                data = show_commit(answers, commit, paths=paths, diff_offset=diff_offset,
                                   max_tokens=max_tokens)
        except Exception as exc:  # typed errors, storage failures, or a bug: see mcp.errors
            raise as_tool_error(exc, answers.searcher.workspace.db_path) from exc
        return _text(data)

    def blame_search(
        path: Annotated[str, Field(strict=True, description="Repository-relative file path, "
                                   "optionally with :LINE or :FIRST-LAST.")],
        query: Annotated[str | None, Field(strict=True, description="Also rank the file's "
                                           "history (renames followed) by this question.")]
        = None,
        start_line: Annotated[int | None, Field(strict=True, ge=1)] = None,
        end_line: Annotated[int | None, Field(strict=True, ge=1)] = None,
        revision: Annotated[str, Field(strict=True, description="Blame at this revision.")]
        = "HEAD",
        repo: Annotated[str | None, Field(strict=True, description="Repository path or "
                                          "directory name when several hold the path.")]
        = None,
        top_n: Annotated[int, Field(strict=True, ge=1, le=100)] = 5,
        detail: Annotated[Literal["full", "compact", "ids"], Field()] = "compact",
        max_tokens: Budget = MCP_DEFAULT_MAX_TOKENS,
        cursor: Annotated[str | None, Field(strict=True, description="history.next_cursor of "
                                            "a previous call.")] = None,
    ) -> CallToolResult:
        try:
            spec = blame_spec(path, start_line, end_line)
            with lock:
                data = blame_answer(
                    answers, spec, revision=revision, repo=repo, query=query, top_n=top_n,
                    options=AnswerOptions(detail=detail, max_tokens=max_tokens, cursor=cursor))
        except Exception as exc:  # typed errors, storage failures, or a bug: see mcp.errors
            raise as_tool_error(exc, answers.searcher.workspace.db_path,
                                lambda err: blame_message(err, start_line)) from exc
        return _text(data)

    server.add_tool(get_commit, name="get_commit", description=(
        "Open one commit in full: message, files with added/deleted line counts, refs that "
        "contain it, and its complete diff from git, paged within max_tokens (pass "
        "next_diff_offset as diff_offset for the next page; paths limits it to some files). "
        "commit is a hash, a unique prefix, or a revision (HEAD, main, a tag, HEAD~1) that "
        "names one indexed commit."))
    server.add_tool(blame_search, name="blame_search", description=(
        "Who changed these lines, and why: git blame of a file region at a revision, each "
        "commit with its message, date and refs; with a query, also that file's whole history "
        "(renames followed) ranked by relevance, e.g. 'why does this retry three times?'."))


def blame_message(exc: GitquarryError, start_line: int | None) -> str:
    """``exc``'s message as ``blame_search`` names its arguments: the library's ``line`` (a
    range past the end of the file) is ``start_line`` when the call gave it, else ``path``
    (whose ``:LINE`` named the line)."""
    if isinstance(exc, InvalidArgumentError) and exc.argument == "line":
        return f"{'start_line' if start_line is not None else 'path'}: {exc.detail}"
    return str(exc)


def blame_spec(path: str, start_line: int | None, end_line: int | None) -> str:
    """``blame_search``'s ``PATH[:FIRST-LAST]`` from its arguments (lines 1-based,
    inclusive; ``end_line`` defaults to ``start_line``).

    :raises InvalidArgumentError: ``end_line`` without ``start_line`` (it was ignored, and
        the whole file blamed), or before it (named as the tool names them)."""
    if start_line is None:
        if end_line is not None:
            raise InvalidArgumentError("end_line", "needs start_line (the first line of the "
                                       "range); give both, or neither for the whole file")
        return path
    if end_line is not None and end_line < start_line:
        raise InvalidArgumentError("end_line", f"must be start_line ({start_line}) or later, "
                                   f"got {end_line}")
    return f"{path}:{start_line}-{end_line or start_line}"
