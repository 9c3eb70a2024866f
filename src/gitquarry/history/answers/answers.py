"""Agent-grade commit-history answers: detail levels, token budgets, cursors, freshness and
refs, around ``search_git_history``. One ``HistoryAnswers`` per process (the MCP server's
or one CLI command), shared by ``search``, ``get_commit`` and ``blame``.

A search response (MCP ``search_git_history``, ``gitquarry history --json``) is the seed's
response, bounded by ``gitquarry.bounded`` as before, plus:

- ``refs``/``refs_total`` on every result (``history.refs_contain``);
- ``index_state`` (``history.freshness``);
- ``next_cursor``: null, or a cursor that continues the same ranking (``history.cursor``);
- with ``detail`` other than ``full``, results in that form (``history.budget``);
- with ``max_tokens``: the response fits it, and ``truncated`` says what was cut.

Without ``max_tokens`` and with ``detail="full"`` the seed's fields are exactly as before.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from gitquarry.bounded import bound_history_response
from gitquarry.errors import InvalidArgumentError
from gitquarry.history.answers.budget import apply_detail, fit_response
from gitquarry.history.answers.cursor import CursorStore, PinnedHit, make_cursor, params_digest
from gitquarry.history.index.freshness import FreshnessChecker, compact_state
from gitquarry.history.index.refs_contain import RefContainment
from gitquarry.history.models import CommitResult, GitSearchResponse, RankingFacts
from gitquarry.history.search.narrow import Narrowing, validate_narrowing
from gitquarry.query.history import HistoryRequest
from gitquarry.store.connection import read_only_note
from gitquarry.token_budget import MAX_MAX_TOKENS, json_tokens

#: the MCP tools' default budget (tokens); the CLI has none unless asked
MCP_DEFAULT_MAX_TOKENS = 8000


def pin_depth(top_n: int) -> int:
    """How long a ranking a search pins for its cursor: ``max(4 x top_n, 50)`` results."""
    return max(4 * top_n, 50)
#: tokens added to the least budget an error suggests (index_state's times, the cursor)
BUDGET_MARGIN = 20


@dataclass(frozen=True)
class AnswerOptions:
    """How to shape an answer: ``detail`` (full, compact, ids), ``max_tokens`` (None: no
    budget), ``cursor`` (continue a ranking), ``explain`` (ranks and raw scores)."""

    detail: str = "full"
    max_tokens: int | None = None
    cursor: str | None = None
    explain: bool = False


def validate_options(options: AnswerOptions) -> None:
    """:raises InvalidArgumentError: unknown detail, max_tokens out of range (the checks of
    ``HistoryRequest.validate``)."""
    HistoryRequest(query="", detail=options.detail, max_tokens=options.max_tokens).validate()


def replace_facts(facts: RankingFacts, **changed: Any) -> RankingFacts:
    """``facts``' ranking facts alone, with ``changed`` ones replaced."""
    return RankingFacts(**{**facts.facts(), **changed})


def pickaxe_warnings(pickaxe: Any) -> list[tuple[str, str]]:
    """The (code, message) warnings of a ``--pickaxe`` answer (``PickaxeReport``): up to
    three ``git log -S`` failures (``pickaxe_git_failed``) and, when commits whose stored
    diff was cut could not be checked, ``pickaxe_incomplete``. Every surface (JSON, MCP and
    the terminal listing) says the same."""
    found = [("pickaxe_git_failed", message) for message in pickaxe.errors[:3]]
    if pickaxe.unchecked:
        found.append((
            "pickaxe_incomplete",
            f"{pickaxe.unchecked} commit(s) with a cut diff could not be "
            "checked with git log -S; they are left out"))
    return found


