"""The command-line fast path of ``gitquarry repo-docs search QUERY … --json``: answered
without importing Typer, Click, Rich or pydantic (issue 21 §5: ~0.4 CPU-seconds of a cold
docs search was the framework).

``cli.fast`` does the same for ``history``; this module follows its rules:

- What it takes (:func:`parse_docs_search`): ``repo-docs search`` first (no root or group
  option before them), exactly one QUERY, ``--json``, and only ``search``'s own options,
  spelled as Click reads them (``--opt VALUE``, ``--opt=VALUE``; the last of a repeated
  option wins). A value starting with ``-``, ``--help``, an unknown option, a flag given a
  value, a number that is not plain ASCII digits (``+3``, ``1_000``, ``1e-3``), a completion
  request (``_GITQUARRY_COMPLETE``), ``GITQUARRY_LOG`` set or ``GITQUARRY_FAST=0``: not
  taken. Human (non-JSON) output is Rich's and is never taken here.
- How it answers (:func:`render_docs`): the Typer command's own calls in its order
  (``cli.repo_docs.cli_docs_request``'s ``docs_request``, ``RepoDocsService(load_config(None))``,
  ``query.docs.search_docs``, ``repo_docs.answers.fit_hits`` under ``--max-tokens``) and its
  JSON writer (``cli.plain.json_text``).
- When a daemon runs for this user it is asked first (:func:`ask_daemon_docs`, the thin
  client's socket and trust rules, ``cli.thin``): it answers with the same calls in its warm
  process, where the full-text tables built for a revision are kept in memory
  (``cli.daemon_docs``), so a cold command at 1,000 documents does not rebuild them.
  ``GITQUARRY_FAST=local`` never asks it.
- Any error (a bad value, an unknown repository, a storage fault) makes :func:`try_fast_docs`
  return ``False`` before anything was written, so the Typer app runs the command again and
  prints its own message and exit code: help, errors and exit codes stay exactly the Typer
  app's.

``tests/surfaces/test_fast_docs_cli.py`` runs both paths over many command lines and
compares stdout, stderr and exit code byte for byte.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: the fast path imports as little as it can
if TYPE_CHECKING:
    from typing import Any

#: ``repo-docs search``'s options that take a value: every spelling → its parameter
VALUE_OPTIONS: dict[str, str] = {
    "--repo": "repo",
    "--registration-id": "registration_id",
    "--source-registration-id": "source_id",
    "--source-registration-generation": "generation",
    "--revision": "revision",
    "--mode": "mode",
    "--limit": "limit",
    "--min-score": "min_score",
    "--max-tokens": "max_tokens",
}
#: ``repo-docs search``'s flags: every spelling → (parameter, value it sets)
FLAG_OPTIONS: dict[str, tuple[str, bool]] = {
    "--include-worktree": ("include_worktree", True),
    "--diverse": ("diverse", True),
    "--explain": ("explain", True),
    "--json": ("json_output", True),
}
_INT_PARAMS = ("generation", "limit", "max_tokens")
#: every parameter of ``search_cmd`` with its default (QUERY has none)
DEFAULTS: dict[str, Any] = {
    "query": None, "repo": None, "registration_id": None, "source_id": None,
    "generation": None, "revision": None, "mode": None, "limit": None,
    "include_worktree": False, "diverse": False, "min_score": None, "explain": False,
    "max_tokens": None, "json_output": False,
}


def parse_docs_search(argv: list[str]) -> dict[str, Any] | None:
    """``argv`` (without the program name) as the parameters ``search_cmd`` would receive
    (every key of :data:`DEFAULTS`), or None when the Typer app must read it (see the
    module docstring)."""
    from gitquarry.cli.fast import read_numbers, scan_command_line

    if len(argv) < 3 or argv[0] != "repo-docs" or argv[1] != "search":
        return None
    scanned = scan_command_line(argv[2:], FLAG_OPTIONS, VALUE_OPTIONS)
    if scanned is None:
        return None
    positional, values = scanned
    if len(positional) != 1 or values.get("json_output") is not True:
        return None
    if not read_numbers(values, _INT_PARAMS):
        return None
    return {**DEFAULTS, **values, "query": positional[0]}


#: every wire field → the types its value may have (``bool`` only where listed)
_FIELDS: dict[str, tuple[type, ...]] = {
    "query": (str,), "repo": (str, type(None)), "registration_id": (str, type(None)),
    "source_id": (str, type(None)), "generation": (int, type(None)),
    "revision": (str, type(None)), "mode": (str, type(None)), "limit": (int, type(None)),
    "include_worktree": (bool,), "diverse": (bool,), "min_score": (float, type(None)),
    "explain": (bool,), "max_tokens": (int, type(None)), "json_output": (bool,),
}


def params_from_wire(data: Any) -> dict[str, Any]:
    """The inverse of sending :func:`parse_docs_search`'s dict as JSON.

    :raises ValueError: not an object, a key unknown or missing, a value of the wrong type."""
    if not isinstance(data, dict) or set(data) != set(_FIELDS):
        raise ValueError("not a repo-docs search request")
    for name, value in data.items():
        types = _FIELDS[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ValueError(f"{name}: wrong type")
    return dict(data)


#: the daemon's request name for a docs search (``cli.daemon_docs``)
OP = "search.docs"


def _daemon_may_answer() -> bool:
    """False when an answer could depend on this process's working directory: a relative
    ``GITQUARRY_CONFIG``, ``HOME`` or ``XDG_*`` path (the daemon's directory is another)."""
    import os

    for key, value in os.environ.items():
        if (key == "GITQUARRY_CONFIG" or key == "HOME" or key.startswith("XDG_")) \
                and value.strip() and not value.startswith("/"):
            return False
    return True


def ask_daemon_docs(params: dict[str, Any]) -> str | None:
    """The running daemon's stdout text for ``params``, or None when no trusted daemon runs,
    it refuses, or the exchange fails (answer locally). The socket, trust and environment
    rules are ``cli.thin``'s (``cli/daemon_search.py``).

    :raises DaemonSearchError: the daemon ran the search and it failed."""
    from gitquarry.cli.thin import (
        LOCAL_AFTER,
        DaemonSearchError,
        _exchange,
        answer_environment,
        installation,
        private_socket,
    )

    if not _daemon_may_answer():
        return None
    path = private_socket()
    if path is None:
        return None
    version, module = installation()
    request = {"op": OP, "args": {"request": params, "version": version, "module": module,
                                  "env": answer_environment()}}
    try:
        reply = _exchange(path, request)
    except (OSError, ValueError):
        return None
    if reply is None:
        return None
    if not reply.get("ok"):
        raw_error = reply.get("error")
        error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
        if error.get("code") in LOCAL_AFTER:
            return None
        raise DaemonSearchError(str(error.get("code")))
    result = reply.get("result")
    text = result.get("stdout") if isinstance(result, dict) else None
    return text if isinstance(text, str) else None


def docs_answer(params: dict[str, Any], lexical: Any = None) -> dict[str, Any]:
    """The JSON answer ``repo-docs search`` prints for ``params`` (:func:`parse_docs_search`'s
    shape), by the Typer command's calls in its order. ``lexical``: a shared
    ``repo_docs.lexical.LexicalCache`` (the daemon's), else the service's own.

    :raises GitquarryError: whatever the search raises (the caller falls back)."""
    from gitquarry.config import load_config
    from gitquarry.query.docs import docs_request, search_docs
    from gitquarry.repo_docs.api import RepoDocsService
    from gitquarry.repo_docs.registry import Selector

    diverse = True if params["diverse"] else None  # cli_docs_request: a switch
    request = docs_request(
        Selector(params["repo"], params["registration_id"], params["source_id"],
                 params["generation"]),
        params["query"], revision=params["revision"], mode=params["mode"],
        limit=params["limit"], include_worktree=params["include_worktree"], diverse=diverse,
        min_score=params["min_score"], explain=params["explain"],
        max_tokens=params["max_tokens"])
    with RepoDocsService(load_config(None), lexical=lexical) as service:
        data = search_docs(service, request)
    if params["max_tokens"] is not None:
        from gitquarry.repo_docs.answers import fit_hits

        data = fit_hits(data, params["max_tokens"])
    return data


def render_docs(params: dict[str, Any], lexical: Any = None) -> str:
    """:func:`docs_answer` as the text written on stdout (newline included).
    :raises GitquarryError: as :func:`docs_answer`."""
    from gitquarry.cli.plain import json_text

    return json_text(docs_answer(params, lexical)) + "\n"


def try_fast_docs(argv: list[str]) -> bool:
    """Answer ``argv`` here when this path takes it (then exit); False when the Typer app
    must run it (nothing has been written then)."""
    from gitquarry.cli.fast import _enabled

    how = _enabled()
    if how is None:
        return False
    params = parse_docs_search(argv)
    if params is None:
        return False
    try:
        text = ask_daemon_docs(params) if how == "daemon" else None
        if text is None:
            from gitquarry.cli.plain import configure_logging

            configure_logging()  # the library's log lines as the Typer app has them
            text = render_docs(params)
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        sys.stderr.flush()
        sys.exit(130)
    except Exception:  # every error's message and exit code are the Typer path's
        return False
    sys.stdout.write(text)
    sys.stdout.flush()
    sys.exit(0)
