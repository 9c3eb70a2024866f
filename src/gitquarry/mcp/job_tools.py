"""MCP tools over the daemon's jobs: ``repository_docs_index`` (submits a revision-set job,
starting the daemon when none runs), ``service_jobs_list``, ``service_job_status``,
``service_job_attach``, ``service_job_cancel``.

Each tool asks the per-user daemon over its socket and returns its answer as one JSON text
block plus the same object as structured content: public job state only (opaque refs,
counts, typed errors; never an absolute path). No daemon running, an unknown job id and
every other gitquarry error come back as tool errors (``is_error``) starting with the
error's stable code.
"""

# No ``from __future__ import annotations``: the SDK evaluates the annotations.
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from gitquarry.mcp.annotations import json_text
from gitquarry.mcp.errors import as_tool_error, docs_tool_message

#: the longest a single ``service_job_attach`` call waits, seconds
MAX_ATTACH_WAIT_S = 60.0
_STATUSES = ["queued", "running", "interrupted", "succeeded", "superseded", "failed",
             "cancelled"]


def _result(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json_text(data))],
        structured_content=data,
    )


def _call(op: str, **args: Any) -> dict[str, Any]:
    """The daemon's answer to ``op``; its job id and status arguments checked first, so a
    malformed one is a usage error naming the tool's argument, daemon or not.

    :raises ToolError: any error (``mcp.errors``)."""
    from gitquarry.service.client import connect
    from gitquarry.service.job_store import check_job_id, check_status

    try:
        if "id" in args:
            check_job_id(args["id"])
        if "status" in args:
            check_status(args["status"])
        result: dict[str, Any] = connect(wait_for_socket_s=None).call(op, **args)
    except Exception as exc:  # typed, storage or a bug: mcp.errors says which
        raise as_tool_error(exc) from exc
    return result


JobId = Annotated[str, Field(strict=True, min_length=1, max_length=32,
                             description="Public job id, e.g. job-000001.")]


def register(server: MCPServer) -> None:
    """Add ``repository_docs_index`` and the four service-job tools to ``server``."""

    def service_jobs_list(
        status: Annotated[str | None, Field(
            strict=True, description="Only jobs in this status.",
            json_schema_extra={"enum": [*_STATUSES, None]})] = None,
        limit: Annotated[int, Field(strict=True, ge=1, le=100,
                                    description="At most this many jobs (1-100).")] = 20,
    ) -> CallToolResult:
        return _result(_call("jobs.list", status=status, limit=limit))

    def service_job_status(job_id: JobId) -> CallToolResult:
        return _result(_call("jobs.show", id=job_id))

    def service_job_attach(
        job_id: JobId,
        wait_s: Annotated[float, Field(
            strict=False, ge=0, le=MAX_ATTACH_WAIT_S,
            description="Wait at most this many seconds for the job to finish (0-60).")] = 10.0,
    ) -> CallToolResult:
        from gitquarry.service.client import connect
        from gitquarry.service.job_store import check_job_id

        final: dict[str, Any] = {}
        try:
            check_job_id(job_id)
            for payload in connect(wait_for_socket_s=None).stream(
                "jobs.attach", id=job_id, timeout_s=float(wait_s)
            ):
                if payload.get("final"):
                    final = payload["result"]
        except Exception as exc:  # typed, storage or a bug: mcp.errors says which
            raise as_tool_error(exc) from exc
        return _result(final)

    def service_job_cancel(job_id: JobId) -> CallToolResult:
        return _result(_call("jobs.cancel", id=job_id))

    def repository_docs_index(
        repo_id: Annotated[str | None, Field(
            strict=True, max_length=200,
            description="Repository name (e.g. owner/repo); optional with one registration.")]
        = None,
        registration_id: Annotated[str | None, Field(strict=True, max_length=100)] = None,
        source_registration_id: Annotated[str | None, Field(strict=True, max_length=100)]
        = None,
        source_registration_generation: Annotated[int | None, Field(strict=True, ge=1)]
        = None,
        revision: Annotated[str | None, Field(
            strict=True, max_length=256, description="Any revision; default HEAD.")] = None,
        include_worktree: Annotated[bool, Field(
            strict=True, description="Include tracked worktree changes (an overlay set).")]
        = False,
    ) -> CallToolResult:
        from gitquarry.service.client import start_daemon
        from gitquarry.service.docs_jobs import check_docs_selector

        try:
            check_docs_selector({  # an unknown repository starts no daemon
                "repo": repo_id, "registration_id": registration_id,
                "source_registration_id": source_registration_id,
                "source_registration_generation": source_registration_generation})
            client, _ = start_daemon()
            result: dict[str, Any] = client.call(
                "docs.submit", repo=repo_id, registration_id=registration_id,
                source_registration_id=source_registration_id,
                source_registration_generation=source_registration_generation,
                revision=revision, include_worktree=include_worktree, origin="mcp")
        except Exception as exc:  # typed, storage or a bug: mcp.errors says which
            raise as_tool_error(exc, message=docs_tool_message) from exc
        return _result(result)

    server.add_tool(repository_docs_index, name="repository_docs_index", description=(
        "Build the repository-docs revision set for a revision (default HEAD) as a daemon "
        "job; returns {job}. Follow it with service_job_attach. Pass the three-field "
        "selector from repository_docs_sources when several authorities are registered."))
    server.add_tool(service_jobs_list, name="service_jobs_list", description=(
        "List the gitquarry daemon's indexing jobs, newest first: id, type, status, "
        "workspace, attempts, progress, result or typed error."))
    server.add_tool(service_job_status, name="service_job_status", description=(
        "One daemon job's public state and its events (e.g. retention reports)."))
    server.add_tool(service_job_attach, name="service_job_attach", description=(
        "Wait up to wait_s seconds (max 60) for a daemon job to finish; returns {job, "
        "finished}. Call again to keep waiting."))
    server.add_tool(service_job_cancel, name="service_job_cancel", description=(
        "Cancel a daemon job. Acknowledged only once the cancellation is durably recorded; a "
        "job_state_write_failed error means nothing changed and the call can be retried."))