class HistoryAnswers:
    """Shapes answers for one workspace's index (see the module docstring)."""

    def __init__(self, searcher: Any) -> None:
        self.searcher = searcher
        config = searcher.workspace.config
        self.freshness = FreshnessChecker(list(config.git_indexing.refs))
        self._cursors: CursorStore | None = None

    @property
    def refs(self) -> RefContainment:
        """The searcher's ref bit sets, shared with the copies' refs (a new set when the
        searcher reopened a replaced index file)."""
        ref_sets: RefContainment = self.searcher.refs
        return ref_sets

    @property
    def cursors(self) -> CursorStore:
        if self._cursors is None:
            self._cursors = CursorStore(self.searcher.workspace.index_dir)
        return self._cursors

    def close(self) -> None:
        if self._cursors is not None:
            self._cursors.close()
            self._cursors = None

    # -- shared parts ------------------------------------------------------------------

    def namespace_id(self) -> int | None:
        """The configured embedding namespace's id, for ``embedded_fraction``: the loaded
        semantic ranker's when a query loaded it; otherwise looked up in the index by the
        configured provider (and model, when one is set) without building the embedder, so a
        lexical answer never imports a model runtime."""
        ranker = self.searcher.loaded_semantic()
        if ranker is not None:
            return getattr(ranker, "namespace_id", None)
        cfg = self.searcher.workspace.config.embedding
        if cfg.provider == "none":
            return None
        from gitquarry.history.index.vector_state import configured_namespace_id

        try:
            return configured_namespace_id(self.searcher.store.conn, cfg.provider, cfg.model)
        except sqlite3.DatabaseError:
            return None

    def index_state(self) -> dict[str, Any]:
        """``index_state`` of the index now (see ``history.freshness``)."""
        conn = self.searcher.store.conn
        try:
            return self.freshness.state(conn, self.namespace_id())
        except sqlite3.DatabaseError:
            return {"error": "the index could not be read"}

    def annotate_refs(self, results: list[dict[str, Any]], *, compact: bool = False) -> None:
        """``refs``/``refs_total`` on each result (``history.refs_contain``)."""
        conn = self.searcher.store.conn  # first: a reopened index file brings new ref sets
        self.refs.annotate(conn, results, compact=compact)

    def finish(self, data: dict[str, Any], *, options: AnswerOptions, query: str,
               results_key: str = "results") -> tuple[dict[str, Any], int]:
        """Add ``index_state``, shape ``data[results_key]`` to ``options.detail`` and fit
        ``options.max_tokens``. Returns (data, how many results were kept)."""
        data = dict(data)
        state = self.index_state()
        data["index_state"] = state if options.detail == "full" else compact_state(state)
        shaped = apply_detail(list(data.get(results_key, [])), options.detail, query)
        data[results_key] = shaped
        if options.max_tokens is None:
            return data, len(shaped)
        if results_key != "results":
            data["results"] = data.pop(results_key)
        data, cut = fit_response(data, options.max_tokens, options.detail, query)
        if results_key != "results":
            data[results_key] = data.pop("results")
        if shaped and not data[results_key]:
            need = _least_budget({**data, results_key: shaped[:1]}, options.max_tokens,
                                 options.detail, query)
            raise budget_too_small(options.max_tokens, options.detail, need)
        data["truncated"] = cut.to_dict()
        return data, len(data[results_key])

    # -- search ------------------------------------------------------------------------

    def search_params(self, request: HistoryRequest) -> str:
        """The digest a cursor is bound to: the query, the filters (narrowing normalised),
        the mode (configured when not given) and the pipeline switches given."""
        narrowing = request.narrowing()
        narrowing = validate_narrowing(narrowing) if narrowing is not None else Narrowing()
        switches = {**request.pipeline_switches(), "merges": request.merges,
                    "sort": None if request.sort == "relevance" else request.sort}
        return params_digest({
            "query": request.query, "files_glob": request.files_glob,
            "after": request.after_s, "before": request.before_s,
            "mode": request.mode or self.searcher.workspace.config.search.mode,
            **narrowing.params(),
            **{k: v for k, v in switches.items() if v is not None},
        })

    def search(self, query: str, *, top_n: int, options: AnswerOptions = AnswerOptions(),
               extra_warnings: list[tuple[str, str]] | None = None,
               **fields: Any) -> dict[str, Any]:
        """:meth:`answer` in keyword form: ``fields`` name fields of
        ``gitquarry.query.history.HistoryRequest`` (``after``/``before`` as Unix seconds,
        ``narrowing`` as a ``history.narrow.Narrowing``), ``options`` shape the answer.

        :raises InvalidArgumentError, InvalidGlobError: bad arguments (see
            ``HistoryRequest.validate``).
        :raises CursorExpiredError: the cursor's ranking is no longer kept.
        """
        request = HistoryRequest.from_seconds(
            query, top_n=top_n, detail=options.detail, max_tokens=options.max_tokens,
            cursor=options.cursor, explain=options.explain, **fields)
        return self.answer(request.validate(), extra_warnings=extra_warnings)

    def answer(self, request: HistoryRequest, *,
               extra_warnings: list[tuple[str, str]] | None = None) -> dict[str, Any]:
        """The search response of a validated ``request`` (see the module docstring), or
        with ``request.cursor`` the next page of its ranking. ``extra_warnings``: (code,
        message) pairs the surface adds (refused settings).

        :raises InvalidArgumentError: a cursor that is malformed or made for another search.
        :raises CursorExpiredError: the cursor's ranking is no longer kept.
        """
        options = AnswerOptions(detail=request.detail, max_tokens=request.max_tokens,
                                cursor=request.cursor, explain=request.explain)
        digest = self.search_params(request)
        top_n = (request.top_n if request.top_n is not None
                 else self.searcher.workspace.config.search.top_n)
        if options.cursor is not None:
            return self._page(request.query, top_n, digest, options, extra_warnings)
        response = self.searcher.run(request, ranking_depth=pin_depth(top_n))
        data = response.to_dict(explain=options.explain)
        _add_warnings(data, [*(extra_warnings or []), *self._store_notes()])
        data = bound_history_response(data)
        if response.pickaxe is not None:
            data["pickaxe"] = response.pickaxe.to_dict()
            _add_warnings(data, pickaxe_warnings(response.pickaxe))
        self.annotate_refs(data["results"], compact=options.detail == "compact")
        data, kept = self.finish(data, options=options, query=request.query)
        ranking = _pinned(response, self.searcher.store.conn)
        pin_id: list[str] = []

        def cursor(n: int) -> str | None:
            if n >= len(ranking):
                return None
            if not pin_id:
                meta = {k: data.get(k) for k in ("query", "requested_mode", "effective_mode",
                                                 "embedded_fraction", "pickaxe")}
                meta["pipeline"] = response.pipeline
                pin_id.append(self.cursors.pin(ranking, digest, meta))
                self._cursor_note(data)
            return make_cursor(pin_id[0], n)

        return _with_cursor(data, kept, cursor, options)

    def _store_notes(self) -> list[tuple[str, str]]:
        """``index_read_only`` when the index could only be opened read-only (surfaces' note;
        read after the search, so bad arguments are refused before the index is opened)."""
        if self.searcher.store.read_only:
            return [("index_read_only", read_only_note(self.searcher.workspace.db_path))]
        return []

    def _cursor_note(self, data: dict[str, Any]) -> None:
        if not self.cursors.persistent:
            _add_warnings(data, [(
                "cursor_in_memory",
                f"{self.cursors.problem or 'the cursor store cannot be written'}: next_cursor "
                "works only within this process (the MCP server), not from another command")])

    def _page(self, query: str, top_n: int, digest: str, options: AnswerOptions,
              extra_warnings: list[tuple[str, str]] | None) -> dict[str, Any]:
        assert options.cursor is not None
        pin, offset = self.cursors.get(options.cursor, digest)
        entries = pin.hits[offset:offset + top_n]
        store = self.searcher.store
        conn = store.conn
        from gitquarry.history.search.candidate_stream import refresh_copy_refs
        from gitquarry.history.search.engine import _index_warnings, _result, hydrate

        total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
        ids: dict[str, int] = {}
        hashes = [e.hash for e in entries]
        if hashes:
            ids = {h: int(i) for h, i in conn.execute(
                f"SELECT hash, id FROM git_commits WHERE hash IN ({','.join('?' * len(hashes))})",
                hashes)}
        rows = hydrate(conn, list(ids.values()))
        results: list[CommitResult] = []
        gone: list[str] = []
        for e in entries:
            cid = ids.get(e.hash)
            if cid is None or cid not in rows:
                gone.append(e.hash)
                continue
            results.append(_result(rows[cid], facts=replace_facts(
                e, copies=refresh_copy_refs(conn, self.refs, e.copies))))
        warnings = _index_warnings(conn, total)
        response = GitSearchResponse(
            results=results, query=pin.meta.get("query") or query,
            total_commits_indexed=total,
            requested_mode=pin.meta.get("requested_mode") or "lexical",
            effective_mode=pin.meta.get("effective_mode") or "lexical",
            embedded_fraction=pin.meta.get("embedded_fraction") or 0.0, warnings=warnings,
            pipeline=pin.meta.get("pipeline"))
        data = response.to_dict(explain=options.explain)
        _add_warnings(data, [*(extra_warnings or []), *self._store_notes()])
        if gone:
            _add_warnings(data, [(
                "cursor_commits_gone",
                f"{len(gone)} commit(s) of this page left the index since the search "
                f"(history rewritten and pruned): {', '.join(h[:12] for h in gone[:5])}")])
        data = bound_history_response(data)
        if pin.meta.get("pickaxe") is not None:
            data["pickaxe"] = pin.meta["pickaxe"]
        self.annotate_refs(data["results"], compact=options.detail == "compact")
        data, kept = self.finish(data, options=options, query=query)
        page_hashes = [r.hash for r in results]
        data["cursor_offset"] = offset
        pin_id = options.cursor.strip().split(".")[0]

        def cursor(n: int) -> str | None:
            # the page's gone commits count as returned: the cursor moves past them
            end = offset + _consumed(entries, page_hashes[:n], gone)
            return make_cursor(pin_id, end) if end < len(pin.hits) else None

        return _with_cursor(data, kept, cursor, options)


