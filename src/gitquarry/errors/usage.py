"""Usage errors (family ``UsageError``, kind ``INVALID``: CLI exit 2, HTTP 400): the caller
passed an invalid argument."""

from __future__ import annotations

from pathlib import Path

from gitquarry.errors.base import (
    UsageError,
    WebError,
)


class InvalidGlobError(UsageError):
    """A files glob could not be compiled. ``pattern`` is the pattern as given."""

    code = "invalid_glob"

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"invalid glob pattern {pattern!r}: {reason}")
        self.pattern = pattern
        self.reason = reason


class InvalidTimeError(UsageError):
    """A time bound was neither Unix seconds nor an ISO-8601 date/time (nor a relative date).
    ``value`` is the value as given; ``argument`` names the bound as the library knows it
    (``after``, ``before``, ``after_timestamp``, ``before_timestamp``) or is None where the
    value stands alone; ``detail`` is the message without that name (surfaces put their own
    name in front: ``--since: invalid time ...`` on the command line)."""

    code = "invalid_time"

    def __init__(self, value: str, argument: str | None = None) -> None:
        detail = (
            f"invalid time {value!r}: use an ISO-8601 date or time (2024-05-01, 20240501, "
            "2024-05-01T12:00:00Z), Unix seconds (1700000000; @12345678 for eight digits) or "
            "a relative date (2.weeks.ago, yesterday, '3 months ago')"
        )
        super().__init__(detail if argument is None else f"{argument}: {detail}")
        self.value = value
        self.argument = argument
        self.detail = detail


class InvalidArgumentError(UsageError):
    """Any other invalid argument. ``argument`` names it as the library knows it (``top_n``);
    surfaces show it under their own name (``--top-n`` on the command line) with ``detail``."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument
        self.detail = message


class UnknownArgumentError(UsageError):
    """A call named an argument the tool does not have (MCP: checked against the tool's input
    schema). ``names`` are the unknown ones, ``accepted`` lists the tool's arguments."""

    code = "unknown_argument"

    def __init__(self, tool: str, names: list[str], accepted: str) -> None:
        listed = ", ".join(repr(name) for name in names)
        plural = "s" if len(names) > 1 else ""
        super().__init__(f"{tool} has no argument{plural} {listed} (accepted: {accepted})")
        self.tool = tool
        self.names = names
        self.accepted = accepted


class NotARepositoryError(UsageError):
    """A path given as a repository is not one."""

    code = "not_a_repository"

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is not a Git repository")
        self.path = path


class RepoDocsRegistrationError(UsageError):
    """A repository-docs selector does not resolve to exactly one registration.

    ``reason``: ``not_registered``, ``ambiguous`` (several registrations: pass the full
    selector), ``partial_selector``, ``unknown_selector`` or ``invalid_path``.
    """

    code = "repository_docs_registration_invalid"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class WebBindRefusedError(WebError, UsageError):
    """The web page was asked to listen anywhere but 127.0.0.1 (refused: loopback only)."""

    code = "web_bind_refused"

    def __init__(self, host: str) -> None:
        super().__init__(
            f"the web page listens on 127.0.0.1 only; refusing to bind {host!r}"
        )
        self.host = host
