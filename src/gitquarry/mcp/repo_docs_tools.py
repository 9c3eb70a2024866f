"""MCP tools over the repository-docs corpus, on the shared gitquarry server:
``repository_docs_sources``, ``repository_docs_policy``, ``repository_docs_plan``,
``repository_docs_status`` and ``repository_docs_search``.

Each tool calls the same ``RepoDocsService`` method as the CLI and returns its JSON object as
one text block (sent once). Arguments are checked strictly (no coercion:
``"5"`` is not a limit, ``1`` is not a boolean). A caller may pass only ``repo_id`` when one
authority is registered for it; otherwise ``repository_docs_sources`` returns the opaque
selectors for an exact retry, and a partial selector is refused. Errors come back as tool
errors with the typed error's code and message. Responses carry opaque ids and
repository-relative paths only: the registered absolute path never leaves the registry.
"""

# No ``from __future__ import annotations``: the SDK evaluates the tools' annotations.
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from gitquarry.config import Config
from gitquarry.mcp.annotations import json_text
from gitquarry.mcp.arguments import own_arguments
from gitquarry.mcp.errors import as_tool_error, docs_tool_message
from gitquarry.query.docs import DocsRequest, docs_request, search_docs
from gitquarry.repo_docs.answers import fit_hits, fit_plan, index_state
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Registry, Selector
from gitquarry.repo_docs.search import MAX_LIMIT
from gitquarry.token_budget import MAX_MAX_TOKENS, MIN_MAX_TOKENS

_services: list[RepoDocsService] = []

RepoId = Annotated[str | None, Field(
    strict=True, description="Repository name (owner/name). Optional when exactly one "
    "repository is registered.")]
RegistrationId = Annotated[str | None, Field(strict=True, description="Opaque registration "
                                             "id (all three selector fields or none).")]
SourceId = Annotated[str | None, Field(strict=True, description="Opaque source id.")]
Generation = Annotated[int | None, Field(strict=True, ge=1, description="Source generation.")]
Revision = Annotated[str | None, Field(strict=True, description="Git revision: branch, tag, "
                                       "hash, HEAD~3 (default HEAD).")]
MaxTokens = Annotated[int, Field(
    strict=True, ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS, description=(
        "Token budget for the whole response (estimated conservatively); with list_files, "
        "the file and exclusion lists are cut to fit (truncated says how many; the counts "
        "stay whole)."))]
IncludeWorktree = Annotated[bool, Field(strict=True, description="Overlay tracked "
                                        "working-tree changes (never untracked files).")]


def _result(data: dict[str, Any]) -> CallToolResult:
    # sent once, as text (as the other tools do): no second copy as structured content
    return CallToolResult(
        content=[TextContent(type="text", text=json_text(data))]
    )


def _call(fn: Callable[[], dict[str, Any]]) -> CallToolResult:
    try:
        return _result(fn())
    except Exception as exc:  # typed, storage or a bug: mcp.errors says which
        raise as_tool_error(exc, message=docs_tool_message) from exc