def budget_too_small(max_tokens: int, detail: str, need: int) -> InvalidArgumentError:
    """The error for a ``max_tokens`` that cannot hold even the first result (about ``need``
    tokens would): an empty page would look like "no matches", and its ``next_cursor``
    would never move on."""
    return InvalidArgumentError(
        "max_tokens", f"{max_tokens:,} tokens cannot hold one result with detail {detail!r} "
        f"(this answer needs about {need:,}: its index_state, warnings and filters count too); "
        "raise max_tokens or ask for detail 'ids'")


def _least_budget(data: dict[str, Any], above: int, detail: str, query: str) -> int:
    """The least ``max_tokens`` above ``above`` at which ``fit_response`` keeps the one
    result of ``data`` (bisection; at most ``MAX_MAX_TOKENS``), plus ``BUDGET_MARGIN`` for
    what differs between calls (times, the cursor)."""
    lo, hi = above, MAX_MAX_TOKENS
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fit_response(data, mid, detail, query)[0]["results"]:
            hi = mid
        else:
            lo = mid
    return min(MAX_MAX_TOKENS, hi + BUDGET_MARGIN)


def _consumed(entries: list[PinnedHit], kept: list[str], gone: list[str]) -> int:
    """How many of ``entries`` (in order) the page used up: up to the last kept one, plus
    gone commits before the first dropped one."""
    kept_set, gone_set = set(kept), set(gone)
    n = 0
    for e in entries:
        if e.hash in kept_set or e.hash in gone_set:
            n += 1
        else:
            break
    return n


