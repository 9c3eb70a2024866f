"""File watching with watchdog: which ``.git`` files matter, debouncing, polling fallback.

Per repository the daemon watches, never ``objects/`` (fetch and gc write thousands of files
there):

- the git common dir itself, not recursively: ``HEAD``, ``packed-refs``, ``FETCH_HEAD``;
- ``<common dir>/refs``, recursively: every loose ref;
- ``<common dir>/worktrees``, recursively: each linked worktree's ``HEAD``;

and per workspace, recursively, the architecture-graph and docs directories (graph reindex).
Only writes count (created, modified, deleted, moved, closed after writing): the daemon's own
reads of refs must not wake it.

When inotify runs out of watches or instances (``ENOSPC``/``EMFILE``) a directory is watched
by a ``PollingObserver`` instead (every ``[daemon] poll_s`` seconds) and a warning is kept for
``status``; the daemon never stops over it. The periodic reconcile catches anything missed.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

log = logging.getLogger(__name__)

GIT_ROOT_NAMES = frozenset({"HEAD", "packed-refs", "FETCH_HEAD"})
GRAPH_SUFFIXES = (".yml", ".yaml", ".md", ".markdown")
_EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
]
_LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE, errno.ENFILE, errno.ENOMEM)


@dataclass(frozen=True)
class WatchSpec:
    """One directory to watch. ``filter``: ``"git-root"`` (HEAD, packed-refs, FETCH_HEAD),
    ``"refs"`` (anything), ``"worktrees"`` (files named HEAD), ``"graph"`` (graph/doc
    files). ``kind`` is what a matching event triggers: ``"git"`` or ``"graph"``."""

    path: Path
    recursive: bool
    filter: str
    kind: str


def git_watch_specs(common_dir: Path) -> list[WatchSpec]:
    specs = [WatchSpec(common_dir, False, "git-root", "git")]
    for sub, name in (("refs", "refs"), ("worktrees", "worktrees")):
        if (common_dir / sub).is_dir():
            specs.append(WatchSpec(common_dir / sub, True, name, "git"))
    return specs


def _matches(spec: WatchSpec, path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if spec.filter == "git-root":
        return name in GIT_ROOT_NAMES and path.rsplit("/", 1)[0] == str(spec.path)
    if spec.filter == "worktrees":
        return name == "HEAD"
    if spec.filter == "graph":
        return name.endswith(GRAPH_SUFFIXES)
    return True


class _Handler(FileSystemEventHandler):
    def __init__(self, spec: WatchSpec, key: str, notify: Callable[[str, str], None]) -> None:
        self.spec = spec
        self.key = key
        self.notify = notify
        self.events = 0

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.events += 1
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        for p in paths:
            text = p.decode("utf-8", "surrogateescape") if isinstance(p, bytes) else str(p)
            if text and _matches(self.spec, text):
                self.notify(self.key, self.spec.kind)
                return


class Watcher:
    """All watches of the daemon, grouped by a key (the workspace ref).

    ``notify(key, kind)`` is called from watchdog's threads for each relevant event; keep it
    cheap (the debouncer's ``touch``).
    """

    def __init__(self, notify: Callable[[str, str], None], *, poll_s: float = 5.0,
                 observer_factory: Callable[[], BaseObserver] = Observer) -> None:
        self._notify = notify
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._poller: PollingObserver | None = None
        #: why the native API is not used at all (None: it is)
        self.native_error: str | None = None
        self._observer: BaseObserver | None = None
        try:
            observer = observer_factory()
            observer.start()
            self._observer = observer
        except OSError as exc:
            if exc.errno not in _LIMIT_ERRNOS:
                raise
            self.native_error = exc.strerror or str(exc)
            log.warning("inotify unavailable (%s): every directory is polled", exc)
        self._watches: dict[str, dict[WatchSpec, tuple[BaseObserver, ObservedWatch, _Handler]]] = {}
        #: per key: the warning explaining why some directories are polled
        self.warnings: dict[str, str] = {}

    def _polling(self) -> PollingObserver:
        if self._poller is None:
            self._poller = PollingObserver(timeout=self._poll_s)
            self._poller.start()
        return self._poller

    def set_watches(self, key: str, specs: list[WatchSpec]) -> None:
        """Watch exactly ``specs`` for ``key`` (adding and removing as needed)."""
        with self._lock:
            current = self._watches.setdefault(key, {})
            wanted = set(specs)
            for spec in list(current):
                if spec not in wanted:
                    observer, watch, _ = current.pop(spec)
                    self._unschedule(observer, watch)
            for spec in specs:
                if spec in current or not spec.path.is_dir():
                    continue
                handler = _Handler(spec, key, self._notify)
                try:
                    if self._observer is None:
                        raise OSError(errno.EMFILE, self.native_error or "inotify unavailable")
                    watch = self._observer.schedule(
                        handler, str(spec.path), recursive=spec.recursive,
                        event_filter=_EVENT_FILTER,
                    )
                    current[spec] = (self._observer, watch, handler)
                except OSError as exc:
                    if exc.errno not in _LIMIT_ERRNOS:
                        log.warning("cannot watch a directory of %s: %s", key, exc)
                        continue
                    self.warnings[key] = (
                        f"inotify limit reached ({exc.strerror or exc}); some directories are "
                        f"polled every {self._poll_s:g} s. Raise fs.inotify.max_user_watches / "
                        "max_user_instances to watch them with inotify"
                    )
                    log.warning("%s: %s", key, self.warnings[key])
                    poller = self._polling()
                    watch = poller.schedule(handler, str(spec.path), recursive=spec.recursive)
                    current[spec] = (poller, watch, handler)

    def _unschedule(self, observer: BaseObserver, watch: ObservedWatch) -> None:
        with contextlib.suppress(KeyError, OSError, RuntimeError):
            observer.unschedule(watch)

    def remove(self, key: str) -> None:
        with self._lock:
            for observer, watch, _ in self._watches.pop(key, {}).values():
                self._unschedule(observer, watch)
            self.warnings.pop(key, None)

    def mode(self, key: str) -> str:
        """``inotify`` (or the platform's native API), ``polling``, ``mixed`` or ``none``."""
        with self._lock:
            entries = self._watches.get(key, {}).values()
            observers = {o is self._observer for o, _, _ in entries}
        if not observers:
            return "none"
        if observers == {True}:
            return "native"
        return "polling" if observers == {False} else "mixed"

    def event_count(self, key: str) -> int:
        with self._lock:
            return sum(h.events for _, _, h in self._watches.get(key, {}).values())

    def stop(self) -> None:
        for obs in (self._observer, self._poller):
            if obs is not None:
                obs.stop()
        for obs in (self._observer, self._poller):
            if obs is not None:
                obs.join(timeout=5)


class Debouncer:
    """Calls ``fire(key)`` once a key has seen no ``touch`` for ``delay_s`` seconds, so a
    fetch or gc storm of any length ends in one call. ``max_delay_s`` (default: none) caps
    the wait under a continuous stream of touches; the daemon leaves it uncapped because its
    periodic reconcile already bounds how stale a busy repository gets. ``touch`` is O(1)."""

    def __init__(self, fire: Callable[[Any], None], *, delay_s: float,
                 max_delay_s: float | None = None) -> None:
        self._fire = fire
        self.delay_s = delay_s
        self.max_delay_s = max_delay_s if max_delay_s is not None else float("inf")
        self._pending: dict[Hashable, tuple[float, float]] = {}
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="gitquarry-debounce", daemon=True)
        self._thread.start()

    def touch(self, key: Hashable) -> None:
        now = time.monotonic()
        with self._cond:
            first = self._pending.get(key, (now, 0.0))[0]
            self._pending[key] = (first, min(now + self.delay_s, first + self.max_delay_s))
            self._cond.notify()

    def pending(self) -> list[Hashable]:
        with self._cond:
            return list(self._pending)

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                now = time.monotonic()
                due = [k for k, (_, deadline) in self._pending.items() if deadline <= now]
                for k in due:
                    del self._pending[k]
                if not due:
                    wait = min((d for _, d in self._pending.values()), default=now + 60) - now
                    self._cond.wait(max(0.005, wait))
                    continue
            for k in due:
                try:
                    self._fire(k)
                except Exception:
                    log.exception("handling settled changes of %s failed", k)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=5)