def register(server: MCPServer, config: Config, registry: Registry | None = None
             ) -> RepoDocsService:
    """Add the five tools to ``server``; returns the service they share (close it after
    the server stops, or call :func:`close_all`)."""
    service = RepoDocsService(config, registry)
    _services.append(service)

    def selector(repo_id: str | None, registration_id: str | None, source_id: str | None,
                 generation: int | None) -> Selector:
        return Selector(repo_id, registration_id, source_id, generation)

    def repository_docs_sources(repo_id: RepoId = None) -> CallToolResult:
        return _call(lambda: service.sources(repo_id))

    def repository_docs_policy(
        repo_id: RepoId = None, registration_id: RegistrationId = None,
        source_registration_id: SourceId = None,
        source_registration_generation: Generation = None, revision: Revision = None,
        include_worktree: IncludeWorktree = False,
    ) -> CallToolResult:
        sel = selector(repo_id, registration_id, source_registration_id,
                       source_registration_generation)
        return _call(lambda: service.policy(sel, revision=revision,
                                            include_worktree=include_worktree))

    def repository_docs_plan(
        repo_id: RepoId = None, registration_id: RegistrationId = None,
        source_registration_id: SourceId = None,
        source_registration_generation: Generation = None, revision: Revision = None,
        include_worktree: IncludeWorktree = False,
        list_files: Annotated[bool, Field(strict=True, description="Also list every file "
                                          "and exclusion.")] = False,
        max_tokens: MaxTokens = 8000,
    ) -> CallToolResult:
        sel = selector(repo_id, registration_id, source_registration_id,
                       source_registration_generation)
        return _call(lambda: fit_plan(service.plan(sel, revision=revision,
                                                   include_worktree=include_worktree,
                                                   list_files=list_files), max_tokens))

    def repository_docs_status(
        repo_id: RepoId = None, registration_id: RegistrationId = None,
        source_registration_id: SourceId = None,
        source_registration_generation: Generation = None,
    ) -> CallToolResult:
        sel = selector(repo_id, registration_id, source_registration_id,
                       source_registration_generation)
        return _call(lambda: service.status(sel))

    def repository_docs_search(
        query: Annotated[str, Field(strict=True, min_length=1, max_length=2000,
                                    description="What to look for.")],
        repo_id: RepoId = None, registration_id: RegistrationId = None,
        source_registration_id: SourceId = None,
        source_registration_generation: Generation = None, revision: Revision = None,
        mode: Annotated[Literal["hybrid", "fulltext"] | None, Field(
            description="hybrid (default) or fulltext.")] = None,
        limit: Annotated[int, Field(strict=True, ge=1, le=MAX_LIMIT,
                                    description="Results (1-50).")] = 10,
        include_worktree: IncludeWorktree = False,
        diverse: Annotated[bool | None, Field(
            strict=True, description="Diversify results (MMR).")] = None,
        min_score: Annotated[float | None, Field(
            ge=0, le=1, description="Leave out results scoring below this (0-1).")] = None,
        max_tokens: Annotated[int, Field(strict=True, ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS,
                                         description=(
            "Token budget for the whole response (estimated conservatively); lower-ranked "
            "hits are left out to fit."))] = 8000,
    ) -> CallToolResult:
        arguments = own_arguments(repository_docs_search, locals())  # first, before any other name

        def answer() -> dict[str, Any]:  # issue 12: index_state and budget (repo_docs.answers)
            request = docs_tool_request(arguments)
            data = search_docs(service, request)
            data["index_state"] = index_state(service, request.selector, data)
            return fit_hits(data, max_tokens)

        return _call(answer)

    descriptions = {
        "repository_docs_sources": "List registered repositories and their opaque selectors.",
        "repository_docs_policy": "The effective docs policy at a revision and its source.",
        "repository_docs_plan": "Which files an index of a revision holds (eligible files "
        "and bytes, exclusions by reason; list_files lists them). The response fits "
        "max_tokens (default 8000).",
        "repository_docs_status": "Registration, HEAD and the revision sets in the cache.",
        "repository_docs_search": "Search the repository's documentation at a Git revision "
        "(hybrid BM25 + embeddings, or fulltext). Every hit carries a citation: path, "
        "line_start-line_end, commit and blob ids, digest-checked against Git. index_state "
        "says which revision answered vs HEAD now and how much of it is embedded; the "
        "response fits max_tokens (default 8000).",
    }
    for tool in (repository_docs_sources, repository_docs_policy, repository_docs_plan,
                 repository_docs_status, repository_docs_search):
        server.add_tool(tool, name=tool.__name__, description=descriptions[tool.__name__])
    return service


def docs_tool_request(arguments: dict[str, Any]) -> DocsRequest:
    """The ``DocsRequest`` of one ``repository_docs_search`` call's arguments (as the tool
    function receives them, defaults filled).

    :raises InvalidArgumentError: see ``gitquarry.query.docs.docs_request``."""
    fields = dict(arguments)
    sel = Selector(fields.pop("repo_id"), fields.pop("registration_id"),
                   fields.pop("source_registration_id"),
                   fields.pop("source_registration_generation"))
    return docs_request(sel, **fields)


def close_all() -> None:
    """Close every service this module created (their git processes and caches)."""
    while _services:
        _services.pop().close()
