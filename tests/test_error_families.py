"""Error families and kinds (issue 23 §4): every concrete error class sits under exactly one
family, every surface maps an error's kind in one place, and the mappings agree with the
family for every class; an unexpected exception is an ``InternalError`` on every surface.

The expected numbers below are the contract (docs/cli.md exit codes; the web page's HTTP
statuses), stated per family, not per class: a class's family decides what it does."""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import gitquarry
from gitquarry import errors
from gitquarry.errors import (
    AREAS,
    FAMILIES,
    CommitNotFoundError,
    ConfigError,
    ErrorKind,
    GitFailureError,
    GitquarryError,
    IndexStateError,
    InternalError,
    NotFoundError,
    PathNotFoundError,
    TrustError,
    UnavailableError,
    UsageError,
)

SRC = Path(gitquarry.__file__).parent

#: the contract per family: (CLI exit status, HTTP status)
EXPECTED: dict[type[GitquarryError], tuple[int, int]] = {
    UsageError: (2, 400),
    NotFoundError: (3, 404),
    ConfigError: (2, 400),
    IndexStateError: (1, 409),
    GitFailureError: (1, 409),
    TrustError: (1, 409),
    UnavailableError: (1, 409),
    InternalError: (1, 500),
}


def _import_everything() -> None:
    for mod in pkgutil.walk_packages(gitquarry.__path__, "gitquarry."):
        if not mod.name.endswith("__main__"):
            importlib.import_module(mod.name)


def _all_subclasses(cls: type) -> set[type]:
    out: set[type] = set()
    sub: type
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def _relays() -> set[type]:
    """Errors relayed from another process: their kind is the one the daemon reported."""
    from gitquarry.service.ipc import RemoteError

    return {RemoteError}


def _concrete() -> list[type[GitquarryError]]:
    _import_everything()
    return sorted((c for c in _all_subclasses(GitquarryError)
                   if c.__module__.startswith("gitquarry.") and c not in AREAS
                   and c not in _relays()), key=lambda c: c.__name__)


def _dummy(annotation: str) -> Any:
    if "Path" in annotation:
        return Path("index.db")
    if "BaseException" in annotation:
        return ValueError("boom")
    if "list" in annotation:
        return ["x"]
    if "float" in annotation:
        return 1.5
    if "int" in annotation and "str" not in annotation:
        return 7
    return "x"


def _instances(cls: type[GitquarryError]) -> list[GitquarryError]:
    """One instance per variant, built from the constructor's annotations."""
    args = [_dummy(str(p.annotation))
            for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    if cls in (CommitNotFoundError, PathNotFoundError):
        return [cls(*args, missing=True), cls(*args, missing=False)]  # type: ignore[call-arg]
    return [cls(*args)]


def _family(cls: type) -> type[GitquarryError]:
    found = [f for f in FAMILIES if issubclass(cls, f)]
    assert len(found) == 1, (cls.__name__, [f.__name__ for f in found])
    return found[0]


def test_every_concrete_error_class_has_exactly_one_family() -> None:
    classes = _concrete()
    assert len(classes) > 60  # all of them were found
    for cls in classes:
        _family(cls)
    for area in AREAS:  # areas group errors across families, they are not one
        assert not any(issubclass(area, f) for f in FAMILIES), area
    assert set(EXPECTED) == set(FAMILIES)
    # each family declares its own kind
    for family in FAMILIES:
        assert "kind" in vars(family), family


def test_cli_mcp_and_web_mappings_agree_with_the_family_for_every_class() -> None:
    from gitquarry.cli.app import _fail_with
    from gitquarry.mcp.errors import tool_error
    from gitquarry.service.ipc import RemoteError
    from gitquarry.web.errors import http_status

    checked = 0
    for cls in _concrete():
        family = _family(cls)
        for exc in _instances(cls):
            exit_code, status = EXPECTED[family]
            if isinstance(exc, CommitNotFoundError | PathNotFoundError) and exc.kind is (
                    ErrorKind.INVALID):  # a malformed or ambiguous name: a usage error
                exit_code, status = EXPECTED[UsageError]
            assert exc.exit_code == exit_code, cls
            with pytest.raises(SystemExit) as ended:  # the CLI's one translation
                _fail_with([], exc)
            assert ended.value.code == exit_code, cls
            assert http_status(exc) == status, cls
            assert str(tool_error(exc)) == f"{exc.code}: {exc}", cls
            # relayed by the daemon with its exit status, it keeps its CLI exit status and,
            # for the kinds the exit status tells apart, its HTTP status
            relayed = RemoteError(exc.code, str(exc), retryable=False, exit_code=exc.exit_code)
            assert relayed.exit_code == exit_code, cls
            checked += 1
    assert checked > 60


def test_not_found_names_follow_missing() -> None:
    assert CommitNotFoundError("abc", "no such commit", missing=True).kind is ErrorKind.NOT_FOUND
    assert CommitNotFoundError("ab", "ambiguous").kind is ErrorKind.INVALID
    assert PathNotFoundError("a.py", "no such file").kind is ErrorKind.NOT_FOUND
    assert PathNotFoundError("a.py", "two files", missing=False).kind is ErrorKind.INVALID


def _calls_in_src(names: set[str]) -> list[str]:
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in names):
                found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.func.id}")
    return found


