"""The Starlette application: routes, templates, error pages.

Server-rendered HTML (Jinja2, autoescaped) with progressive enhancement: every action works
as a plain link or form; ``static/app.js`` adds live job progress, copy buttons and focus
handling. JSON twins of the pages under ``/api/`` return the same data. State-changing
requests are POST forms with the session's CSRF token and a confirmation step rendered by
the server (``confirm=yes``), so nothing changes on a single click or without JavaScript.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gitquarry.errors import GitquarryError, InternalError, InvalidArgumentError, NotFoundError
from gitquarry.percent import floor_percent
from gitquarry.web import render
from gitquarry.web.backend import DOCS_MODES, HISTORY_MODES, WebBackend, selector_from
from gitquarry.web.errors import http_status
from gitquarry.web.security import Session, check_csrf

log = logging.getLogger(__name__)
Endpoint = Callable[[Request], Awaitable[Response]]


def _env() -> Environment:
    env = Environment(loader=PackageLoader("gitquarry.web", "templates"),
                      autoescape=select_autoescape(["html", "svg"]), trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["day"] = render.day
    env.filters["moment"] = render.moment
    env.filters["size"] = render.size
    env.filters["percent"] = lambda f, digits=0: floor_percent(f or 0.0, 1.0, digits)
    env.filters["marked"] = render.marked
    env.filters["unmarkdown"] = render.plain_markdown
    env.filters["num"] = render.num
    env.filters["diff_lines"] = render.diff_lines
    env.filters["short"] = lambda h, n=10: (h or "")[:n]
    return env


def _int(value: str | None, name: str, default: int, lo: int, hi: int) -> int:
    if value in (None, ""):
        return default
    assert value is not None
    if not value.strip().isdigit() or not lo <= int(value) <= hi:
        raise InvalidArgumentError(name, f"must be a whole number from {lo} to {hi}")
    return int(value)


def history_count(params: Mapping[str, str]) -> int | None:
    """The number of results a history page or ``/api/history`` asks for: ``n`` (the form's
    field) or ``top_n`` (the CLI's and the MCP tool's name), 1-100 as on every surface;
    None when neither is given (``[search] top_n``, as the CLI).

    :raises InvalidArgumentError: not a whole number from 1 to 100, or ``n`` and ``top_n``
        both given with different values (never a silent choice)."""
    return _count(params, "top_n")


def graph_count(params: Mapping[str, str]) -> int | None:
    """:func:`history_count` for the graph page and ``/api/graph``: ``n`` or ``limit`` (the
    CLI's and the MCP tool's name), 1-100; None: their default (10)."""
    return _count(params, "limit")


def _count(params: Mapping[str, str], alias: str) -> int | None:
    n, other = params.get("n") or "", params.get(alias) or ""
    if n and other and n.strip() != other.strip():
        raise InvalidArgumentError(alias, f"n={n[:20]!r} and {alias}={other[:20]!r} disagree: "
                                   "give one of them")
    name, value = (alias, other) if other else ("n", n)
    if not value:
        return None
    return _int(value, name, 0, 1, 100)


class WebApp:
    """Routes bound to one :class:`WebBackend`."""

    def __init__(self, backend: WebBackend) -> None:
        self.backend = backend
        self.env = _env()

    # -- plumbing --------------------------------------------------------------------------

    def page(self, request: Request, template: str, http_status: int = 200,
             **context: Any) -> HTMLResponse:
        session: Session | None = request.scope.get("gq_session")
        ws = request.query_params.get("ws") or self.backend.default_ref() or ""
        html = self.env.get_template(template).render(
            request=request, csrf=session.csrf if session else "", ws=ws,
            ws_query=("?" + urlencode({"ws": ws})) if ws else "",
            ws_amp=("&" + urlencode({"ws": ws})) if ws else "",  # appended to a query
            workspaces=self._workspaces(), nav=template.split(".")[0], **context)
        return HTMLResponse(html, status_code=http_status)

    def _workspaces(self) -> list[dict[str, Any]]:
        try:
            return self.backend.workspaces()
        except GitquarryError:
            return []

    def error_page(self, request: Request, exc: GitquarryError) -> Response:
        status = http_status(exc)
        message = self.backend.daemon.redact(str(exc))
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": {"code": exc.code, "message": message}},
                                status_code=status)
        return self.page(request, "error.html", http_status=status, code=exc.code, message=message)

    def internal_error(self, request: Request, exc: Exception) -> Response:
        """A bug: logged with its traceback in the daemon log, a readable page here."""
        log.exception("web request %s failed", request.url.path[:200])
        return self.error_page(request, InternalError(
            exc, f"internal error ({type(exc).__name__}); the daemon log has the details"))

    def guarded(self, handler: Callable[[Request], Response]) -> Endpoint:
        """A sync page handler run on the thread pool with typed errors as pages."""
        from starlette.concurrency import run_in_threadpool

        async def endpoint(request: Request) -> Response:
            try:
                return await run_in_threadpool(handler, request)
            except GitquarryError as exc:
                return self.error_page(request, exc)
            except Exception as exc:
                return self.internal_error(request, exc)

        return endpoint

    def posted(self, handler: Callable[[Request, dict[str, str]], Response]) -> Endpoint:
        """A form handler: the CSRF token is checked before ``handler`` sees the form."""
        from starlette.concurrency import run_in_threadpool

        async def endpoint(request: Request) -> Response:
            session: Session | None = request.scope.get("gq_session")
            form = await request.form()
            fields = {k: str(v) for k, v in form.items() if isinstance(v, str)}
            token = fields.pop("csrf", None) or request.headers.get("x-csrf-token")
            if session is None or not check_csrf(session, token):
                return Response("Refused: the form's CSRF token is missing or wrong (reload "
                                "the page and try again).\n", status_code=403,
                                media_type="text/plain")
            try:
                return await run_in_threadpool(handler, request, fields)
            except GitquarryError as exc:
                return self.error_page(request, exc)
            except Exception as exc:
                return self.internal_error(request, exc)

        return endpoint

    # -- history ---------------------------------------------------------------------------

    def history_data(self, request: Request) -> dict[str, Any]:
        p = request.query_params
        q = (p.get("q") or "").strip()
        form: dict[str, Any] = {"q": q, "mode": p.get("mode") or "", "glob": p.get("glob") or "",
                "after": p.get("after") or "", "before": p.get("before") or "",
                "n": p.get("n") or p.get("top_n") or "", "explain": p.get("explain") == "1"}
        data: dict[str, Any] = {"form": form, "modes": HISTORY_MODES, "response": None}
        if q:
            data["response"] = self.backend.history(
                p.get("ws") or None, q, mode=form["mode"] or None, files_glob=form["glob"],
                after=form["after"], before=form["before"],
                top_n=history_count(p), explain=form["explain"])
        return data

    def history(self, request: Request) -> Response:
        try:
            data = self.history_data(request)
        except GitquarryError as exc:
            if isinstance(exc, NotFoundError):
                raise
            data = {"form": dict(request.query_params), "modes": HISTORY_MODES,
                    "response": None}
            return self.page(request, "history.html", http_status=http_status(exc), **data,
                             error={"code": exc.code,
                                    "message": self.backend.daemon.redact(str(exc))})
        response = data["response"]
        hist = render.histogram(response["timeline"]) if response else None
        return self.page(request, "history.html", **data, hist=hist)

    def api_history(self, request: Request) -> Response:
        return JSONResponse(self.history_data(request))

    def commit(self, request: Request) -> Response:
        data = self.backend.commit(request.query_params.get("ws") or None,
                                   request.path_params["hash"])
        return self.page(request, "commit.html", commit=data, back=request.query_params)

    # -- graph -----------------------------------------------------------------------------

    def graph_data(self, request: Request) -> dict[str, Any]:
        p = request.query_params
        q = (p.get("q") or "").strip()
        data = self.backend.graph(p.get("ws") or None, q, kind=p.get("kind") or None,
                                  limit=graph_count(p))
        data["form"] = {"q": q, "kind": p.get("kind") or ""}
        return data

    def graph(self, request: Request) -> Response:
        return self.page(request, "graph.html", **self.graph_data(request))

    def api_graph(self, request: Request) -> Response:
        return JSONResponse(self.graph_data(request))

    def node(self, request: Request) -> Response:
        p = request.query_params
        data = self.backend.graph_node(p.get("ws") or None, request.path_params["ref_id"],
                                       p.get("q"))
        return self.page(request, "node.html", node=data, q=p.get("q") or "")

    # -- repositories and the Documentation tab ----------------------------------------------

    def repos(self, request: Request) -> Response:
        from gitquarry.web.docs_state import register_handoff

        return self.page(request, "repos.html", status=self.backend.status(),
                         sources=self.backend.registrations(),
                         register_cmd=register_handoff())

    def docs_data(self, request: Request) -> dict[str, Any]:
        p = request.query_params
        selector = selector_from(dict(p))
        snap = self.backend.docs_snapshot(selector)
        form: dict[str, Any] = {"q": (p.get("q") or "").strip(), "rev": p.get("rev") or "",
                "mode": p.get("mode") or "", "limit": p.get("limit") or "",
                "overlay": p.get("overlay") == "1"}
        data: dict[str, Any] = {"snap": snap, "form": form, "modes": DOCS_MODES,
                                "search": None, "search_error": None}
        if form["q"] and snap["state"] not in ("stale_generation", "policy_invalid"):
            try:
                data["search"] = self.backend.docs_search(
                    selector, form["q"], revision=form["rev"], mode=form["mode"],
                    limit=_int(form["limit"], "limit", 10, 1, 50),
                    include_worktree=form["overlay"])
            except GitquarryError as exc:
                data["search_error"] = {"code": exc.code,
                                        "message": self.backend.daemon.redact(str(exc))}
        return data

    def docs(self, request: Request) -> Response:
        data = self.docs_data(request)
        sel = data["snap"]["selector"]
        return self.page(request, "docs.html", **data, sel_query=_sel_query(sel))

    def api_docs(self, request: Request) -> Response:
        return JSONResponse(self.docs_data(request))

    def docs_action(self, request: Request, form: dict[str, str]) -> Response:
        action = request.path_params["action"]
        if action not in ("reconcile", "index"):
            raise NotFoundError("action", f"{action!r} is not an action")
        selector = selector_from(form)
        revision = form.get("rev") or None if action == "index" else None
        overlay = action == "index" and form.get("overlay") == "1"
        if form.get("confirm") != "yes":
            snap = self.backend.docs_snapshot(selector)
            return self.page(request, "confirm.html", action=action, fields={
                k: v for k, v in form.items() if k in ("repo", "reg", "src", "gen", "rev",
                                                        "overlay")},
                target=f"/repos/docs/{action}", snap=snap, revision=revision or "HEAD",
                overlay=overlay)
        job = self.backend.docs_submit(selector, revision=revision, include_worktree=overlay,
                                       origin="web")
        return RedirectResponse(f"/jobs/{job['id']}", status_code=303)

    # -- jobs ------------------------------------------------------------------------------

    def job(self, request: Request) -> Response:
        data = self.backend.job(request.path_params["job_id"])
        return self.page(request, "job.html", **data)

    def api_job(self, request: Request) -> Response:
        return JSONResponse(self.backend.job(request.path_params["job_id"]))

    def jobs(self, request: Request) -> Response:
        return self.page(request, "jobs.html", jobs=self.backend.jobs(limit=50))

    def cancel(self, request: Request, form: dict[str, str]) -> Response:
        job_id = request.path_params["job_id"]
        if form.get("confirm") != "yes":
            data = self.backend.job(job_id)
            return self.page(request, "confirm.html", action="cancel", fields={},
                             target=f"/jobs/{job_id}/cancel", job=data["job"], snap=None)
        self.backend.cancel(job_id)
        return RedirectResponse(f"/jobs/{job_id}", status_code=303)

    # -- status ----------------------------------------------------------------------------

    def status(self, request: Request) -> Response:
        return self.page(request, "status.html", status=self.backend.status())

    def api_status(self, request: Request) -> Response:
        return JSONResponse(self.backend.status())

    def not_found(self, request: Request, exc: Exception) -> Response:
        return self.error_page(request, NotFoundError("page", f"{request.url.path[:200]!r} "
                                                      "does not exist"))

    def routes(self) -> list[Any]:
        g = self.guarded
        static = resources.files("gitquarry.web") / "static"
        return [
            Route("/", g(self.history)),
            Route("/history", g(self.history)),
            Route("/history/commit/{hash}", g(self.commit)),
            Route("/graph", g(self.graph)),
            Route("/graph/node/{ref_id:path}", g(self.node)),
            Route("/repos", g(self.repos)),
            Route("/repos/docs", g(self.docs)),
            Route("/repos/docs/{action}", self.posted(self.docs_action), methods=["POST"]),
            Route("/jobs", g(self.jobs)),
            Route("/jobs/{job_id}", g(self.job)),
            Route("/jobs/{job_id}/cancel", self.posted(self.cancel), methods=["POST"]),
            Route("/status", g(self.status)),
            Route("/api/history", g(self.api_history)),
            Route("/api/graph", g(self.api_graph)),
            Route("/api/repos/docs", g(self.api_docs)),
            Route("/api/jobs/{job_id}", g(self.api_job)),
            Route("/api/status", g(self.api_status)),
            Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
        ]


def _sel_query(sel: dict[str, Any]) -> str:
    return urlencode({"repo": sel["repo_id"], "reg": sel["registration_id"],
                      "src": sel["source_registration_id"],
                      "gen": sel["source_registration_generation"]})


def build_app(backend: WebBackend) -> Starlette:
    """The ASGI app (without the guard: ``WebServer`` wraps it)."""
    web = WebApp(backend)
    app = Starlette(routes=web.routes(), exception_handlers={404: web.not_found})
    app.state.web = web
    return app
