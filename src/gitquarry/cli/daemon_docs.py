"""The daemon's ``search.docs`` request: ``gitquarry repo-docs search … --json`` answered by
the running daemon's warm process, byte for byte what the command would print itself
(issue 21 §5).

Request: ``{"op": "search.docs", "args": {"request": <cli.fast_docs.parse_docs_search's
dict>, "version": …, "module": …, "env": {…}}}``; the admission rules are
``cli.daemon_search``'s (the same gitquarry installation and the same environment for
everything an answer reads, else ``search_refused`` and the client answers locally). Reply:
``{"ok": true, "final": true, "result": {"stdout": TEXT, "warnings": []}}``.

How it answers: ``cli.fast_docs.render_docs``, the client's own function, with a new
``RepoDocsService`` per request (the configuration, registry, revision and cache are read
again, as a fresh command reads them), sharing one ``repo_docs.lexical.LexicalCache`` across
requests: the in-memory full-text tables of a revision (keyed by git store, commit, policy
hash, chunk policy and overlay digest, bounded by ``[docs] lexical_cache_bytes``), which is
what a cold command spends most of its time building. They are derived from the blobs and
live only in this process's memory (nothing is written to disk). Trust: as
``cli.daemon_search`` (a private socket, a peer of this uid; the answer is not redacted).
"""

from __future__ import annotations

import threading
from typing import Any

from gitquarry.cli.fast_docs import OP

_lock = threading.Lock()
#: (bound in bytes, the shared cache): recreated when ``[docs] lexical_cache_bytes`` changes
_shared: list[Any] = []


def shared_lexical(max_bytes: int) -> Any:
    """The process's one ``LexicalCache`` of bound ``max_bytes``."""
    from gitquarry.repo_docs.lexical import LexicalCache

    with _lock:
        if not _shared or _shared[0] != max_bytes:
            _shared[:] = [max_bytes, LexicalCache(max_bytes)]
        return _shared[1]


def handle(daemon: Any, args: dict[str, Any], send: Any) -> None:
    """Answer one ``search.docs`` request on ``send`` (see the module docstring)."""
    from gitquarry.cli.daemon_search import admission
    from gitquarry.cli.fast_docs import params_from_wire, render_docs
    from gitquarry.config import load_config
    from gitquarry.errors import GitquarryError, SearchRefusedError

    try:
        params = params_from_wire(args.get("request"))
    except ValueError as exc:
        send(daemon._error(SearchRefusedError(f"unreadable request ({exc})")))
        return
    why = admission(args)
    if why is not None:
        send(daemon._error(SearchRefusedError(why)))
        return
    try:
        lexical = shared_lexical(load_config(None).docs.lexical_cache_bytes)
        text = render_docs(params, lexical)
    except GitquarryError as exc:
        send(daemon._error(exc))
        return
    send({"ok": True, "final": True, "result": {"stdout": text, "warnings": []}})


#: the requests this module answers (added to ``cli.daemon_search.OPS`` by ``daemon run``)
OPS = {OP: handle}