def test_no_base_area_or_abstract_family_is_raised_and_no_code_is_reassigned() -> None:
    abstract = {"GitquarryError", "IndexStateError", "GitFailureError", "TrustError",
                "UnavailableError", *(a.__name__ for a in AREAS)}
    # ``X.__init__(self, ...)`` from a subclass is an attribute call, not counted here
    assert _calls_in_src(abstract) == []
    reassigned = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr in ("code", "exit_code")
                    and isinstance(t.value, ast.Name) and t.value.id in ("err", "exc", "error")
                    for t in node.targets):
                reassigned.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert reassigned == [], "an error's code is its class's: raise InternalError instead"


def test_nothing_recognises_an_internal_error_by_its_code() -> None:
    offenders = [f"{p.relative_to(SRC)}" for p in SRC.rglob("*.py")
                 if '== "internal_error"' in p.read_text(encoding="utf-8")]
    assert offenders == []


# --- an unexpected exception is an InternalError on every surface ------------------------


def test_cli_reports_an_unexpected_exception_as_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import json

    import gitquarry.cli.config as cli_config
    from gitquarry.cli.app import main

    def broken(project: Path | None) -> dict[str, Any]:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli_config, "provenance", broken)  # a bug inside a command
    monkeypatch.delenv("GITQUARRY_DEBUG", raising=False)
    with pytest.raises(SystemExit) as ended:
        main(["config", "show", "--json", "--project", str(tmp_path)])
    assert ended.value.code == 1
    captured = capsys.readouterr()
    message = ("internal error (ZeroDivisionError: a bug). Re-run with GITQUARRY_DEBUG=1 for "
               "a traceback and report it.")
    assert json.loads(captured.out) == {"error": {"code": "internal_error", "message": message,
                                                  "exit_code": 1}}
    assert f"Error: {message}" in captured.err and "Traceback" not in captured.err


def test_mcp_reports_an_unexpected_exception_as_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from gitquarry.mcp.errors import as_tool_error

    with caplog.at_level("ERROR", logger="gitquarry.mcp"):
        err = as_tool_error(KeyError("k"))
    assert str(err) == ("internal_error: KeyError: 'k' (a gitquarry bug; the server log has "
                        "the traceback)")
    assert any(r.exc_info for r in caplog.records)  # the traceback goes to the server log
    typed = as_tool_error(InternalError(KeyError("k")))  # a typed one passes through as is
    assert str(typed) == "internal_error: internal error (KeyError: 'k')"


def test_daemon_jobs_classify_an_unexpected_exception_as_internal_error() -> None:
    from gitquarry.service.runner import classify, error_payload

    err = classify(RuntimeError("boom"))
    assert isinstance(err, InternalError) and err.code == "internal_error"
    assert error_payload(err, str) == {"code": "internal_error",
                                       "message": "internal error (RuntimeError: boom)",
                                       "retryable": True}
    typed = classify(errors.NoIndexError(Path("/w")))
    assert typed.code == "no_index" and not isinstance(typed, InternalError)


def test_web_reports_an_unexpected_exception_as_internal_error() -> None:
    """The real ``WebApp`` and templates; the backend stands in for the daemon's (only its
    redaction and workspace list are read on an error page)."""
    from starlette.requests import Request

    from gitquarry.web.app import WebApp

    backend = SimpleNamespace(daemon=SimpleNamespace(redact=lambda s: s),
                              workspaces=lambda: [], default_ref=lambda: None)
    app = WebApp(backend)  # type: ignore[arg-type]

    def handler(request: Request) -> Any:
        raise ZeroDivisionError("secret detail")

    async def call(path: str) -> Any:
        scope = {"type": "http", "method": "GET", "path": path, "query_string": b"",
                 "headers": [], "root_path": "", "scheme": "http",
                 "server": ("127.0.0.1", 80)}
        return await app.guarded(handler)(Request(scope))

    api = asyncio.run(call("/api/history"))
    assert api.status_code == 500
    import json
    assert json.loads(api.body) == {"error": {
        "code": "internal_error",
        "message": "internal error (ZeroDivisionError); the daemon log has the details"}}
    page = asyncio.run(call("/history"))
    assert page.status_code == 500 and b"secret detail" not in page.body
