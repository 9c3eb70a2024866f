"""Every MCP tool call's arguments are checked against the tool's input schema before it runs.

The SDK drops an argument no parameter declares (``repo`` for ``repo_id`` would search another
repository; ``mode`` on ``search_git_history`` would be ignored) and reports a missing or
mistyped one in pydantic's words. ``CheckedMCPServer`` refuses both, for every tool, as tool
errors in the shape of ``mcp.errors`` (``"<code>: <message>"``, after the SDK's ``Error executing
tool <name>:`` as every tool error):

- ``unknown_argument: search_git_history has no argument 'mode' (accepted: query, top_n, …)``
- ``invalid_argument: query: required argument missing (…)``,
  ``invalid_argument: top_n: Input should be greater than or equal to 1 (…)``

The tools' published schemas are unchanged (no ``additionalProperties``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import Icon, ToolAnnotations
from pydantic import ValidationError

from gitquarry.errors import UnknownArgumentError, UsageError
from gitquarry.mcp.errors import tool_error

#: what the SDK puts before every error a tool raises; ours read the same
_PREFIX = "Error executing tool {}: "


def _accepted(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", ()))
    names = [name + (" (required)" if name in required else "")
             for name in schema.get("properties", {})]
    return ", ".join(names) if names else "none"


def _field(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "arguments"


def own_arguments(fn: Callable[..., Any], scope: dict[str, Any]) -> dict[str, Any]:
    """A tool function's arguments from its ``locals()`` (taken first in its body): the
    values of its parameters only (``locals()`` of a nested function also holds the free
    variables it reads)."""
    return {name: scope[name] for name in inspect.signature(fn).parameters}


def check_arguments(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Refuse arguments ``schema`` (a tool's JSON input schema) does not declare.

    :raises UnknownArgumentError: naming every unknown argument and the accepted ones.
    """
    known = schema.get("properties", {})
    unknown = sorted(name for name in arguments if name not in known)
    if unknown:
        raise UnknownArgumentError(tool, unknown, _accepted(schema))


def validation_error(tool: str, schema: dict[str, Any], exc: ValidationError
                     ) -> UsageError:
    """A pydantic validation failure of ``tool``'s arguments as a gitquarry error: each field
    with what is wrong (never the value given), then the accepted arguments."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        field = _field(error["loc"])
        what = "required argument missing" if error["type"] == "missing" else error["msg"]
        problems.append(f"{field}: {what}")
    return UsageError("; ".join(problems) + f" ({tool} accepts: {_accepted(schema)})")


class CheckedMCPServer(MCPServer):
    """``MCPServer`` that checks each call's arguments against the tool's input schema
    before dispatch (see the module doc), and gives every tool its title and hints from
    ``mcp.annotations.TOOL_ANNOTATIONS``; everything else is the SDK's."""

    def add_tool(self, fn: Callable[..., Any], name: str | None = None,
                 title: str | None = None, description: str | None = None,
                 annotations: ToolAnnotations | None = None, icons: list[Icon] | None = None,
                 meta: dict[str, Any] | None = None,
                 structured_output: bool | None = None) -> None:
        """The SDK's ``add_tool`` with ``title`` and ``annotations`` from the table.

        :raises KeyError: ``name`` has no entry in ``TOOL_ANNOTATIONS`` (a bug)."""
        from gitquarry.mcp.annotations import TOOL_ANNOTATIONS

        tool_name = name or fn.__name__
        hints = annotations or TOOL_ANNOTATIONS[tool_name]
        super().add_tool(fn, name=tool_name, title=title or hints.title,
                         description=description, annotations=hints, icons=icons, meta=meta,
                         structured_output=structured_output)

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            try:
                check_arguments(name, tool.parameters, arguments)
                tool.fn_metadata.validate_arguments(arguments)
            except UnknownArgumentError as exc:
                raise tool_error(exc, prefix=_PREFIX.format(name)) from None
            except ValidationError as exc:
                typed = validation_error(name, tool.parameters, exc)
                raise tool_error(typed, prefix=_PREFIX.format(name)) from exc
        return await super().call_tool(name, arguments, context)