def _pinned(response: GitSearchResponse, conn: sqlite3.Connection) -> list[PinnedHit]:
    """The response's ranking to pin: its results, then ``more`` (by hash)."""
    hits = [PinnedHit(hash=r.hash, **r.facts()) for r in response.results]
    if response.more:
        ids = [h.commit_id for h in response.more]
        hashes = dict(conn.execute(
            f"SELECT id, hash FROM git_commits WHERE id IN ({','.join('?' * len(ids))})", ids))
        hits += [PinnedHit(hash=hashes[h.commit_id], **h.facts())
                 for h in response.more if h.commit_id in hashes]
    return hits


def _add_warnings(data: dict[str, Any], items: list[tuple[str, str]] | None) -> None:
    for code, message in items or []:
        data.setdefault("warnings", []).append(message)
        data.setdefault("warning_details", []).append({"code": code, "message": message})


def _with_cursor(data: dict[str, Any], kept: int, cursor: Any,
                 options: AnswerOptions) -> dict[str, Any]:
    """Set ``next_cursor`` for ``kept`` results. With a budget, a last check that the
    finished response (cursor and notes included) fits: ``RESERVE_TOKENS`` normally covers
    them; if not, results are dropped from the end and the cursor moves back with them."""
    while True:
        data["next_cursor"] = cursor(kept)
        if options.max_tokens is None or kept == 0 or json_tokens(data) <= options.max_tokens:
            return data
        if kept == 1:  # an empty page would hand back a cursor that never moves on
            raise budget_too_small(options.max_tokens, options.detail, json_tokens(data))
        kept -= 1
        data["results"] = data["results"][:kept]
        data["truncated"]["results_dropped"] += 1
