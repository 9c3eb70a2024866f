"""Run a producer one step ahead on a background thread, so git and SQLite overlap.

The indexer reads commits from ``git log`` (a subprocess plus Python parsing) and writes them
to SQLite (which releases the GIL while it works). ``prefetch`` lets the next batch be read
while the current one is written.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import TypeVar

T = TypeVar("T")

_POLL_S = 0.1


def prefetch(items: Iterator[T], depth: int = 1) -> Generator[T, None, None]:
    """Yield the items of ``items``, produced on a worker thread up to ``depth`` ahead.

    An exception raised by the producer is re-raised here, in the consumer, at the point the
    failed item would have been yielded. Closing this generator (or an exception in the
    consumer) stops the producer and closes ``items`` on the worker thread (so a generator
    holding a subprocess cleans it up).
    """
    q: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(kind: str, value: object) -> bool:
        while not stop.is_set():
            try:
                q.put((kind, value), timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in items:
                if not put("item", item):
                    return
            put("done", None)
        except BaseException as exc:  # handed to the consumer
            put("error", exc)
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=run, name="gitquarry-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = q.get()
            if kind == "item":
                yield value  # type: ignore[misc]
            elif kind == "done":
                return
            else:
                assert isinstance(value, BaseException)
                raise value
    finally:
        stop.set()
        while True:
            try:
                q.get_nowait()
            except queue.Empty:
                break
        worker.join(timeout=30)
