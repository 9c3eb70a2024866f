"""``HistoryRequest``: one commit-history search, as every surface asks it.

The CLI (``gitquarry history``), the MCP tool ``search_git_history`` and the web page's
history tab each build one ``HistoryRequest`` with :func:`history_request` from their own
input, and hand it down unchanged: ``HistoryAnswers.answer`` (JSON answers: detail levels,
budgets, cursors), ``HistorySearcher.run`` (the workspace's ``[search]`` settings) and
``history.search.run_history_search`` (the ranking) all read the same object. The one
validation (:meth:`HistoryRequest.validate`) runs in the builder, before any index is opened.

Units: ``after``/``before`` are inclusive bounds on the committer time (``TimeBound``: Unix
seconds UTC plus how the given text was read); ``top_n`` results (1-100; None: ``[search]
top_n``); ``min_score`` in [0, 1]; ``max_tokens`` tokens (None: no budget).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Final

from gitquarry.errors import InvalidArgumentError, InvalidTimeError
from gitquarry.query.narrowing import Narrowing, validate_narrowing
from gitquarry.retrieval.filters import (
    TimeBound,
    check_text,
    check_time_range,
    compile_glob,
    interpret_time,
)

#: the most results one search returns
TOP_N_MAX: Final = 100
MODES: Final = ("lexical", "semantic", "hybrid")
#: the merge filters and orders (``history.ordering``) and the detail levels
#: (``history.budget``): declared here, so building a request imports no search code
MERGE_FILTERS: Final = ("include", "exclude", "only")
SORTS: Final = ("relevance", "newest", "oldest")
DETAILS: Final = ("full", "compact", "ids")


@dataclass(frozen=True, kw_only=True)
class HistoryRequest:
    """One history search: what to find, which commits qualify, how to rank and shape it.

    None means "the configured default" for ``top_n``, ``mode``, ``merges``, ``collapse``,
    ``diverse`` and ``min_score``; ``author``/``committer``/``path``/``pickaxe`` are the
    narrowing filters as given (echoed as given in ``filters``; ``history.narrow`` normalises
    them for the search); ``commits`` limits the search to a set of full hashes (blame).
    ``detail``, ``max_tokens``, ``cursor`` and ``explain`` shape the answer, not the ranking.
    """

    query: str
    top_n: int | None = None
    files_glob: str | None = None
    after: TimeBound | None = None
    before: TimeBound | None = None
    mode: str | None = None
    author: str | None = None
    committer: str | None = None
    path: str | None = None
    pickaxe: str | None = None
    commits: frozenset[str] | None = None
    merges: str | None = None
    sort: str = "relevance"
    collapse: bool | None = None
    diverse: bool | None = None
    min_score: float | None = None
    detail: str = "full"
    max_tokens: int | None = None
    cursor: str | None = None
    explain: bool = False

    # -- derived views -----------------------------------------------------------------

    @property
    def after_s(self) -> int | None:
        """The lower bound in Unix seconds (None: none)."""
        return self.after.seconds if self.after is not None else None

    @property
    def before_s(self) -> int | None:
        """The upper bound in Unix seconds (None: none)."""
        return self.before.seconds if self.before is not None else None

    def bounds(self) -> dict[str, TimeBound]:
        """The time bounds given, by name (``after``, ``before``)."""
        return {name: bound for name, bound in (("after", self.after),
                                                ("before", self.before)) if bound is not None}

    def narrowing(self) -> Narrowing | None:
        """The git-vocabulary filters as ``Narrowing`` (None when none is given), as given:
        ``validate_narrowing`` normalises them."""
        if all(v is None for v in (self.author, self.committer, self.path, self.pickaxe,
                                   self.commits)):
            return None
        return Narrowing(author=self.author, committer=self.committer, path=self.path,
                         pickaxe=self.pickaxe, commits=self.commits)

    def pipeline_switches(self) -> dict[str, Any]:
        """The result pipeline's per-request switches (``collapse``, ``diverse``,
        ``min_score``), None for "as configured"."""
        return {"collapse": self.collapse, "diverse": self.diverse,
                "min_score": self.min_score}

    def filters(self) -> dict[str, Any]:
        """The ``filters`` echo of a JSON answer: ``files_glob``, each time bound given
        (``TimeBound.to_dict``) and each narrowing filter given, as given."""
        echo: dict[str, Any] = {"files_glob": self.files_glob}
        echo.update({name: bound.to_dict() for name, bound in self.bounds().items()})
        for name in ("author", "committer", "path", "pickaxe"):
            value = getattr(self, name)
            if value is not None:
                echo[name] = value
        return echo

    def with_defaults(self, *, top_n: int, mode: str, merges: str) -> HistoryRequest:
        """This request with ``top_n``, ``mode`` and ``merges`` filled where it leaves them
        to the configuration (an empty ``mode``/``merges`` counts as not given)."""
        return replace(self, top_n=top_n if self.top_n is None else self.top_n,
                       mode=self.mode or mode, merges=self.merges or merges)

    # -- the one validation ------------------------------------------------------------

    def validate(self) -> HistoryRequest:
        """Check every argument before any work (no index is opened); returns ``self``.

        Order: detail, max_tokens, query and glob text, narrowing filters, top_n, mode,
        merges, sort, the time range, the glob's syntax, min_score.

        :raises InvalidArgumentError: unknown detail/mode/merges/sort, ``max_tokens`` or
            ``top_n`` out of range, text that is not valid Unicode, a narrowing filter too
            long or holding NUL, ``after`` later than ``before`` or outside the range SQLite
            stores, ``min_score`` outside [0, 1].
        :raises InvalidGlobError: ``files_glob`` is malformed or empty (``""``, ``"/"``:
            given, it must name paths; leave it out to search every file).
        """
        from gitquarry.retrieval.pipeline import check_min_score
        from gitquarry.token_budget import check_max_tokens

        if self.detail not in DETAILS:
            raise InvalidArgumentError(
                "detail", f"must be one of {', '.join(DETAILS)}, got {self.detail!r}")
        check_max_tokens(self.max_tokens)
        check_text("query", self.query)
        check_text("files_glob", self.files_glob)
        narrowing = self.narrowing()
        if narrowing is not None:
            validate_narrowing(narrowing)
        if self.top_n is not None:
            check_top_n(self.top_n)
        if self.mode and self.mode not in MODES:  # empty: as configured
            raise InvalidArgumentError(
                "mode", f"must be lexical, semantic or hybrid, got {self.mode!r}")
        if self.merges and self.merges not in MERGE_FILTERS:
            raise InvalidArgumentError(
                "merges", f"must be include, exclude or only, got {self.merges!r}")
        if self.sort not in SORTS:
            raise InvalidArgumentError(
                "sort", f"must be relevance, newest or oldest, got {self.sort!r}")
        check_time_range(self.after_s, self.before_s)
        if self.files_glob is not None:  # an empty glob is an error, never "every file"
            compile_glob(self.files_glob)
        check_min_score(self.min_score)
        return self

    @classmethod
    def from_seconds(cls, query: str, *, after: int | None = None,
                     before: int | None = None, narrowing: Narrowing | None = None,
                     **fields_: Any) -> HistoryRequest:
        """A request from the library's keyword form (``HistorySearcher.search``,
        ``search_git_history``): bounds as Unix seconds (checked by ``validate``, not read
        as text), filters as a ``Narrowing``. Not validated.

        :raises TypeError: a keyword that is no field of the request.
        """
        narrow: dict[str, Any] = {}
        if narrowing is not None:
            narrow = {"author": narrowing.author, "committer": narrowing.committer,
                      "path": narrowing.path, "pickaxe": narrowing.pickaxe,
                      "commits": narrowing.commits}
        return cls(query=query, after=_seconds_bound(after), before=_seconds_bound(before),
                   **narrow, **fields_)


#: the request's field names (what ``search`` keywords may name)
FIELDS: Final = frozenset(f.name for f in fields(HistoryRequest))


def _seconds_bound(seconds: int | None) -> TimeBound | None:
    if seconds is None:
        return None
    return TimeBound(given=str(seconds), seconds=seconds, reading="unix_seconds")


def check_top_n(top_n: Any) -> None:
    """:raises InvalidArgumentError: ``top_n`` is not an integer from 1 to ``TOP_N_MAX``."""
    if isinstance(top_n, bool) or not isinstance(top_n, int) or not 1 <= top_n <= TOP_N_MAX:
        raise InvalidArgumentError(
            "top_n", f"must be an integer from 1 to {TOP_N_MAX}, got {top_n!r}"
        )


def time_bounds(after: str | int | None = None, before: str | int | None = None, *,
                after_timestamp: int | None = None, before_timestamp: int | None = None,
                ) -> tuple[TimeBound | None, TimeBound | None]:
    """The one parser of a search's time bounds (history and its timeline): ``after`` and
    ``before`` as the CLI takes them (ISO-8601 date or time, Unix seconds, a relative date
    as git reads it; a date given as ``before`` includes its whole day), or Unix seconds
    as ``after_timestamp``/``before_timestamp`` (the seed's MCP arguments; not both for one
    bound).

    :raises InvalidArgumentError: both forms of one bound.
    :raises InvalidTimeError: a value that is no time, or outside signed 64-bit seconds;
        its ``argument`` names the bound (``after``, ``before``, ``after_timestamp`` or
        ``before_timestamp``).
    """
    out: list[TimeBound | None] = []
    for name, ts, text in (("after", after_timestamp, after),
                           ("before", before_timestamp, before)):
        if ts is not None and text is not None:
            raise InvalidArgumentError(name, f"give {name}_timestamp or {name}, not both")
        try:
            if ts is not None:
                out.append(interpret_time(ts))
            elif text is not None:
                out.append(interpret_time(text, end_of_day=name == "before"))
            else:
                out.append(None)
        except InvalidTimeError as exc:  # name the bound that was wrong
            raise InvalidTimeError(
                exc.value, f"{name}_timestamp" if ts is not None else name) from None
    return out[0], out[1]


def history_request(query: str, *, after: str | int | None = None,
                    before: str | int | None = None, after_timestamp: int | None = None,
                    before_timestamp: int | None = None, **fields_: Any) -> HistoryRequest:
    """Build and validate the request of one history search, from any surface: the time
    bounds parsed once (:func:`time_bounds`), every other keyword a field of
    :class:`HistoryRequest`.

    :raises InvalidArgumentError, InvalidGlobError, InvalidTimeError: see
        :func:`time_bounds` and :meth:`HistoryRequest.validate`.
    :raises TypeError: a keyword that is no field of the request (a bug in the caller).
    """
    lo, hi = time_bounds(after, before, after_timestamp=after_timestamp,
                         before_timestamp=before_timestamp)
    return HistoryRequest(query=query, after=lo, before=hi, **fields_).validate()
