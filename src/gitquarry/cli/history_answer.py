"""``gitquarry history``'s request and JSON answer, without the command-line framework.

The Typer command (``cli.history``) and the fast path (``cli.fast``, which must not import
Typer, Rich or pydantic) both build the request and the answer here, so the two print the
same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitquarry.query.history import HistoryRequest
    from gitquarry.workspace import Workspace


def cli_history_request(
    query: str, *, files_glob: str | None = None, after: str | None = None,
    before: str | None = None, author: str | None = None, committer: str | None = None,
    path: str | None = None, pickaxe: str | None = None, top_n: int | None = None,
    mode: str | None = None, detail: str = "full", max_tokens: int | None = None,
    cursor: str | None = None, merges: bool | None = None, sort: str = "relevance",
    explain: bool = False, no_collapse: bool = False, diverse: bool = False,
    min_score: float | None = None,
) -> HistoryRequest:
    """The ``HistoryRequest`` of ``gitquarry history``'s options (``--merges/--no-merges``
    as only/exclude, ``--no-collapse`` and ``--diverse`` as switches; unset: configured).

    :raises InvalidArgumentError, InvalidGlobError, InvalidTimeError: see
        ``gitquarry.query.history.history_request``.
    """
    from gitquarry.query.history import history_request

    return history_request(
        query, after=after, before=before, top_n=top_n, files_glob=files_glob, mode=mode,
        author=author, committer=committer, path=path, pickaxe=pickaxe,
        merges=None if merges is None else ("only" if merges else "exclude"), sort=sort,
        collapse=False if no_collapse else None, diverse=True if diverse else None,
        min_score=min_score, detail=detail, max_tokens=max_tokens, cursor=cursor,
        explain=explain)


def answer_history(workspace: Workspace, request: HistoryRequest
                   ) -> tuple[dict[str, Any], bool]:
    """The JSON answer of ``request`` (``HistoryAnswers.answer``) with its ``filters`` echo,
    and whether the index could only be opened read-only."""
    from gitquarry.history.answers.answers import HistoryAnswers
    from gitquarry.history.search.searcher import HistorySearcher

    searcher = HistorySearcher(workspace)
    answers = HistoryAnswers(searcher)
    try:
        data = answers.answer(request)
        read_only = searcher.store.read_only  # opened by now (after argument checks)
    finally:
        answers.close()
        searcher.close()
    data["filters"] = request.filters()
    return data, read_only
