"""Test-only fault points for real gitquarry processes; never installed.

A test puts this directory on ``PYTHONPATH`` of a daemon (or any ``python -m gitquarry``) it
starts, so Python imports it as ``sitecustomize`` before anything else. Nothing in
``src/`` knows about it. It reads:

- ``GQ_TEST_FAKE_EMBEDDER=1``: register the deterministic ``fake`` embedding provider for
  the life of the process (``fake_provider_registered`` does so for a ``with`` block).
- ``GQ_TEST_PAUSE=<point>:<n>`` with ``GQ_TEST_PAUSE_FILE=<path>``: the ``n``-th time the
  process reaches ``point``, write its pid to ``path`` and sleep forever (the test then
  kills it with SIGKILL). Points:

  - ``gc_orphans``: inside a retention transaction, after its deletions, before its commit
    (``service.docs_jobs._drop_orphans``: the count/age pass is the 1st, each set evicted
    for the byte ceiling one more);
  - ``gc_checkpoints``: after the database part of retention committed, before checkpoint
    files are pruned;
  - ``docs_membership``: a revision set's membership was committed, its state is still
    ``building``.
- ``GQ_TEST_LINGER_S=<seconds>``: when the process exits (``atexit``: after the daemon
  released its lock and removed its socket), sleep that long first: a process that has let
  go of everything but has not exited yet.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

if os.environ.get("GQ_TEST_LINGER_S"):
    import atexit

    atexit.register(time.sleep, float(os.environ["GQ_TEST_LINGER_S"]))

if os.environ.get("GQ_TEST_FAKE_EMBEDDER"):
    from gitquarry.embedding.fake import FAKE_PROVIDER
    from gitquarry.embedding.registry import register_provider

    register_provider(FAKE_PROVIDER, replace=True)

_SPEC = os.environ.get("GQ_TEST_PAUSE", "")
_MARKER = os.environ.get("GQ_TEST_PAUSE_FILE", "")
if _SPEC and _MARKER:
    _POINT, _, _NTH = _SPEC.partition(":")
    _SEEN = [0]

    def _pause() -> None:
        _SEEN[0] += 1
        if _SEEN[0] == int(_NTH or "1"):
            Path(_MARKER).write_text(str(os.getpid()), encoding="utf-8")
            while True:
                time.sleep(60)

    if _POINT == "gc_orphans":
        from gitquarry.service import docs_jobs

        _drop = docs_jobs._drop_orphans

        def _drop_then_pause(conn: Any, report: Any) -> None:
            _drop(conn, report)
            _pause()

        docs_jobs._drop_orphans = _drop_then_pause  # type: ignore[assignment]
    elif _POINT == "gc_checkpoints":
        from gitquarry.service import docs_jobs

        _prune = docs_jobs._prune_checkpoints

        def _pause_then_prune(*args: Any) -> None:
            _pause()
            _prune(*args)

        docs_jobs._prune_checkpoints = _pause_then_prune  # type: ignore[assignment]
    elif _POINT == "docs_membership":
        from gitquarry.repo_docs.cache import DocsCache

        _write = DocsCache.write_membership

        def _write_then_pause(self: Any, *args: Any, **kwargs: Any) -> None:
            _write(self, *args, **kwargs)
            _pause()

        DocsCache.write_membership = _write_then_pause  # type: ignore[method-assign]
